import { ValidationError } from '@svc/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { executeSearch } from './execute-search';
import {
  aggregation,
  clause,
  documents,
  referenceMatches,
  referenceSearch,
  requestBody,
  sortKey,
} from './search-reference';
import { parseSearchRequest } from './search-request';

// ---------------------------------------------------------------- properties

describe('search language properties', () => {
  it('agrees with the reference on hits, order, totals, cursors and aggregations', () => {
    fc.assert(
      fc.property(documents, requestBody, (docs, body) => {
        const response = executeSearch(parseSearchRequest(body), docs);
        expect(response).toEqual(referenceSearch(body, docs));
      }),
      { numRuns: 500 },
    );
  });

  it('visits every match exactly once, in order, when paging with search_after', () => {
    const paging = fc.record({
      query: clause,
      sort: fc.array(sortKey, { maxLength: 3 }),
      pageSize: fc.integer({ min: 1, max: 5 }),
    });
    fc.assert(
      fc.property(documents, paging, (docs, { query, sort, pageSize }) => {
        const whole = executeSearch(parseSearchRequest({ query, sort, size: 10_000 }), docs);
        const visited: unknown[] = [];
        let cursor: unknown;
        for (let page = 0; page <= docs.length; page++) {
          const body = { query, sort, size: pageSize, ...(cursor === undefined ? {} : { search_after: cursor }) };
          const response = executeSearch(parseSearchRequest(body), docs);
          expect(response.summary.hits).toBe(whole.summary.hits);
          if (response.hits.length === 0) break;
          visited.push(...response.hits.map((hit) => hit.uuid));
          // The cursor travels through JSON, as a client sends it back.
          cursor = JSON.parse(JSON.stringify(response.summary.last_sort_values));
        }
        expect(visited).toEqual(whole.hits.map((hit) => hit.uuid));
      }),
      { numRuns: 300 },
    );
  });

  it('matches exactly as the reference for any well-formed query', () => {
    fc.assert(
      fc.property(documents, clause, (docs, query) => {
        const request = parseSearchRequest({ query, size: 10_000 });
        const expected = docs.filter((document) => referenceMatches(query, document)).length;
        expect(executeSearch(request, docs).summary.hits).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('never throws anything but ValidationError, whatever JSON arrives', () => {
    const loose = fc.record(
      {
        query: fc.oneof(clause, fc.jsonValue()),
        sort: fc.oneof(fc.array(sortKey, { maxLength: 2 }), fc.jsonValue()),
        aggs: fc.oneof(fc.dictionary(fc.string(), aggregation, { maxKeys: 2 }), fc.jsonValue()),
        size: fc.jsonValue(),
        from: fc.jsonValue(),
        includes: fc.jsonValue(),
        search_after: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), loose), (body) => {
        try {
          parseSearchRequest(body);
        } catch (error) {
          expect(error).toBeInstanceOf(ValidationError);
          if (!(error instanceof ValidationError)) return;
          expect(error.details.length).toBeGreaterThan(0);
          for (const detail of error.details) {
            expect(detail).toEqual({
              code: expect.any(String),
              property: expect.any(String),
              message: expect.any(String),
            });
          }
        }
      }),
      { numRuns: 2_000 },
    );
  });
});
