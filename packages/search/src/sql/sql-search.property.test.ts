import { definedFields } from '@svc/core';
import fc from 'fast-check';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clause,
  type Doc,
  documentBody,
  documents,
  referenceSearch,
  requestBody,
  sortKey,
  text,
  uuids,
} from '../search-reference';
import { parseSearchRequest } from '../search-request';
import type { SqlSearchSource } from './compile';
import { grantScope, runSqlSearch } from './execute';
import { openTestEngine } from './test-engine';

/**
 * The SQL engine against a plain reference evaluation of the language (search-reference.ts):
 * random documents in PostgreSQL (PGlite), random requests compiled to SQL, the same answer expected.
 * Case folding is PostgreSQL's `lower()` (Unicode simple case mapping); JavaScript folds the
 * dotted capital I (İ) to two characters, so documents and queries with it are left out here.
 */
let engine: Awaited<ReturnType<typeof openTestEngine>>;
let db: Kysely<unknown>;
const SCOPE = grantScope([{ organisation_uuid: 'org' }]);
const DOCUMENT_ONLY: SqlSearchSource = { from: sql.table('search_docs'), columns: {} };
const TYPED: SqlSearchSource = {
  from: sql.table('search_docs'),
  columns: {
    created: { column: 'created', kind: 'number' },
    'amount.value': { column: 'amount_minor', kind: 'digits' },
    b: { column: 'b', kind: 'text' },
  },
};

beforeAll(async () => {
  engine = await openTestEngine('search_docs', 'created bigint, amount_minor bigint, b text COLLATE "C"');
  db = engine.db;
}, 60_000);

afterAll(async () => {
  await engine.close();
});

async function load(docs: readonly Doc[], other: readonly Doc[] = []): Promise<void> {
  await sql`TRUNCATE search_docs`.execute(db);
  const rows = [
    ...docs.map((doc) => ({ doc, organisation: 'org' })),
    // Another organisation's documents, which the scope must keep out.
    ...other.map((doc) => ({ doc, organisation: 'other' })),
  ];
  if (rows.length === 0) return;
  const values = rows.map(({ doc, organisation }) => {
    const amount = (doc.amount as { value?: unknown } | undefined)?.value;
    return sql`(${organisation}, ${String(doc.uuid)}, 'acct',
      ${typeof doc.created === 'number' ? String(doc.created) : null}::bigint,
      ${typeof amount === 'string' && /^[0-9]{1,16}$/.test(amount) ? amount : null}::bigint,
      ${typeof doc.b === 'string' ? doc.b : null},
      ${JSON.stringify(doc)}::jsonb)`;
  });
  await sql`INSERT INTO search_docs (organisation_uuid, uuid, account_uuid, created, amount_minor, b, document)
    VALUES ${sql.join(values)}`.execute(db);
}

const withoutDottedI = (value: unknown) => !JSON.stringify(value).includes('İ');

/** Documents whose typed fields always hold what the typed columns say. */
const typedDocuments = uuids.chain((ids) =>
  fc.tuple(
    ...ids.map((uuid) =>
      fc
        .tuple(
          documentBody,
          fc.integer({ min: 0, max: 5 }),
          fc.integer({ min: 0, max: 3 }),
          text.filter((t) => !t.includes('İ')),
        )
        .map(
          ([body, created, minor, b]): Doc => ({
            ...body,
            uuid,
            created,
            amount: { value: String(minor), currency: 'CHF' },
            b,
          }),
        ),
    ),
  ),
);

describe('the search language on PostgreSQL', () => {
  it('agrees with the reference on hits, order, totals, cursors and aggregations (document paths)', async () => {
    await fc.assert(
      fc.asyncProperty(documents, requestBody, async (docs, body) => {
        fc.pre(withoutDottedI([docs, body]));
        await load(
          docs,
          docs.slice(0, 3).map((doc) => ({ ...doc, uuid: `x${String(doc.uuid)}` })),
        );
        const response = await runSqlSearch(db, DOCUMENT_ONLY, SCOPE, parseSearchRequest(body));
        expect(response).toEqual(referenceSearch(body, docs));
      }),
      { numRuns: 600 },
    );
  }, 120_000);

  it('agrees with the reference where typed columns answer', async () => {
    await fc.assert(
      fc.asyncProperty(typedDocuments, requestBody, async (docs, body) => {
        fc.pre(withoutDottedI(body));
        await load(docs);
        const response = await runSqlSearch(db, TYPED, SCOPE, parseSearchRequest(body));
        expect(response).toEqual(referenceSearch(body, docs));
      }),
      { numRuns: 400 },
    );
  }, 120_000);

  it('treats numeric strings beyond the doubles as not numeric, as the reference does (no overflow)', async () => {
    const huge = '9'.repeat(400);
    const docs: Doc[] = [
      { uuid: 'a', a: huge, amount: { value: '5', currency: 'CHF' } },
      { uuid: 'b', a: '7', amount: { value: huge, currency: 'CHF' } },
      { uuid: 'c', a: [[[[[['8']]]]]], amount: { value: '1', currency: 'CHF' } },
    ];
    await load(docs);
    for (const body of [
      { query: { $range: { a: { gt: 0 } } }, sort: [{ field: 'a', field_type: 'numeric', direction: 'desc' }] },
      { query: { $match: { a: 8 } } },
      {
        query: { $match: {} },
        aggs: { total: { type: 'sum', field: 'a' }, keys: { type: 'term', field: 'a', field_type: 'numeric' } },
      },
      { query: { $term: { 'amount.value': huge } } },
    ]) {
      const response = await runSqlSearch(db, DOCUMENT_ONLY, SCOPE, parseSearchRequest(body));
      expect(response, JSON.stringify(body)).toEqual(referenceSearch(body as never, docs));
    }
  });

  it('visits every match exactly once, in order, when paging with search_after', async () => {
    const paging = fc.record({
      query: clause,
      sort: fc.array(sortKey, { maxLength: 3 }),
      pageSize: fc.integer({ min: 1, max: 5 }),
    });
    await fc.assert(
      fc.asyncProperty(documents, paging, async (docs, { query, sort, pageSize }) => {
        fc.pre(withoutDottedI([docs, query]));
        await load(docs);
        const search = (body: unknown) => runSqlSearch(db, DOCUMENT_ONLY, SCOPE, parseSearchRequest(body));
        const whole = await search({ query, sort, size: 10_000 });
        const visited: unknown[] = [];
        let cursor: unknown;
        for (let page = 0; page <= docs.length; page++) {
          const response = await search({
            query,
            sort,
            size: pageSize,
            ...definedFields({ search_after: cursor }),
          });
          if (response.hits.length === 0) break;
          visited.push(...response.hits.map((hit) => hit.uuid));
          cursor = JSON.parse(JSON.stringify(response.summary.last_sort_values));
        }
        expect(visited).toEqual(whole.hits.map((hit) => hit.uuid));
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
