import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoDbLocal } from '@svc/local';
import type { TestProject } from 'vitest/node';
import { selfSignedCertificate } from '../../packages/outbound/src/testing/certificates';
import { startRecording } from '../iam/recorder';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * One in-memory DynamoDB Local for the whole run; every test file gets its own table in it. A
 * throwaway certificate for 127.0.0.1 lets test webhook receivers speak https: it is trusted
 * through NODE_EXTRA_CA_CERTS, set here before the test processes start (Node reads it once).
 */
export default async function setup(project: TestProject) {
  // This run's AWS calls, in a directory of its own (test/iam/conformance.ts reads them after the run).
  startRecording();
  const dynamo = await startDynamoDbLocal({});
  project.provide('dynamoEndpoint', dynamo.endpoint);
  const tls = selfSignedCertificate('127.0.0.1');
  // One file per run: concurrent runs on one machine must not trust each other's certificates.
  const certDir = mkdtempSync(join(tmpdir(), 'svc-test-tls-'));
  const certFile = join(certDir, 'receiver-cert.pem');
  writeFileSync(certFile, tls.cert);
  process.env.NODE_EXTRA_CA_CERTS = certFile;
  project.provide('receiverTls', tls);
  return async () => {
    rmSync(certDir, { recursive: true, force: true });
    await dynamo.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    receiverTls: { cert: string; key: string };
  }
}
