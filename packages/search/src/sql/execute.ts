import { type Kysely, sql } from 'kysely';
import type { AggregationResult, TermBucket } from '../aggregations';
import { ExactSum } from '../exact-sum';
import type { SearchResponse } from '../execute-search';
import { toNumber } from '../numeric';
import { compileProjection } from '../projection';
import type { Scalar } from '../query';
import type { SearchDocument } from '../query-compiler';
import type { SearchRequest } from '../search-request';
import { compileSortOrder } from '../sort-order';
import {
  after,
  compileWhere,
  orderBy,
  type Sql,
  type SqlSearchSource,
  sumAggregation,
  termAggregation,
} from './compile';

/**
 * Runs a parsed search on PostgreSQL: the count of every match, the page in the request's order
 * (keyset after `search_after`, or offset `from`), and each aggregation, as statements of their
 * own run side by side. `scope` is the tenant condition built from the caller's grants, never
 * from the request, and is part of every statement.
 */
export async function runSqlSearch(
  db: Kysely<unknown>,
  source: SqlSearchSource,
  scope: Sql,
  request: SearchRequest,
): Promise<SearchResponse> {
  const table = sql.table(source.table);
  const where = sql`${scope} AND ${compileWhere(request.query, source)}`;
  const count = sql<{ hits: string }>`SELECT count(*)::text AS hits FROM ${table} AS t WHERE ${where}`.execute(db);
  const page =
    request.size === 0
      ? Promise.resolve({ rows: [] as { document: string }[] })
      : sql<{ document: string }>`SELECT t.document::text AS document FROM ${table} AS t
          WHERE ${where}${request.searchAfter ? sql` AND ${after(request.sort, request.searchAfter, source)}` : sql``}
          ORDER BY ${orderBy(request.sort, source)}
          LIMIT ${request.size} OFFSET ${request.from}`.execute(db);
  const aggregations = request.aggs.map(async (aggregation): Promise<[string, AggregationResult]> => {
    if (aggregation.type === 'sum') {
      const { rows } = await sql<{ total: string | null }>`${sumAggregation(aggregation.field, source, where)}`.execute(
        db,
      );
      const sum = new ExactSum();
      const total = rows[0]?.total;
      if (total !== null && total !== undefined) sum.addTotal(total);
      return [aggregation.name, [{ key: 'sum', value: sum.value() }]];
    }
    const { rows } = await sql<{
      key: string;
      doc_count: string;
    }>`${termAggregation(aggregation, source, where)}`.execute(db);
    return [
      aggregation.name,
      rows.map((row): TermBucket => ({ key: termKey(row.key), doc_count: Number(row.doc_count) })),
    ];
  });
  const [counted, found, aggregated] = await Promise.all([count, page, Promise.all(aggregations)]);
  const documents = found.rows.map((row) => JSON.parse(row.document) as SearchDocument);
  const last = documents.at(-1);
  const project = compileProjection(request.includes, request.excludes);
  return {
    summary: {
      hits: Number(counted.rows[0]?.hits ?? 0),
      last_sort_values: last ? [...compileSortOrder(request.sort).tupleOf(last)] : [],
    },
    hits: documents.map(project),
    aggregations: Object.fromEntries(aggregated),
  };
}

/** A bucket key as the JSON the database printed: numbers normalised as the language reads them. */
function termKey(text: string): Scalar {
  const key = JSON.parse(text) as Scalar;
  return typeof key === 'number' ? (toNumber(key) ?? key) : key;
}

/** The tenant condition: organisations granted whole, and single accounts of others. */
export function grantScope(
  grants: ReadonlyArray<{ organisation_uuid: string; account_uuid?: string | undefined }>,
): Sql {
  const whole = [...new Set(grants.filter((g) => g.account_uuid === undefined).map((g) => g.organisation_uuid))];
  const accounts = grants.filter(
    (g): g is { organisation_uuid: string; account_uuid: string } =>
      g.account_uuid !== undefined && !whole.includes(g.organisation_uuid),
  );
  const parts: Sql[] = [];
  if (whole.length > 0) parts.push(sql`t.organisation_uuid IN (${sql.join(whole)})`);
  for (const grant of accounts) {
    parts.push(sql`(t.organisation_uuid = ${grant.organisation_uuid} AND t.account_uuid = ${grant.account_uuid})`);
  }
  return parts.length === 0 ? sql`FALSE` : sql`(${sql.join(parts, sql` OR `)})`;
}
