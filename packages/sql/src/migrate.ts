import { type Kysely, sql } from 'kysely';
import { MIGRATIONS, type Migration } from './migrations';

/**
 * Brings the schema up to date: the versions not yet recorded in `svc_schema_migrations`, in
 * order. Run by the deploy (a custom resource) in AWS and at first use locally; statements are
 * safe to repeat, so two runners racing end in the same schema.
 */
export async function migrate(db: Kysely<unknown>, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  await sql`CREATE TABLE IF NOT EXISTS svc_schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`.execute(db);
  const applied = await sql<{ version: number }>`SELECT version FROM svc_schema_migrations`.execute(db);
  const done = new Set(applied.rows.map((row) => Number(row.version)));
  const ran: number[] = [];
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (done.has(migration.version)) continue;
    for (const statement of migration.statements) await sql.raw(statement).execute(db);
    await sql`INSERT INTO svc_schema_migrations (version, name) VALUES (${migration.version}, ${migration.name})
      ON CONFLICT (version) DO NOTHING`.execute(db);
    ran.push(migration.version);
  }
  return ran;
}
