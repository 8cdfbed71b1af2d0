/**
 * The search engine's SQL: one Kysely client over PostgreSQL, PGlite in this process locally and
 * in tests, Aurora through the RDS Data API in AWS; the schema's migrations and their runner; the
 * projections that fill it from the table (write path, stream projector, rebuild).
 */
export {
  closeSearchDb,
  NO_ROWS_ORGANISATION,
  pgliteDataDir,
  type SearchDatabase,
  searchDb,
  warmUpOnOpen,
} from './client';
export { toDataApiParameter, toNamedPlaceholders } from './data-api-dialect';
export { migrate } from './migrate';
export { MIGRATIONS, type Migration } from './migrations';
export { pgliteDialect } from './pglite-dialect';
export {
  groupCommit,
  inSearchEngine,
  itemsOf,
  MAX_ROWS_PER_STATEMENT,
  markFilled,
  projectItems,
  type SearchProjection,
  unfilledProjections,
} from './projection';
export { progressBar, type RebuildOptions, type RebuildSummary, rebuildSearch } from './rebuild';
export { streamProjector } from './stream-projector';
