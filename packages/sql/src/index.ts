/**
 * The search engine's SQL: one Kysely client over PostgreSQL, PGlite in this process locally and
 * in tests, Aurora through the RDS Data API in AWS; the schema's migrations and their runner.
 */
export { closeSearchDb, pgliteDataDir, type SearchDatabase, searchDb } from './client';
export { toDataApiParameter, toNamedPlaceholders } from './data-api-dialect';
export { migrate } from './migrate';
export { MIGRATIONS, type Migration } from './migrations';
export { pgliteDialect } from './pglite-dialect';
