import { join } from 'node:path';
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import type { PGlite } from '@electric-sql/pglite';
import { sdkClient } from '@svc/core';
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

function openPGlite(dataDir: string | undefined): { open: () => Promise<PGlite>; close: () => Promise<void> } {
  let opening: Promise<PGlite> | undefined;
  const open = () => {
    opening ??= (async () => {
      const { PGlite } = await import('@electric-sql/pglite');
      const pg = await PGlite.create(dataDir ? { dataDir } : {});
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
  let migrated: Promise<unknown> | undefined;
  const open = async () => {
    const pg = await pglite.open();
    migrated ??= migrate(new Kysely<unknown>({ dialect: pgliteDialect(async () => pg) }));
    await migrated;
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
