import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoDbLocal } from '@svc/local';
import type { TestProject } from 'vitest/node';
import { selfSignedCertificate } from '../../packages/outbound/src/testing/certificates';
import { startRecording } from '../iam/recorder';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * What a run shares across its projects (vitest.config.ts), made once however many projects ask:
 * vitest runs each project's global setup in its main process, each project loading this module
 * afresh, so the once-only state lives on `globalThis`.
 *
 * - A throwaway certificate for 127.0.0.1, so test webhook receivers speak https: trusted
 *   through NODE_EXTRA_CA_CERTS, set before the test processes start (Node reads it once), one
 *   file per run (concurrent runs on one machine must not trust each other's certificates).
 * - For projects that use the table: one in-memory DynamoDB Local (every test file gets its own
 *   table in it), and this run's AWS calls recorded in a directory of their own
 *   (test/iam/conformance.ts reads them after the run).
 * - For the same projects: an empty search engine's cluster, dumped once (made while DynamoDB
 *   Local starts), which each test file's in-memory engine loads instead of creating its own
 *   (`SVC_SEARCH_EMPTY_DUMP`, @svc/sql's client.ts): about 1.5 s less per file that searches or
 *   projects, and per `pnpm start` in memory. Each engine still runs the migrations.
 */
interface Shared {
  tls?: { cert: string; key: string; dir: string };
  dynamo?: Promise<{ endpoint: string; stop: () => Promise<void> }>;
  searchDump?: Promise<{ file: string; dir: string }>;
  users: number;
}

const holder = globalThis as { __svcTestRun?: Shared };
holder.__svcTestRun ??= { users: 0 };
const shared: Shared = holder.__svcTestRun;

function tls(): { cert: string; key: string } {
  if (!shared.tls) {
    const made = selfSignedCertificate('127.0.0.1');
    const dir = mkdtempSync(join(tmpdir(), 'svc-test-tls-'));
    writeFileSync(join(dir, 'receiver-cert.pem'), made.cert);
    process.env.NODE_EXTRA_CA_CERTS = join(dir, 'receiver-cert.pem');
    shared.tls = { ...made, dir };
  }
  return { cert: shared.tls.cert, key: shared.tls.key };
}

/** A new in-memory engine's cluster as `dumpDataDir()` writes it, in a file of this run's. */
async function emptySearchDump(): Promise<{ file: string; dir: string }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const pg = await PGlite.create();
  const dump = await pg.dumpDataDir('none');
  await pg.close();
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-search-'));
  const file = join(dir, 'empty-cluster.tar');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  return { file, dir };
}

async function release(): Promise<void> {
  shared.users -= 1;
  if (shared.users > 0) return;
  const dynamo = shared.dynamo;
  shared.dynamo = undefined;
  if (dynamo) await (await dynamo).stop();
  const searchDump = shared.searchDump;
  shared.searchDump = undefined;
  if (searchDump) rmSync((await searchDump).dir, { recursive: true, force: true });
  if (shared.tls) rmSync(shared.tls.dir, { recursive: true, force: true });
  shared.tls = undefined;
}

/** Integration, infra and end-to-end projects: the table, the recording and the certificate. */
export default async function setup(project: TestProject) {
  shared.users += 1;
  project.provide('receiverTls', tls());
  shared.dynamo ??= (async () => {
    startRecording();
    return startDynamoDbLocal({});
  })();
  shared.searchDump ??= emptySearchDump();
  // Set before the test processes start: they, and the processes they start, inherit it.
  process.env.SVC_SEARCH_EMPTY_DUMP = (await shared.searchDump).file;
  project.provide('dynamoEndpoint', (await shared.dynamo).endpoint);
  return release;
}

/**
 * The unit project: the certificate, and a DynamoDB endpoint nothing listens on (the discard
 * port), so a unit test that reaches the table fails instead of quietly needing one.
 */
export async function unitSetup(project: TestProject) {
  shared.users += 1;
  project.provide('receiverTls', tls());
  project.provide('dynamoEndpoint', 'http://127.0.0.1:9');
  return release;
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    receiverTls: { cert: string; key: string };
  }
}
