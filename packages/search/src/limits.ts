/**
 * Bounds of the search language. A request beyond any of them is refused with a ValidationError
 * naming the offending property, before any recursion or allocation proportional to the excess:
 * the body comes from callers, and a deep or wide query must not blow the stack or the CPU budget.
 */
export const SEARCH_LIMITS = {
  /** Largest page (`size`); also the bound of `from + size`. */
  maxWindow: 10_000,
  defaultSize: 10,
  /**
   * Nesting of `$and`/`$or`/`$not`: the top clause is depth 1. Evaluation recurses once per level,
   * so this keeps both parsing and matching far from the stack limit.
   */
  maxQueryDepth: 32,
  /**
   * Clauses in one query: every operator object counts one, and so does every field condition and
   * every `$terms` value inside a leaf. Bounds the work per document.
   */
  maxQueryClauses: 1_000,
  /** Dotted field paths: total length and number of segments. */
  maxPathLength: 256,
  maxPathSegments: 16,
  maxSortKeys: 8,
  maxAggregations: 20,
  maxAggregationNameLength: 128,
  /** Buckets a term aggregation may return (`size`), default 10. */
  maxTermBuckets: 10_000,
  defaultTermBuckets: 10,
  /** Paths in `includes`, and separately in `excludes`. */
  maxProjectionPaths: 100,
} as const;
