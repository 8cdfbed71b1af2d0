import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDynamoDbLocal } from '@svc/local';
import type { TestProject } from 'vitest/node';
import { selfSignedCertificate } from '../../packages/outbound/src/testing/certificates';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * One in-memory DynamoDB Local for the whole run; every test file gets its own table in it. A
 * throwaway certificate for 127.0.0.1 lets test webhook receivers speak https: it is trusted
 * through NODE_EXTRA_CA_CERTS, set here before the test processes start (Node reads it once).
 */
export default async function setup(project: TestProject) {
  const dynamo = await startDynamoDbLocal({});
  project.provide('dynamoEndpoint', dynamo.endpoint);
  const tls = selfSignedCertificate('127.0.0.1');
  const certFile = join(process.cwd(), 'node_modules', '.test-receiver-cert.pem');
  writeFileSync(certFile, tls.cert);
  process.env.NODE_EXTRA_CA_CERTS = certFile;
  project.provide('receiverTls', tls);
  return async () => {
    await dynamo.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    receiverTls: { cert: string; key: string };
  }
}
