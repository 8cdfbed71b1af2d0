/**
 * The search language of `POST /search/*` (contract section 7, interface 4.3), storage-free:
 * parse a request body once, then evaluate it over any documents. Limits: SEARCH_LIMITS.
 */
export type { Aggregation } from './aggregation-request';
export type { AggregationResult, SumBucket, TermBucket } from './aggregations';
export { executeSearch, type SearchResponse } from './execute-search';
export type { FieldType } from './field-schemas';
export { SEARCH_LIMITS } from './limits';
export type { Query, RangeBounds, Scalar } from './query';
export { compileQuery, type DocumentPredicate, matchesQuery, type SearchDocument } from './query-compiler';
export { parseSearchRequest, type SearchRequest } from './search-request';
export type { SearchOptions } from './searchable-fields';
export { DEFAULT_SORT, type SortDirection, type SortKey, type SortValue } from './sort-request';
export type { ColumnKind, Sql, SqlSearchSource } from './sql/compile';
export { grantScope, runSqlSearch } from './sql/execute';
export { storableText } from './sql/json-path';
