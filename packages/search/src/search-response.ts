import type { Scalar } from './query';
import type { SortValue } from './sort-request';

/** A document as searched and returned: the resource as its GET returns it. */
export type SearchDocument = Readonly<Record<string, unknown>>;

export interface TermBucket {
  readonly key: Scalar;
  readonly doc_count: number;
}

export interface SumBucket {
  readonly key: 'sum';
  /** A number when exact as a double, otherwise the exact decimal string (see ExactSum). */
  readonly value: number | string;
}

export type AggregationResult = readonly TermBucket[] | readonly SumBucket[];

/** The answer of `POST /search/*`. */
export interface SearchResponse {
  summary: {
    /** Every document the query matches, not the page size. */
    hits: number;
    /** The sort tuple of the page's last hit, to send back as `search_after`; [] for an empty page. */
    last_sort_values: SortValue[];
  };
  hits: SearchDocument[];
  aggregations: Record<string, AggregationResult>;
}
