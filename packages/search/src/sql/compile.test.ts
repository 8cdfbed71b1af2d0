import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { parseSearchRequest } from '../search-request';
import { compileWhere, orderBy, type SqlSearchSource } from './compile';
import { grantScope } from './execute';

/** Golden tests: what a query becomes in SQL, and that every value travels as a parameter. */
const db = new Kysely<unknown>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});
const SOURCE: SqlSearchSource = {
  from: sql.table('payment_search'),
  columns: {
    created: { column: 'created', kind: 'number' },
    status: { column: 'status', kind: 'text' },
    'amount.value': { column: 'amount_minor', kind: 'digits' },
  },
};

/** Every step flattens arrays nested as deep as free JSON allows. */
const F = '[*]'.repeat(16);

function where(query: unknown) {
  const compiled = sql`${compileWhere(parseSearchRequest({ query }).query, SOURCE)}`.compile(db);
  return { sql: compiled.sql.replace(/\s+/g, ' '), parameters: compiled.parameters };
}

describe('query → SQL', () => {
  it('uses the typed column for a case-insensitive match on status', () => {
    expect(where({ $match: { status: 'Succeeded' } })).toEqual({
      sql: 'lower("t"."status") = lower($1)',
      parameters: ['Succeeded'],
    });
  });

  it('compares amounts (digits in the document) on the integer column, with bigint bounds its index serves', () => {
    expect(where({ $range: { 'amount.value': { gte: '1000', lt: 5000 } } })).toEqual({
      sql: '("t"."amount_minor" >= $1::bigint AND "t"."amount_minor" < $2::bigint)',
      parameters: ['1000', '5000'],
    });
  });

  it('rounds fractional bounds on an integer column to the same set of integers', () => {
    expect(where({ $range: { created: { gt: 2.5, lte: '7.9' } } }).parameters).toEqual(['2', '7']);
    expect(where({ $range: { created: { gte: 2.5, lt: 7.1 } } }).parameters).toEqual(['3', '8']);
  });

  it('tests a dotted path with a jsonpath parameter the GIN index serves', () => {
    expect(where({ $term: { 'custom_parameters.campaign': 'spring' } })).toEqual({
      sql: '(t.document @? $1::jsonpath)',
      parameters: [`lax $."custom_parameters"${F}."campaign"${F} ? (@ == "spring")`],
    });
  });

  it('reads numeric strings and numbers alike as doubles on document paths', () => {
    expect(where({ $range: { 'custom_parameters.age': { gt: 17 } } })).toEqual({
      sql: 'EXISTS (SELECT 1 FROM jsonb_path_query(t.document, $1::jsonpath) AS v(value) WHERE (svc_double(v.value) IS NOT NULL AND svc_double(v.value) > $2::float8))',
      parameters: [`lax $."custom_parameters"${F}."age"${F}`, '17'],
    });
  });

  it('keeps hostile keys and values inside parameters, never in the SQL text', () => {
    const hostile = `x"); DROP TABLE payment_search; --`;
    const compiled = where({ $or: [{ $term: { [`a.${hostile}`]: hostile } }, { $match: { b: `'${hostile}` } }] });
    expect(compiled.sql).not.toContain('DROP');
    expect(compiled.parameters.join(' ')).toContain('DROP TABLE');
  });

  it('answers a term on amounts beyond any stored amount (17+ digits) with FALSE, not an overflow', () => {
    expect(where({ $term: { 'amount.value': '99999999999999999999' } }).sql).toBe('FALSE');
  });

  it('folds a term on a typed column of another type to FALSE, and exists on one to TRUE', () => {
    expect(where({ $and: [{ $term: { created: 'soon' } }, { $exists: 'status' }] }).sql).toBe('(FALSE AND TRUE)');
  });
});

describe('sort → SQL', () => {
  it('orders by the typed column (always present, so its index serves), then the uuid', () => {
    const request = parseSearchRequest({
      query: { $match: {} },
      sort: [{ field: 'created', field_type: 'numeric', direction: 'desc' }],
    });
    expect(sql`${orderBy(request.sort, SOURCE)}`.compile(db).sql).toBe('"t"."created" DESC, t.uuid ASC');
  });
});

describe('tenant scope', () => {
  it('is built from grants only: whole organisations, then single accounts', () => {
    const compiled = sql`${grantScope([
      { organisation_uuid: 'o1' },
      { organisation_uuid: 'o2', account_uuid: 'a2' },
      { organisation_uuid: 'o1', account_uuid: 'a9' },
    ])}`.compile(db);
    expect(compiled.sql).toBe('(t.organisation_uuid IN ($1) OR (t.organisation_uuid = $2 AND t.account_uuid = $3))');
    expect(compiled.parameters).toEqual(['o1', 'o2', 'a2']);
  });

  it('is FALSE without grants', () => {
    expect(sql`${grantScope([])}`.compile(db).sql).toBe('FALSE');
  });
});
