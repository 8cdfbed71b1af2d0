import { deferred } from '@svc/core';
import * as z from 'zod';
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

/**
 * The response schema of a `POST /search/*` route whose hits are `hit` documents (each hit may
 * carry only some fields: `includes`/`excludes` choose them). `deferred` like every response
 * schema: only the API description builds it.
 */
export function searchResponseSchema<Hit extends z.ZodObject>(hit: Hit | z.ZodLazy<Hit>) {
  return deferred(() => {
    const scalar = z.union([z.string(), z.number(), z.boolean()]);
    const hitObject = hit instanceof z.ZodLazy ? hit.unwrap() : hit;
    return z.object({
      summary: z.object({
        hits: z.number().int().describe('Every document the query matches, not the page size'),
        last_sort_values: z
          .array(z.union([scalar, z.null()]))
          .describe('Send back as `search_after` for the next page'),
      }),
      hits: z.array(hitObject.partial()),
      aggregations: z.record(
        z.string(),
        z.union([
          z.array(z.object({ key: scalar, doc_count: z.number().int() })),
          z.array(z.object({ key: z.literal('sum'), value: z.union([z.number(), z.string()]) })),
        ]),
      ),
    });
  });
}
