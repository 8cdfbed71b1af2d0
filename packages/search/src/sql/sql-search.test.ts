import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSearchRequest, type SearchRequest } from '../search-request';
import { grantScope, runSqlSearch } from './execute';
import { openTestEngine } from './test-engine';

/**
 * The search language's meaning, example by example, on the engine that answers it (PostgreSQL,
 * here PGlite): each example's documents are loaded into a table of documents and the request
 * runs as the services run it. The property tests beside this compare random requests with the
 * plain reference evaluation.
 */
let engine: Awaited<ReturnType<typeof openTestEngine>>;
let db: Kysely<unknown>;

beforeAll(async () => {
  engine = await openTestEngine('example_docs');
  db = engine.db;
}, 60_000);

afterAll(async () => {
  await engine.close();
});

/** Runs the request over exactly these documents (another organisation's copy kept out by scope). */
async function executeSearch(request: SearchRequest, documents: ReadonlyArray<Record<string, unknown>>) {
  await sql`TRUNCATE example_docs`.execute(db);
  const rows = ['org', 'other'].flatMap((organisation) =>
    documents.map((doc) => sql`(${organisation}, ${String(doc.uuid)}, 'acct', ${JSON.stringify(doc)}::jsonb)`),
  );
  await sql`INSERT INTO example_docs (organisation_uuid, uuid, account_uuid, document) VALUES ${sql.join(rows)}`.execute(
    db,
  );
  return runSqlSearch(
    db,
    { from: sql.table('example_docs'), columns: {} },
    grantScope([{ organisation_uuid: 'org' }]),
    request,
  );
}

const payments = [
  {
    uuid: 'p1',
    created: 100,
    status: 'succeeded',
    amount: { value: '1000', currency: 'CHF' },
    supporter: { email: 'Anna@Example.org' },
    custom_parameters: { campaign: 'spring' },
    tags: ['Monthly', 'web'],
  },
  {
    uuid: 'p2',
    created: 300,
    status: 'failed',
    amount: { value: '250', currency: 'CHF' },
    supporter: { email: 'ben@example.org' },
    custom_parameters: { campaign: 'summer' },
    tags: [],
  },
  {
    uuid: 'p3',
    created: 200,
    status: 'succeeded',
    amount: { value: '99', currency: 'EUR' },
    custom_parameters: { campaign: 'spring' },
    refunds: [{ status: 'succeeded', amount: { value: '50' } }],
  },
  {
    uuid: 'p4',
    created: 400,
    status: 'Succeeded',
    amount: { value: 12000, currency: 'CHF' },
    supporter: { email: null },
    test: true,
  },
];

function search(body: Record<string, unknown>) {
  return executeSearch(parseSearchRequest({ size: 100, ...body }), payments);
}

async function uuids(body: Record<string, unknown>) {
  return (await search(body)).hits.map((hit) => hit.uuid);
}

describe('search on PostgreSQL: operators', () => {
  it('$match {} matches everything, newest first by default', async () => {
    expect(await uuids({ query: { $match: {} } })).toEqual(['p4', 'p2', 'p3', 'p1']);
  });

  it('$match compares strings ignoring case', async () => {
    expect(await uuids({ query: { $match: { status: 'SUCCEEDED' } } })).toEqual(['p4', 'p3', 'p1']);
    expect(await uuids({ query: { $match: { 'supporter.email': 'anna@example.ORG' } } })).toEqual(['p1']);
  });

  it('$match compares a number with numbers and numeric strings by value', async () => {
    expect(await uuids({ query: { $match: { 'amount.value': 1000 } } })).toEqual(['p1']);
    expect(await uuids({ query: { $match: { 'amount.value': 12000 } } })).toEqual(['p4']);
    expect(await uuids({ query: { $match: { 'amount.value': '12000' } } })).toEqual([]);
    expect(await uuids({ query: { $match: { test: true } } })).toEqual(['p4']);
  });

  it('$term is exact: case and type must agree', async () => {
    expect(await uuids({ query: { $term: { status: 'succeeded' } } })).toEqual(['p3', 'p1']);
    expect(await uuids({ query: { $term: { 'amount.value': 1000 } } })).toEqual([]);
    expect(await uuids({ query: { $term: { 'amount.value': '1000' } } })).toEqual(['p1']);
  });

  it('$terms matches any of the values', async () => {
    expect(await uuids({ query: { $terms: { 'custom_parameters.campaign': ['summer', 'autumn'] } } })).toEqual(['p2']);
    expect(await uuids({ query: { $terms: { status: ['failed', 'Succeeded'] } } })).toEqual(['p4', 'p2']);
  });

  it('$range compares numbers and numeric strings numerically, not as text', async () => {
    // As text "99" > "1000"; as numbers it is not.
    expect(await uuids({ query: { $range: { 'amount.value': { gt: 100 } } } })).toEqual(['p4', 'p2', 'p1']);
    expect(await uuids({ query: { $range: { 'amount.value': { gte: '250', lte: '1000' } } } })).toEqual(['p2', 'p1']);
    expect(await uuids({ query: { $range: { 'amount.value': { lt: 250 } } } })).toEqual(['p3']);
    expect(await uuids({ query: { $range: { status: { gte: 0 } } } })).toEqual([]);
  });

  it('$exists finds fields holding something other than null', async () => {
    expect(await uuids({ query: { $exists: 'supporter.email' } })).toEqual(['p2', 'p1']);
    expect(await uuids({ query: { $exists: 'refunds.status' } })).toEqual(['p3']);
    expect(await uuids({ query: { $exists: 'tags' } })).toEqual(['p1']);
  });

  it('a missing field matches no leaf, so $not of a leaf finds it', async () => {
    expect(await uuids({ query: { $match: { nowhere: 'x' } } })).toEqual([]);
    expect(await uuids({ query: { $not: { $exists: 'supporter.email' } } })).toEqual(['p4', 'p3']);
  });

  it('a field holding an array matches when any element does', async () => {
    expect(await uuids({ query: { $match: { tags: 'monthly' } } })).toEqual(['p1']);
    expect(await uuids({ query: { $terms: { tags: ['web'] } } })).toEqual(['p1']);
    expect(await uuids({ query: { $match: { 'refunds.status': 'SUCCEEDED' } } })).toEqual(['p3']);
  });

  it('$and, $or and $not combine clauses', async () => {
    const query = {
      $and: [
        { $or: [{ $term: { 'amount.currency': 'EUR' } }, { $range: { 'amount.value': { gte: 5000 } } }] },
        { $not: { $match: { test: true } } },
      ],
    };
    expect(await uuids({ query })).toEqual(['p3']);
    expect(await uuids({ query: { $and: [] } })).toHaveLength(4);
    expect(await uuids({ query: { $or: [] } })).toEqual([]);
  });

  it('paths never reach into the prototype', async () => {
    expect(await uuids({ query: { $exists: 'constructor' } })).toEqual([]);
    expect(await uuids({ query: { $exists: 'amount.toString' } })).toEqual([]);
  });
});

describe('search on PostgreSQL: sorting and paging', () => {
  it('sorts numeric strings and numbers together by value', async () => {
    const sort = [{ field: 'amount.value', field_type: 'numeric', direction: 'asc' }];
    expect(await uuids({ query: { $match: {} }, sort })).toEqual(['p3', 'p2', 'p1', 'p4']);
  });

  it('puts missing values last in both directions', async () => {
    for (const direction of ['asc', 'desc']) {
      const sort = [{ field: 'supporter.email', field_type: 'string', direction }];
      expect((await uuids({ query: { $match: {} }, sort })).slice(2)).toEqual(['p3', 'p4']);
    }
  });

  it('breaks ties by uuid ascending', async () => {
    const sort = [{ field: 'status', field_type: 'string', direction: 'desc' }];
    expect(await uuids({ query: { $match: {} }, sort })).toEqual(['p1', 'p3', 'p2', 'p4']);
  });

  it('counts every match in summary.hits, not just the page', async () => {
    const response = await search({ query: { $match: {} }, size: 2, from: 1 });
    expect(response.summary.hits).toBe(4);
    expect(response.hits.map((hit) => hit.uuid)).toEqual(['p2', 'p3']);
    expect(response.summary.last_sort_values).toEqual([200, 'p3']);
  });

  it('answers size 0 with the count and no hits', async () => {
    const response = await search({ query: { $match: {} }, size: 0 });
    expect(response.summary).toEqual({ hits: 4, last_sort_values: [] });
    expect(response.hits).toEqual([]);
  });

  it('continues strictly after search_after', async () => {
    const first = await search({ query: { $match: {} }, size: 3 });
    expect(first.summary.last_sort_values).toEqual([200, 'p3']);
    const next = await search({ query: { $match: {} }, size: 3, search_after: first.summary.last_sort_values });
    expect(next.hits.map((hit) => hit.uuid)).toEqual(['p1']);
    expect(next.summary.hits).toBe(4);
    const end = await search({ query: { $match: {} }, size: 3, search_after: next.summary.last_sort_values });
    expect(end.hits).toEqual([]);
    expect(end.summary.last_sort_values).toEqual([]);
  });

  it('carries null for a missing sort value, and pages past it', async () => {
    const sort = [{ field: 'supporter.email', field_type: 'string', direction: 'asc' }];
    const first = await search({ query: { $match: {} }, sort, size: 3 });
    expect(first.summary.last_sort_values).toEqual([null, 'p3']);
    const next = await search({ query: { $match: {} }, sort, size: 3, search_after: first.summary.last_sort_values });
    expect(next.hits.map((hit) => hit.uuid)).toEqual(['p4']);
  });
});

describe('search on PostgreSQL: projection', () => {
  it('keeps only included paths, nested structure intact', async () => {
    const response = await search({
      query: { $term: { uuid: 'p3' } },
      includes: ['uuid', 'amount.value', 'refunds.status'],
    });
    expect(response.hits).toEqual([{ uuid: 'p3', amount: { value: '99' }, refunds: [{ status: 'succeeded' }] }]);
  });

  it('removes excluded paths after includes', async () => {
    const response = await search({
      query: { $term: { uuid: 'p1' } },
      includes: ['uuid', 'amount'],
      excludes: ['amount.currency'],
    });
    expect(response.hits).toEqual([{ uuid: 'p1', amount: { value: '1000' } }]);
    const excluded = await search({
      query: { $term: { uuid: 'p2' } },
      excludes: ['supporter', 'tags', 'custom_parameters'],
    });
    expect(excluded.hits).toEqual([
      { uuid: 'p2', created: 300, status: 'failed', amount: { value: '250', currency: 'CHF' } },
    ]);
  });
});

describe('search on PostgreSQL: aggregations', () => {
  it('counts terms over every match, by descending count then key, at most size', async () => {
    const response = await search({
      query: { $match: {} },
      size: 1,
      aggs: {
        campaigns: { type: 'term', field: 'custom_parameters.campaign' },
        statuses: { type: 'term', field: 'status', size: 2 },
        tags: { type: 'term', field: 'tags' },
      },
    });
    expect(response.aggregations).toEqual({
      campaigns: [
        { key: 'spring', doc_count: 2 },
        { key: 'summer', doc_count: 1 },
      ],
      statuses: [
        { key: 'succeeded', doc_count: 2 },
        { key: 'Succeeded', doc_count: 1 },
      ],
      tags: [
        { key: 'Monthly', doc_count: 1 },
        { key: 'web', doc_count: 1 },
      ],
    });
  });

  it('reads numeric term keys by value when field_type is numeric', async () => {
    const response = await executeSearch(
      parseSearchRequest({ query: { $match: {} }, aggs: { v: { type: 'term', field: 'v', field_type: 'numeric' } } }),
      [
        { uuid: 'a', v: '10' },
        { uuid: 'b', v: 10 },
        { uuid: 'c', v: 'ten' },
      ],
    );
    expect(response.aggregations.v).toEqual([{ key: 10, doc_count: 2 }]);
  });

  it('sums numbers and numeric strings over the matches, ignoring other values', async () => {
    const response = await search({
      query: { $term: { 'amount.currency': 'CHF' } },
      size: 0,
      aggs: { total: { type: 'sum', field: 'amount.value' }, none: { type: 'sum', field: 'status' } },
    });
    expect(response.aggregations).toEqual({ total: [{ key: 'sum', value: 13250 }], none: [{ key: 'sum', value: 0 }] });
  });

  it('keeps sums beyond 2^53 exact', async () => {
    const documents = [
      { uuid: 'a', v: String(Number.MAX_SAFE_INTEGER) },
      { uuid: 'b', v: Number.MAX_SAFE_INTEGER },
      { uuid: 'c', v: '1' },
    ];
    const request = parseSearchRequest({ query: { $match: {} }, aggs: { total: { type: 'sum', field: 'v' } } });
    expect((await executeSearch(request, documents)).aggregations.total).toEqual([
      { key: 'sum', value: '18014398509481983' },
    ]);
  });

  it('gives an aggregation name such as __proto__ its own entry', async () => {
    const request = parseSearchRequest(
      JSON.parse('{"query":{"$match":{}},"aggs":{"__proto__":{"type":"sum","field":"v"}}}'),
    );
    const response = await executeSearch(request, [{ uuid: 'a', v: 2 }]);
    expect(Object.hasOwn(response.aggregations, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(response.aggregations)).toBe(Object.prototype);
  });
});
