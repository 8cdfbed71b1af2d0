import { type Kysely, sql } from 'kysely';
import { ExactSum } from '../exact-sum';
import { toNumber } from '../numeric';
import { compileProjection } from '../projection';
import type { Scalar } from '../query';
import type { SearchRequest } from '../search-request';
import type { AggregationResult, SearchDocument, SearchResponse, TermBucket } from '../search-response';
import type { SortKey, SortValue } from '../sort-request';
import {
  after,
  compileWhere,
  orderBy,
  type Sql,
  type SqlSearchSource,
  sortValue,
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
  const table = source.from;
  const where = sql`${scope} AND ${compileWhere(request.query, source)}`;
  const count = sql<{ hits: string }>`SELECT count(*)::text AS hits FROM ${table} AS t WHERE ${where}`.execute(db);
  const page =
    request.size === 0
      ? Promise.resolve({ rows: [] as PageRow[] })
      : sql<PageRow>`SELECT t.organisation_uuid AS organisation, t.uuid AS uuid,
          octet_length(t.document::text)::int AS bytes, length(t.document::text)::int AS chars,
          ${sortColumns(request, source)}
          FROM ${table} AS t
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
  const texts = await documentsOf(db, source, found.rows);
  const documents = found.rows.map((row) => JSON.parse(texts.get(rowKey(row)) ?? 'null') as SearchDocument);
  const last = found.rows.at(-1);
  const project = compileProjection(request.includes, request.excludes);
  return {
    summary: {
      hits: Number(counted.rows[0]?.hits ?? 0),
      // The values the database sorted by, so a cursor sent back continues exactly there.
      last_sort_values: last
        ? [...request.sort.map((key, index) => sortValueOf(key, last[`s${index}`])), last.uuid]
        : [],
    },
    hits: documents.map(project),
    aggregations: Object.fromEntries(aggregated),
  };
}

type PageRow = { organisation: string; uuid: string; bytes: number; chars: number } & Record<
  `s${number}`,
  string | null
>;

/**
 * The Data API answers at most 1 MiB a call and 64 KB a row, and a page holds up to 10 000
 * documents of up to a few hundred KB: so the page's rows come first without their documents,
 * then the documents in calls of about 800 KB, and a document too large for one row in pieces.
 */
const CALL_BYTES = 800_000;
/** Characters of a document per piece: at 4 bytes a character at most, well inside 64 KB. */
const PIECE_CHARS = 15_000;

const rowKey = (row: { organisation: string; uuid: string }) => `${row.organisation}\u0000${row.uuid}`;

async function documentsOf(
  db: Kysely<unknown>,
  source: SqlSearchSource,
  rows: readonly PageRow[],
): Promise<Map<string, string>> {
  const table = source.from;
  const texts = new Map<string, string>();
  const groups: PageRow[][] = [];
  let group: PageRow[] = [];
  let bytes = 0;
  for (const row of rows) {
    if (row.bytes > PIECE_CHARS) {
      let text = '';
      for (let start = 1; start <= row.chars; start += PIECE_CHARS) {
        const { rows: parts } = await sql<{
          part: string;
        }>`SELECT substr(t.document::text, ${start}, ${PIECE_CHARS}) AS part
          FROM ${table} AS t WHERE t.organisation_uuid = ${row.organisation} AND t.uuid = ${row.uuid}`.execute(db);
        text += parts[0]?.part ?? '';
      }
      texts.set(rowKey(row), text);
      continue;
    }
    if (group.length > 0 && bytes + row.bytes > CALL_BYTES) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(row);
    bytes += row.bytes;
  }
  if (group.length > 0) groups.push(group);
  for (const members of groups) {
    const pairs = members.map((row) => sql`(${row.organisation}, ${row.uuid})`);
    const { rows: found } = await sql<{ organisation: string; uuid: string; document: string }>`
      SELECT t.organisation_uuid AS organisation, t.uuid AS uuid, t.document::text AS document FROM ${table} AS t
      WHERE (t.organisation_uuid, t.uuid) IN (${sql.join(pairs)})`.execute(db);
    for (const row of found) texts.set(rowKey(row), row.document);
  }
  return texts;
}

/**
 * Each sort key's value as text: numbers in float8's or bigint's own shortest exact spelling,
 * strings JSON-quoted, booleans as `true`/`false`.
 */
function sortColumns(request: SearchRequest, source: SqlSearchSource): Sql {
  return sql.join(
    request.sort.map((key, index) => {
      const value = sortValue(key, source);
      const text = key.fieldType === 'string' ? sql`to_jsonb(${value})::text` : sql`(${value})::text`;
      return sql`${text} AS ${sql.ref(`s${index}`)}`;
    }),
  );
}

function sortValueOf(key: SortKey, text: string | null | undefined): SortValue {
  if (text === null || text === undefined) return null;
  if (key.fieldType === 'numeric') return toNumber(Number(text)) ?? null;
  return JSON.parse(text) as SortValue;
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
