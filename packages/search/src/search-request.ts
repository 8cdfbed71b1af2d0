import { deferred, ValidationError } from '@svc/core';
import * as z from 'zod';
import { type Aggregation, parseAggregations } from './aggregation-request';
import { isRecord } from './field-path';
import { fieldPathSchema } from './field-schemas';
import { SEARCH_LIMITS } from './limits';
import { DETAIL_CODES, Problems } from './problems';
import type { Query } from './query';
import { parseQuery } from './query-parser';
import { type FieldGuard, fieldGuard, type SearchOptions } from './searchable-fields';
import { DEFAULT_SORT, parseSearchAfter, type SortKey, type SortValue, sortKeySchema } from './sort-request';

export interface SearchRequest {
  readonly query: Query;
  readonly aggs: readonly Aggregation[];
  /** Never empty: the default sort when the request names none. The uuid tie-break is implicit. */
  readonly sort: readonly SortKey[];
  readonly size: number;
  readonly from: number;
  readonly includes: readonly string[];
  readonly excludes: readonly string[];
  /** One value per sort key, then the uuid: the previous page's `summary.last_sort_values`. */
  readonly searchAfter?: readonly SortValue[];
}

const projection = () => z.array(fieldPathSchema).max(SEARCH_LIMITS.maxProjectionPaths).nullish();

/**
 * The flat part of the body. `query` and `aggs` are only present here so that unknown keys can
 * be refused; they are parsed by hand (see query-parser.ts and aggregation-request.ts). Optional
 * fields take null as absent: JSON clients often send null for "not set". Like every schema of
 * the search language, `deferred`: built at the first search, not at a function's cold start.
 */
const requestBody = deferred(() =>
  z.strictObject({
    query: z.unknown().optional(),
    aggs: z.unknown().optional(),
    sort: z.array(sortKeySchema).max(SEARCH_LIMITS.maxSortKeys).nullish(),
    size: z.int().min(0).max(SEARCH_LIMITS.maxWindow).nullish(),
    from: z.int().min(0).max(SEARCH_LIMITS.maxWindow).nullish(),
    includes: projection(),
    excludes: projection(),
    search_after: z.array(z.unknown()).nullish(),
  }),
);

/**
 * Validates a search request body. Every fault is reported at
 * once, each naming its property (`query.$range.amount.value.gt`, `sort.0.direction`); anything
 * invalid throws ValidationError and nothing else is thrown.
 */
export function parseSearchRequest(body: unknown, options: SearchOptions = {}): SearchRequest {
  const problems = new Problems();
  const allowed = fieldGuard(options);
  const parsed = requestBody.safeParse(body, { reportInput: true });
  if (!parsed.success) problems.addIssues([], parsed.error.issues);
  const fields = isRecord(body) ? body : undefined;
  const query = fields && parseQuery(fields.query, allowed, problems);
  const aggs = fields && parseAggregations(fields.aggs, allowed, problems);
  const paging = parsed.success ? parsePaging(parsed.data, allowed, problems) : undefined;
  problems.throwIfAny();
  if (!query || !aggs || !paging) {
    // Every failed branch above records a problem, so this is a guard, not a path.
    throw new ValidationError('Invalid search request');
  }
  return { query, aggs, ...paging };
}

type Paging = Omit<SearchRequest, 'query' | 'aggs'>;

function parsePaging(data: z.infer<typeof requestBody>, allowed: FieldGuard, problems: Problems): Paging | undefined {
  const sort = data.sort ?? [];
  for (const [index, key] of sort.entries()) {
    if (!allowed(key.field)) {
      problems.add(['sort', index, 'field'], DETAIL_CODES.invalidChoice, `The field ${key.field} cannot be sorted on`);
    }
  }
  const size = data.size ?? SEARCH_LIMITS.defaultSize;
  const from = data.from ?? 0;
  if (from + size > SEARCH_LIMITS.maxWindow) {
    const message = `from + size must not exceed ${SEARCH_LIMITS.maxWindow}; page deeper with search_after`;
    problems.add(['from'], DETAIL_CODES.tooBig, message);
  }
  const effectiveSort = sort.length > 0 ? sort : DEFAULT_SORT;
  const searchAfter = data.search_after && parseSearchAfter(data.search_after, effectiveSort, from, problems);
  if (problems.count > 0) return undefined;
  return {
    sort: effectiveSort,
    size,
    from,
    includes: data.includes ?? [],
    excludes: data.excludes ?? [],
    ...(searchAfter ? { searchAfter } : {}),
  };
}
