/**
 * The parsed query: a small tree that both the in-memory evaluator and a future OpenSearch
 * translation read. Leaves hold one field each; a wire leaf naming several fields becomes an `and`
 * of single-field leaves, and `{"$match": {}}` becomes `all`.
 */
export type Scalar = string | number | boolean;

export type Query =
  | { readonly op: 'all' }
  /** Strings: equal ignoring case; numbers: numeric equality, numeric strings included; booleans: equal. */
  | { readonly op: 'match'; readonly field: string; readonly value: Scalar }
  /** Exact: same type and value. */
  | { readonly op: 'term'; readonly field: string; readonly value: Scalar }
  /** Exact, any of the values. */
  | { readonly op: 'terms'; readonly field: string; readonly values: readonly Scalar[] }
  /** Numbers and numeric strings, compared as numbers. */
  | { readonly op: 'range'; readonly field: string; readonly bounds: RangeBounds }
  /** Some value other than null is present. */
  | { readonly op: 'exists'; readonly field: string }
  | { readonly op: 'and'; readonly clauses: readonly Query[] }
  | { readonly op: 'or'; readonly clauses: readonly Query[] }
  | { readonly op: 'not'; readonly clause: Query };

export interface RangeBounds {
  readonly gt?: number;
  readonly gte?: number;
  readonly lt?: number;
  readonly lte?: number;
}

export const MATCH_ALL: Query = { op: 'all' };
