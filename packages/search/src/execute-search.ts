import { type AggregationResult, createAggregator } from './aggregations';
import { compileProjection } from './projection';
import { compileQuery, type SearchDocument } from './query-compiler';
import type { SearchRequest } from './search-request';
import { compileSortOrder, type SortTuple } from './sort-order';
import type { SortValue } from './sort-request';
import { TopK } from './top-k';

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

interface Candidate {
  readonly document: SearchDocument;
  readonly tuple: SortTuple;
}

/**
 * Evaluates a parsed request over documents (contract section 7, interface 4.3), holding no state
 * and touching no storage. One pass counts and aggregates every match and keeps those past the
 * `search_after` cursor in a bounded heap of `from + size`, so the page costs O(matches · log window)
 * on top of the scan, not a sort of every match.
 */
export function executeSearch(request: SearchRequest, documents: Iterable<SearchDocument>): SearchResponse {
  const matches = compileQuery(request.query);
  const aggregators = request.aggs.map(createAggregator);
  const order = compileSortOrder(request.sort);
  const { searchAfter } = request;
  const wantsHits = request.size > 0;

  let total = 0;
  const kept = new TopK<Candidate>(request.from + request.size, (a, b) => order.compare(a.tuple, b.tuple));
  for (const document of documents) {
    if (!matches(document)) continue;
    total += 1;
    for (const aggregator of aggregators) aggregator.add(document);
    if (!wantsHits) continue;
    const tuple = order.tupleOf(document);
    if (searchAfter && order.compare(tuple, searchAfter) <= 0) continue;
    kept.offer({ document, tuple });
  }

  const page = kept.sorted().slice(request.from);
  const project = compileProjection(request.includes, request.excludes);
  return {
    summary: { hits: total, last_sort_values: [...(page.at(-1)?.tuple ?? [])] },
    hits: page.map((candidate) => project(candidate.document)),
    aggregations: Object.fromEntries(aggregators.map((aggregator) => [aggregator.name, aggregator.result()])),
  };
}
