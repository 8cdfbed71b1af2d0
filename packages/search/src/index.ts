/**
 * The search language of `POST /search/*`: parse a request
 * body once (with its validation errors), then run it on PostgreSQL (`runSqlSearch` in `@svc/search/sql`), compiled to
 * SQL with every value bound. Limits: SEARCH_LIMITS.
 */
export type { Aggregation } from './aggregation-request';
export type { FieldType } from './field-schemas';
export { SEARCH_LIMITS } from './limits';
export type { Query, RangeBounds, Scalar } from './query';
export { parseSearchRequest, type SearchRequest } from './search-request';
export type {
  AggregationResult,
  SearchDocument,
  SearchResponse,
  SumBucket,
  TermBucket,
} from './search-response';
export { searchResponseSchema } from './search-response';
export type { SearchOptions } from './searchable-fields';
export { DEFAULT_SORT, type SortDirection, type SortKey, type SortValue } from './sort-request';
