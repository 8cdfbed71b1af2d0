import { PGlite } from '@electric-sql/pglite';
import { migrate, pgliteDialect } from '@svc/sql';
import { Kysely, sql } from 'kysely';

/**
 * For the engine's tests: PostgreSQL (PGlite, in memory) with the service's migrations and one
 * table of documents shaped like the projections' (organisation, uuid, account, document), plus
 * the typed columns a test names.
 */
export async function openTestEngine(
  table: string,
  typedColumns = '',
): Promise<{
  db: Kysely<unknown>;
  close: () => Promise<void>;
}> {
  const pg = await PGlite.create();
  const db = new Kysely<unknown>({ dialect: pgliteDialect(async () => pg) });
  await migrate(db);
  await sql`CREATE TABLE ${sql.table(table)} (
    organisation_uuid text COLLATE "C" NOT NULL,
    uuid text COLLATE "C" NOT NULL,
    account_uuid text COLLATE "C" NOT NULL,
    ${sql.raw(typedColumns ? `${typedColumns},` : '')}
    document jsonb NOT NULL,
    PRIMARY KEY (organisation_uuid, uuid))`.execute(db);
  return { db, close: () => pg.close() };
}
