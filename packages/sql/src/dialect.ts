import {
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely';

/**
 * A Kysely dialect for PostgreSQL over a connection of ours. The search code runs single
 * statements only (PGlite is one connection, the Data API has no sessions without a transaction
 * id), so interactive transactions are refused rather than pretended.
 */
export function postgresDialect(connect: () => Promise<DatabaseConnection>, destroy: () => Promise<void>): Dialect {
  const driver: Driver = {
    init: async () => undefined,
    acquireConnection: connect,
    beginTransaction: async () => {
      throw new Error('Interactive transactions are not used on the search engine');
    },
    commitTransaction: async () => undefined,
    rollbackTransaction: async () => undefined,
    releaseConnection: async () => undefined,
    destroy,
  };
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => driver,
    createIntrospector: (db: Kysely<unknown>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}
