import { ValidationError } from '@svc/core';
import { describe, expect, it } from 'vitest';
import { SEARCH_LIMITS } from './limits';
import { parseSearchRequest } from './search-request';
import type { SearchOptions } from './searchable-fields';
import { DEFAULT_SORT } from './sort-request';

/** The detail objects a body is refused with; fails the test when the body is accepted. */
function refusal(body: unknown, options?: SearchOptions) {
  try {
    parseSearchRequest(body, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    if (error instanceof ValidationError) return error.details;
  }
  throw new Error('expected the request to be refused');
}

function nested(depth: number) {
  let clause: unknown = { $match: { status: 'succeeded' } };
  for (let level = 1; level < depth; level++) clause = { $not: clause };
  return clause;
}

describe('parseSearchRequest', () => {
  it('fills the defaults: size 10, from 0, created descending, no aggregations or projection', () => {
    const request = parseSearchRequest({ query: { $match: {} } });
    expect(request).toEqual({
      query: { op: 'all' },
      aggs: [],
      sort: DEFAULT_SORT,
      size: 10,
      from: 0,
      includes: [],
      excludes: [],
    });
  });

  it('parses every operator into the query tree', () => {
    const request = parseSearchRequest({
      query: {
        $and: [
          { $match: { 'supporter.email': 'A@Example.org' } },
          { $term: { status: 'succeeded' } },
          { $terms: { 'custom_parameters.campaign': ['spring', 'summer'] } },
          { $range: { 'amount.value': { gte: '1000', lt: 5000 } } },
          { $or: [{ $exists: 'refunds' }, { $not: { $match: { test: true } } }] },
        ],
      },
    });
    expect(request.query).toEqual({
      op: 'and',
      clauses: [
        { op: 'match', field: 'supporter.email', value: 'A@Example.org' },
        { op: 'term', field: 'status', value: 'succeeded' },
        { op: 'terms', field: 'custom_parameters.campaign', values: ['spring', 'summer'] },
        { op: 'range', field: 'amount.value', bounds: { gte: 1000, lt: 5000 } },
        {
          op: 'or',
          clauses: [
            { op: 'exists', field: 'refunds' },
            { op: 'not', clause: { op: 'match', field: 'test', value: true } },
          ],
        },
      ],
    });
  });

  it('reads a leaf naming several fields as all of them', () => {
    const request = parseSearchRequest({ query: { $term: { status: 'succeeded', currency: 'CHF' } } });
    expect(request.query).toEqual({
      op: 'and',
      clauses: [
        { op: 'term', field: 'status', value: 'succeeded' },
        { op: 'term', field: 'currency', value: 'CHF' },
      ],
    });
  });

  it('parses sort, aggregations, paging, projection and a search_after cursor', () => {
    const request = parseSearchRequest({
      query: { $match: {} },
      sort: [
        { field: 'amount.value', field_type: 'numeric', direction: 'desc' },
        { field: 'status', field_type: 'string' },
      ],
      aggs: {
        by_status: { type: 'term', field: 'status', size: 3 },
        total: { type: 'sum', field: 'amount.value', field_type: 'numeric' },
      },
      size: 50,
      includes: ['uuid', 'amount.value'],
      excludes: ['supporter'],
      search_after: ['1000', null, 'b0a6b4a2-0000-4000-8000-000000000001'],
    });
    expect(request.sort).toEqual([
      { field: 'amount.value', fieldType: 'numeric', direction: 'desc' },
      { field: 'status', fieldType: 'string', direction: 'asc' },
    ]);
    expect(request.aggs).toEqual([
      { name: 'by_status', type: 'term', field: 'status', size: 3 },
      { name: 'total', type: 'sum', field: 'amount.value' },
    ]);
    expect(request).toMatchObject({ size: 50, from: 0, includes: ['uuid', 'amount.value'], excludes: ['supporter'] });
    expect(request.searchAfter).toEqual([1000, null, 'b0a6b4a2-0000-4000-8000-000000000001']);
  });

  it('takes null for an optional field as absent', () => {
    const request = parseSearchRequest({ query: { $match: {} }, sort: null, size: null, aggs: null, includes: null });
    expect(request).toMatchObject({ size: 10, sort: DEFAULT_SORT, aggs: [], includes: [] });
  });

  it('accepts size 0 and from + size up to 10000', () => {
    expect(parseSearchRequest({ query: { $match: {} }, size: 0 }).size).toBe(0);
    expect(parseSearchRequest({ query: { $match: {} }, from: 9000, size: 1000 })).toMatchObject({ from: 9000 });
  });

  it('requires a query', () => {
    expect(refusal({})).toEqual([expect.objectContaining({ property: 'query', code: 'error.validation.not_blank' })]);
    expect(refusal({ query: null })[0]).toMatchObject({ property: 'query', code: 'error.validation.not_blank' });
  });

  it('refuses a body that is not an object', () => {
    for (const body of [null, 'query', 42, [{ query: {} }]]) {
      expect(refusal(body)[0]).toMatchObject({ property: 'body' });
    }
  });

  it('refuses an unknown operator, naming it', () => {
    expect(refusal({ query: { $and: [{ $regex: { status: 's.*' } }] } })).toEqual([
      expect.objectContaining({
        property: 'query.$and.0.$regex',
        code: 'the_value_you_selected_is_not_a_valid_choice',
      }),
    ]);
  });

  it('refuses a clause with no operator or with two', () => {
    expect(refusal({ query: {} })[0]).toMatchObject({ property: 'query', code: 'error.validation.not_blank' });
    expect(refusal({ query: { $match: {}, $term: { a: 1 } } })[0]).toMatchObject({
      property: 'query',
      code: 'error.validation.not_valid',
    });
  });

  it('refuses a range bound that is not numeric, naming the field and bound', () => {
    expect(refusal({ query: { $range: { 'amount.value': { gte: 'ten' } } } })).toEqual([
      expect.objectContaining({ property: 'query.$range.amount.value.gte', code: 'error.validation.not_valid' }),
    ]);
    expect(refusal({ query: { $range: { 'amount.value': { from: 1 } } } })[0]).toMatchObject({
      property: 'query.$range.amount.value.from',
      code: 'error.validation.unknown_field',
    });
    expect(refusal({ query: { $range: { 'amount.value': {} } } })[0]).toMatchObject({
      property: 'query.$range.amount.value',
      code: 'error.validation.not_blank',
    });
  });

  it('refuses query values that are not strings, numbers or booleans', () => {
    expect(refusal({ query: { $match: { status: null } } })[0]).toMatchObject({
      property: 'query.$match.status',
      code: 'error.validation.not_blank',
    });
    expect(refusal({ query: { $term: { amount: { value: '1' } } } })[0]).toMatchObject({
      property: 'query.$term.amount',
      code: 'error.validation.invalid_type',
    });
    expect(refusal({ query: { $terms: { status: ['a', ['b']] } } })[0]).toMatchObject({
      property: 'query.$terms.status.1',
    });
    expect(refusal({ query: { $terms: { status: [] } } })[0]).toMatchObject({ property: 'query.$terms.status' });
  });

  it('refuses an empty $term and a malformed $exists, $and or $not', () => {
    expect(refusal({ query: { $term: {} } })[0]).toMatchObject({ property: 'query.$term' });
    expect(refusal({ query: { $exists: ['status'] } })[0]).toMatchObject({ property: 'query.$exists' });
    expect(refusal({ query: { $and: { $match: {} } } })[0]).toMatchObject({ property: 'query.$and' });
    expect(refusal({ query: { $not: [] } })[0]).toMatchObject({ property: 'query.$not' });
  });

  it('refuses malformed field paths', () => {
    for (const field of ['', 'amount..value', '.status', 'status.', 'a'.repeat(SEARCH_LIMITS.maxPathLength + 1)]) {
      expect(refusal({ query: { $exists: field } })[0]).toMatchObject({
        property: 'query.$exists',
        code: 'error.validation.not_valid',
      });
    }
  });

  it('reports every fault at once', () => {
    const details = refusal({ query: { $or: [{ $term: { a: null } }, { $nope: 1 }] }, size: -1 });
    expect(details.map((detail) => detail.property).sort()).toEqual([
      'query.$or.0.$term.a',
      'query.$or.1.$nope',
      'size',
    ]);
  });

  it('refuses size and from outside their bounds', () => {
    expect(refusal({ query: { $match: {} }, size: 10_001 })[0]).toMatchObject({
      property: 'size',
      code: 'error.validation.too_big',
    });
    expect(refusal({ query: { $match: {} }, size: 2.5 })[0]).toMatchObject({ property: 'size' });
    expect(refusal({ query: { $match: {} }, from: -1 })[0]).toMatchObject({
      property: 'from',
      code: 'error.validation.too_small',
    });
    expect(refusal({ query: { $match: {} }, from: 9_995, size: 10 })[0]).toMatchObject({
      property: 'from',
      code: 'error.validation.too_big',
    });
  });

  it('refuses an unknown top-level field, naming it', () => {
    expect(refusal({ query: { $match: {} }, limit: 5 })).toEqual([
      expect.objectContaining({ property: 'limit', code: 'error.validation.unknown_field' }),
    ]);
  });

  it('refuses a sort with an unknown direction or field type', () => {
    const details = refusal({
      query: { $match: {} },
      sort: [{ field: 'created', field_type: 'date', direction: 'up' }],
    });
    expect(details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ property: 'sort.0.direction', code: 'the_value_you_selected_is_not_a_valid_choice' }),
        expect.objectContaining({
          property: 'sort.0.field_type',
          code: 'the_value_you_selected_is_not_a_valid_choice',
        }),
      ]),
    );
  });

  it('refuses malformed aggregations, naming them', () => {
    expect(refusal({ query: { $match: {} }, aggs: { avg_amount: { type: 'avg', field: 'x' } } })[0]).toMatchObject({
      property: 'aggs.avg_amount.type',
      code: 'the_value_you_selected_is_not_a_valid_choice',
    });
    expect(refusal({ query: { $match: {} }, aggs: { by: { type: 'term' } } })[0]).toMatchObject({
      property: 'aggs.by.field',
      code: 'error.validation.not_blank',
    });
    expect(refusal({ query: { $match: {} }, aggs: { by: { type: 'term', field: 'a', size: 0 } } })[0]).toMatchObject({
      property: 'aggs.by.size',
    });
    expect(
      refusal({ query: { $match: {} }, aggs: { s: { type: 'sum', field: 'a', field_type: 'string' } } })[0],
    ).toMatchObject({ property: 'aggs.s.field_type' });
  });

  it('refuses a search_after of the wrong shape or combined with from', () => {
    const sort = [{ field: 'amount.value', field_type: 'numeric', direction: 'asc' }];
    expect(refusal({ query: { $match: {} }, sort, search_after: ['u-1'] })[0]).toMatchObject({
      property: 'search_after',
    });
    expect(refusal({ query: { $match: {} }, sort, search_after: ['ten', 'u-1'] })[0]).toMatchObject({
      property: 'search_after.0',
    });
    expect(refusal({ query: { $match: {} }, sort, search_after: [10, 7] })[0]).toMatchObject({
      property: 'search_after.1',
    });
    expect(refusal({ query: { $match: {} }, sort, from: 10, search_after: [10, 'u-1'] })[0]).toMatchObject({
      property: 'search_after',
    });
  });

  it('refuses fields outside the allowed list where they are named', () => {
    const options = { fields: ['status', 'amount.value', 'created', 'custom_parameters.*'] };
    expect(parseSearchRequest({ query: { $match: { 'custom_parameters.campaign': 'x' } } }, options)).toBeDefined();
    expect(refusal({ query: { $not: { $exists: 'secret' } } }, options)[0]).toMatchObject({
      property: 'query.$not.$exists',
      code: 'the_value_you_selected_is_not_a_valid_choice',
    });
    expect(
      refusal({ query: { $match: {} }, sort: [{ field: 'iban', field_type: 'string' }] }, options)[0],
    ).toMatchObject({
      property: 'sort.0.field',
    });
    expect(
      refusal({ query: { $match: {} }, aggs: { a: { type: 'term', field: 'custom_parameters' } } }, options)[0],
    ).toMatchObject({ property: 'aggs.a.field' });
  });

  it(`accepts ${SEARCH_LIMITS.maxQueryDepth} levels of nesting and refuses one more`, () => {
    expect(() => parseSearchRequest({ query: nested(SEARCH_LIMITS.maxQueryDepth) })).not.toThrow();
    expect(refusal({ query: nested(SEARCH_LIMITS.maxQueryDepth + 1) })[0]).toMatchObject({
      code: 'error.validation.too_big',
    });
  });

  it('refuses a hostile query quickly and without exhausting the stack', () => {
    const deep = nested(200_000);
    expect(refusal({ query: deep })).toHaveLength(1);
    const wide = { $or: Array.from({ length: 100_000 }, () => ({ $match: { status: 'a' } })) };
    expect(refusal({ query: wide })).toEqual([
      expect.objectContaining({ code: 'error.validation.too_big', message: expect.stringContaining('clauses') }),
    ]);
  });

  it('accepts a query of exactly the clause budget and refuses one clause more', () => {
    // The $or costs one, each one-field leaf two (the clause and its field), $match {} one.
    const leaves = Array.from({ length: (SEARCH_LIMITS.maxQueryClauses - 2) / 2 }, () => ({ $term: { status: 'a' } }));
    const query: { $or: unknown[] } = { $or: [...leaves, { $match: {} }] };
    expect(() => parseSearchRequest({ query })).not.toThrow();
    query.$or.push({ $match: {} });
    expect(refusal({ query })[0]).toMatchObject({ code: 'error.validation.too_big' });
  });
});
