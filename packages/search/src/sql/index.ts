/**
 * The search language on PostgreSQL: a parsed request compiled to SQL with every value bound and
 * run over a source (`runSqlSearch`). Apart from the package's main entry (the parser), so that a
 * function loads the query builder only where it searches: a route that parses a search imports
 * this behind `import()`, and its bundle keeps it out of the cold start.
 */
export type { ColumnKind, Sql, SqlSearchSource } from './compile';
export { grantScope, runSqlSearch } from './execute';
export { storableDocument, storableText } from './json-path';
