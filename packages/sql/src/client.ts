import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import type { PGlite } from '@electric-sql/pglite';
import { logger, sdkClient } from '@svc/core';
import { Kysely } from 'kysely';
import { dataApiDialect } from './data-api-dialect';
import { migrate } from './migrate';
import { pgliteDialect } from './pglite-dialect';

/**
 * The search engine's one client, chosen by configuration:
 * - `SVC_SEARCH_CLUSTER_ARN`, `SVC_SEARCH_SECRET_ARN` (and `SVC_SEARCH_DATABASE`, default `svc`):
 *   Aurora PostgreSQL through the RDS Data API, as the CDK app sets them;
 * - otherwise PGlite in this process, its data under `<SVC_DATA_DIR>/search` (`.data/search`), or
 *   in memory with `SVC_DATA_DIR=:memory:`; its schema is migrated when it opens.
 *
 * The engine is PostgreSQL either way, with the same SQL and the same migrations.
 */
export type SearchDatabase = Kysely<unknown>;

/** One client per configuration (tests switch configurations and back; each keeps its data). */
const clients = new Map<string, { db: SearchDatabase; close: () => Promise<void> }>();

function configurationKey(env: NodeJS.ProcessEnv): string {
  return [env.SVC_SEARCH_CLUSTER_ARN, env.SVC_SEARCH_SECRET_ARN, env.SVC_SEARCH_DATABASE, env.SVC_DATA_DIR].join('|');
}

export function pgliteDataDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dataDir = env.SVC_DATA_DIR ?? '.data';
  return dataDir === ':memory:' ? undefined : join(dataDir, 'search');
}

/**
 * `SVC_SEARCH_EMPTY_DUMP`: a file holding `dumpDataDir()` of a freshly created in-memory engine,
 * which every in-memory engine of the process then starts from instead of creating its cluster
 * anew (PostgreSQL's initdb: about 1.5 s of a test file's start, where the dump loads in 0.3 s).
 * The test runs set it (test/support/global-setup.ts); the migrations run either way.
 */
const EMPTY_DUMP_VARIABLE = 'SVC_SEARCH_EMPTY_DUMP';

function openPGlite(dataDir: string | undefined): { open: () => Promise<PGlite>; close: () => Promise<void> } {
  let opening: Promise<PGlite> | undefined;
  const open = () => {
    opening ??= (async () => {
      const { PGlite } = await import('@electric-sql/pglite');
      const emptyDump = process.env[EMPTY_DUMP_VARIABLE];
      const pg = await PGlite.create(
        dataDir ? { dataDir } : emptyDump ? { loadDataDir: new Blob([readFileSync(emptyDump)]) } : {},
      );
      return pg;
    })();
    return opening;
  };
  return {
    open,
    close: async () => {
      if (opening) await (await opening).close();
    },
  };
}

/**
 * Searches the embedded engine runs once when it opens, after its migrations: a process's first
 * search otherwise pays for a cold engine (the planner's catalog caches empty, PostgreSQL's code
 * not yet compiled by the WebAssembly tiers) and cold code paths of ours, about 2.6× a warm
 * search in the bench. Each domain's search module (payments, subscriptions) exports its warm-up,
 * searches over an organisation that holds no rows (`NO_ROWS_ORGANISATION`), so a warm-up reads
 * no data and answers nothing; the composition root hands them over (`wireDomains` of @svc/api,
 * before the engine opens). Aurora keeps its caches in the server, across Lambda containers, and
 * runs none of these.
 */
const warmUps = new Map<string, (db: SearchDatabase) => Promise<unknown>>();

/** An organisation uuid no organisation has (version nibble 0): the warm-ups' scope. */
export const NO_ROWS_ORGANISATION = '00000000-0000-0000-0000-000000000000';

/** Registers (or replaces, by name) a warm-up of the embedded engine; see `warmUps`. */
export function warmUpOnOpen(name: string, warmUp: (db: SearchDatabase) => Promise<unknown>): void {
  warmUps.set(name, warmUp);
}

/** Runs the warm-ups one by one; a failing warm-up is logged and never fails the open. */
async function warmUp(db: SearchDatabase): Promise<void> {
  const began = performance.now();
  const warmed: string[] = [];
  for (const [name, run] of warmUps) {
    try {
      await run(db);
      warmed.push(name);
    } catch (error) {
      logger.warn('A search warm-up failed', { warmUp: name, error: String(error) });
    }
  }
  logger.debug('The search engine warmed up', { warmed, ms: Math.round(performance.now() - began) });
}

export function searchDb(env: NodeJS.ProcessEnv = process.env): SearchDatabase {
  const key = configurationKey(env);
  const known = clients.get(key);
  if (known) return known.db;
  const clusterArn = env.SVC_SEARCH_CLUSTER_ARN;
  const secretArn = env.SVC_SEARCH_SECRET_ARN;
  if (clusterArn && secretArn) {
    const db = new Kysely<unknown>({
      dialect: dataApiDialect({
        client: dataApiClient(),
        resourceArn: clusterArn,
        secretArn,
        database: env.SVC_SEARCH_DATABASE ?? 'svc',
      }),
    });
    clients.set(key, { db, close: () => db.destroy() });
    return db;
  }
  // A deployed function without the engine's address is a deployment error, never a local engine.
  if (env.AWS_LAMBDA_FUNCTION_NAME) throw new Error('SVC_SEARCH_CLUSTER_ARN / SVC_SEARCH_SECRET_ARN are not set');
  const pglite = openPGlite(pgliteDataDir(env));
  let ready: Promise<unknown> | undefined;
  const open = async () => {
    const pg = await pglite.open();
    ready ??= (async () => {
      const opened = new Kysely<unknown>({ dialect: pgliteDialect(async () => pg) });
      await migrate(opened);
      await warmUp(opened);
    })();
    await ready;
    return pg;
  };
  const db = new Kysely<unknown>({ dialect: pgliteDialect(open) });
  clients.set(key, { db, close: pglite.close });
  return db;
}

let rdsData: RDSDataClient | undefined;

function dataApiClient(): RDSDataClient {
  rdsData ??= sdkClient(new RDSDataClient({}));
  return rdsData;
}

/** Closes the engine (tests, shutdown); the next use opens it again. */
export async function closeSearchDb(): Promise<void> {
  const closing = [...clients.values()];
  clients.clear();
  await Promise.all(closing.map((client) => client.close()));
}
