import { type RawBuilder, sql } from 'kysely';
import type { Aggregation } from '../aggregation-request';
import type { FieldType } from '../field-schemas';
import type { Query, RangeBounds, Scalar } from '../query';
import type { SortKey, SortValue } from '../sort-request';
import { jsonPath, jsonPathLiteral, numberText, storableText } from './json-path';

/**
 * The search language as SQL over a table of documents (`document jsonb`, alias `t`). Every
 * value is a bound parameter; field paths become jsonpath parameters, never SQL text. Fields a
 * table keeps in typed columns (always present, one value) are compiled against the column where
 * that is exactly the language's meaning, so indexes serve them; anything else reads the
 * document, which is always right.
 */
export type Sql = RawBuilder<unknown>;

/** How a typed column holds a field the document also has. */
export type ColumnKind =
  /** A JSON number in the document (`created`). */
  | 'number'
  /** Integer digits in the document as a string, an integer column (`amount.value`). */
  | 'digits'
  /** A string in the document (`status`). */
  | 'text';

export interface SqlSearchSource {
  /**
   * The relation searched, aliased `t`: a table of ours (`sql.table('payment_search')`), or a
   * subquery deriving documents at search time (never anything from a request). It has
   * `organisation_uuid`, `uuid` and `document` besides the typed columns.
   */
  from: Sql;
  /** Field path → typed column holding the same value. */
  columns: Readonly<Record<string, { column: string; kind: ColumnKind }>>;
}

/** The typed column of a field, if the source keeps one (own keys only: `constructor` is a field like any). */
function typedColumn(source: SqlSearchSource, field: string) {
  return Object.hasOwn(source.columns, field) ? source.columns[field] : undefined;
}

const TRUE = sql`TRUE`;
const FALSE = sql`FALSE`;
/** Digits an integer column can hold and a stored amount can be (safe integers have 16 digits at most). */
const CANONICAL_DIGITS = /^(0|[1-9][0-9]{0,15})$/;

const and = (parts: Sql[]): Sql => (parts.length === 0 ? TRUE : sql`(${sql.join(parts, sql` AND `)})`);
const or = (parts: Sql[]): Sql => (parts.length === 0 ? FALSE : sql`(${sql.join(parts, sql` OR `)})`);
const numeric = (value: number): Sql => sql`${numberText(value)}::numeric`;
/**
 * The language compares numbers as doubles (a numeric string reads as the double it rounds to),
 * so values read from documents are compared as float8, which PostgreSQL rounds the same way;
 * typed integer columns hold safe integers, which both compare exactly.
 */
const double = (value: number): Sql => sql`${numberText(value)}::float8`;
const NUMBER_AT_V = sql`svc_double(v.value)`;
const column = (name: string): Sql => sql.ref(`t.${name}`);

export function compileWhere(query: Query, source: SqlSearchSource): Sql {
  switch (query.op) {
    case 'all':
      return TRUE;
    case 'and':
      return and(query.clauses.map((clause) => compileWhere(clause, source)));
    case 'or':
      return or(query.clauses.map((clause) => compileWhere(clause, source)));
    case 'not':
      return sql`(NOT ${compileWhere(query.clause, source)})`;
    default: {
      const typed = typedColumn(source, query.field);
      return (typed && columnLeaf(query, column(typed.column), typed.kind)) ?? documentLeaf(query);
    }
  }
}

type Leaf = Exclude<Query, { op: 'all' | 'and' | 'or' | 'not' }>;

/** Values reached by the path, one row each, as `v.value`. */
const valuesAt = (field: string): Sql => sql`jsonb_path_query(t.document, ${jsonPath(field)}::jsonpath) AS v(value)`;
const someValue = (field: string, test: Sql): Sql => sql`EXISTS (SELECT 1 FROM ${valuesAt(field)} WHERE ${test})`;
const pathHolds = (field: string, filter: string): Sql => sql`(t.document @? ${jsonPath(field, filter)}::jsonpath)`;

function documentLeaf(query: Leaf): Sql {
  switch (query.op) {
    case 'term':
      return pathHolds(query.field, `@ == ${jsonPathLiteral(query.value)}`);
    case 'terms':
      return pathHolds(query.field, query.values.map((value) => `@ == ${jsonPathLiteral(value)}`).join(' || '));
    case 'exists':
      return pathHolds(query.field, '@.type() != "null"');
    case 'range':
      return someValue(query.field, rangeTest(NUMBER_AT_V, query.bounds, double));
    case 'match': {
      const { value } = query;
      if (typeof value === 'string') {
        return someValue(
          query.field,
          sql`jsonb_typeof(v.value) = 'string' AND lower(v.value #>> '{}') = lower(${storableText(value)})`,
        );
      }
      if (typeof value === 'number') return someValue(query.field, sql`${NUMBER_AT_V} = ${double(value)}`);
      return pathHolds(query.field, `@ == ${jsonPathLiteral(value)}`);
    }
  }
}

function rangeTest(value: Sql, bounds: RangeBounds, bound: (value: number) => Sql): Sql {
  const parts: Sql[] = [sql`${value} IS NOT NULL`];
  if (bounds.gt !== undefined) parts.push(sql`${value} > ${bound(bounds.gt)}`);
  if (bounds.gte !== undefined) parts.push(sql`${value} >= ${bound(bounds.gte)}`);
  if (bounds.lt !== undefined) parts.push(sql`${value} < ${bound(bounds.lt)}`);
  if (bounds.lte !== undefined) parts.push(sql`${value} <= ${bound(bounds.lte)}`);
  return and(parts);
}

/**
 * A range on an integer column, with integer bounds of the column's own type so its index
 * serves: for integers, `> b` is `> floor(b)`, `>= b` is `>= ceil(b)`, `< b` is `< ceil(b)` and
 * `<= b` is `<= floor(b)`. Bounds beyond the safe integers compare as numeric instead.
 */
function integerRange(col: Sql, bounds: RangeBounds): Sql {
  const parts: Sql[] = [];
  const add = (operator: string, value: number | undefined, round: (value: number) => number) => {
    if (value === undefined) return;
    const rounded = round(value);
    const bound = Number.isSafeInteger(rounded) ? sql`${String(rounded)}::bigint` : numeric(value);
    parts.push(sql`${col} ${sql.raw(operator)} ${bound}`);
  };
  add('>', bounds.gt, Math.floor);
  add('>=', bounds.gte, Math.ceil);
  add('<', bounds.lt, Math.ceil);
  add('<=', bounds.lte, Math.floor);
  return and(parts);
}

/** Equality of an integer column with a number: none unless the number is an integer. */
function integerEquals(col: Sql, value: number): Sql {
  if (!Number.isInteger(value)) return FALSE;
  return Number.isSafeInteger(value) ? sql`${col} = ${String(value)}::bigint` : sql`${col} = ${numeric(value)}`;
}

/** The leaf on a typed column, or undefined where only the document answers exactly. */
function columnLeaf(query: Leaf, col: Sql, kind: ColumnKind): Sql | undefined {
  if (query.op === 'exists') return TRUE;
  if (kind === 'number') {
    const isNumber = (value: Scalar) => typeof value === 'number';
    switch (query.op) {
      case 'term':
      case 'match':
        return isNumber(query.value) ? integerEquals(col, query.value as number) : FALSE;
      case 'terms':
        return or(query.values.filter(isNumber).map((value) => integerEquals(col, value as number)));
      case 'range':
        return integerRange(col, query.bounds);
    }
  }
  if (kind === 'digits') {
    const digits = (value: Scalar) => typeof value === 'string' && CANONICAL_DIGITS.test(value);
    switch (query.op) {
      case 'term':
        return digits(query.value) ? sql`${col} = ${query.value}::bigint` : FALSE;
      case 'terms':
        return or(query.values.filter(digits).map((value) => sql`${col} = ${value}::bigint`));
      case 'match':
        if (typeof query.value === 'number') return integerEquals(col, query.value);
        return digits(query.value) ? sql`${col} = ${query.value}::bigint` : FALSE;
      case 'range':
        return integerRange(col, query.bounds);
    }
  }
  switch (query.op) {
    case 'term':
      return typeof query.value === 'string' ? sql`${col} = ${storableText(query.value)}` : FALSE;
    case 'terms': {
      const strings = query.values.filter((value): value is string => typeof value === 'string').map(storableText);
      return strings.length === 0 ? FALSE : sql`${col} IN (${sql.join(strings)})`;
    }
    case 'match':
      if (typeof query.value === 'string') return sql`lower(${col}) = lower(${storableText(query.value)})`;
      return typeof query.value === 'boolean' ? FALSE : undefined;
    case 'range':
      return undefined;
  }
}

/** A sort key's value per row: the smallest of the field's values ascending, the largest descending. */
export function sortValue(key: SortKey, source: SqlSearchSource): Sql {
  const typed = typedColumn(source, key.field);
  if (typed) {
    const col = column(typed.column);
    if (key.fieldType === 'numeric' && typed.kind !== 'text') return col;
    if (key.fieldType === 'string' && typed.kind === 'text') return col;
    if (key.fieldType === 'string' && typed.kind === 'digits') return sql`(${col}::text COLLATE "C")`;
  }
  const pick = key.direction === 'asc' ? 'min' : 'max';
  const from = valuesAt(key.field);
  switch (key.fieldType) {
    case 'numeric':
      return sql`(SELECT ${sql.raw(pick)}(svc_double(v.value)) FROM ${from})`;
    case 'string':
      return sql`(SELECT ${sql.raw(pick)}((v.value #>> '{}') COLLATE "C") FROM ${from} WHERE jsonb_typeof(v.value) = 'string')`;
    case 'boolean':
      return sql`(SELECT ${sql.raw(key.direction === 'asc' ? 'bool_and' : 'bool_or')}((v.value)::boolean) FROM ${from} WHERE jsonb_typeof(v.value) = 'boolean')`;
  }
}

export function orderBy(sort: readonly SortKey[], source: SqlSearchSource): Sql {
  const keys = sort.map((key) => {
    const direction = sql.raw(key.direction === 'asc' ? 'ASC' : 'DESC');
    // A typed column always has its value, so it needs no NULLS clause, and the ordering then
    // matches its index (`created DESC, uuid` serves the default sort).
    if (isColumnSort(key, source)) return sql`${sortValue(key, source)} ${direction}`;
    return sql`${sortValue(key, source)} ${direction} NULLS LAST`;
  });
  return sql.join([...keys, sql`t.uuid ASC`]);
}

function isColumnSort(key: SortKey, source: SqlSearchSource): boolean {
  const typed = typedColumn(source, key.field);
  if (!typed) return false;
  if (key.fieldType === 'numeric') return typed.kind !== 'text';
  return key.fieldType === 'string' && typed.kind !== 'number';
}

function typedValue(value: Exclude<SortValue, null>, type: FieldType): Sql {
  if (type === 'numeric') return double(value as number);
  if (type === 'boolean') return sql`${value}::boolean`;
  return sql`(${storableText(String(value))}::text COLLATE "C")`;
}

/**
 * Rows strictly after the cursor in the sort order (missing values last in both directions,
 * then the uuid): the keyset condition `search_after` pages with.
 */
export function after(sort: readonly SortKey[], cursor: readonly SortValue[], source: SqlSearchSource): Sql {
  const step = (index: number): Sql => {
    const key = sort[index];
    if (!key) return sql`t.uuid > ${storableText(String(cursor[index]))}`;
    const expression = sortValue(key, source);
    const value = cursor[index] ?? null;
    if (value === null) return and([sql`${expression} IS NULL`, step(index + 1)]);
    const bound = typedValue(value, key.fieldType);
    const beyond = key.direction === 'asc' ? sql`${expression} > ${bound}` : sql`${expression} < ${bound}`;
    return or([beyond, sql`${expression} IS NULL`, and([sql`${expression} = ${bound}`, step(index + 1)])]);
  };
  return step(0);
}

/** One term aggregation's query: keys as JSON text with their document counts, best first. */
export function termAggregation(
  aggregation: Extract<Aggregation, { type: 'term' }>,
  source: SqlSearchSource,
  where: Sql,
): Sql {
  const table = source.from;
  const tieOrder = sql`CASE jsonb_typeof(k) WHEN 'boolean' THEN 0 WHEN 'number' THEN 1 ELSE 2 END,
    CASE WHEN jsonb_typeof(k) = 'boolean' THEN (k)::boolean END,
    CASE WHEN jsonb_typeof(k) = 'number' THEN (k)::numeric END,
    (k #>> '{}') COLLATE "C"`;
  const order = sql`count(*) DESC, ${tieOrder}`;
  const typed = typedColumn(source, aggregation.field);
  const direct = typed && columnKey(typed.kind, column(typed.column), aggregation.fieldType);
  if (direct) {
    // Grouped on the column itself (cheap), the key made JSON once per group.
    return sql`SELECT k::text AS key, n::text AS doc_count FROM (
        SELECT ${direct} AS k, count(*) AS n FROM ${table} AS t WHERE ${where} GROUP BY ${column(typed.column)}
      ) x ORDER BY n DESC, ${tieOrder} LIMIT ${aggregation.size}`;
  }
  return sql`SELECT k::text AS key, count(*)::text AS doc_count
    FROM (SELECT DISTINCT t.uuid, ${documentKey(aggregation.fieldType)} AS k
          FROM ${table} AS t, ${valuesAt(aggregation.field)} WHERE ${where}) x
    WHERE k IS NOT NULL GROUP BY k ORDER BY ${order} LIMIT ${aggregation.size}`;
}

function columnKey(kind: ColumnKind, col: Sql, type: FieldType | undefined): Sql | undefined {
  if (kind === 'number' && (type === 'numeric' || type === undefined)) return sql`to_jsonb(${col})`;
  if (kind === 'text' && (type === 'string' || type === undefined)) return sql`to_jsonb(${col})`;
  if (kind === 'digits' && type === 'numeric') return sql`to_jsonb(${col})`;
  if (kind === 'digits' && (type === 'string' || type === undefined)) return sql`to_jsonb(${col}::text)`;
  return undefined;
}

function documentKey(type: FieldType | undefined): Sql {
  switch (type) {
    case 'numeric':
      return sql`to_jsonb(svc_double(v.value))`;
    case 'string':
      return sql`CASE WHEN jsonb_typeof(v.value) = 'string' THEN v.value END`;
    case 'boolean':
      return sql`CASE WHEN jsonb_typeof(v.value) = 'boolean' THEN v.value END`;
    default:
      return sql`CASE WHEN jsonb_typeof(v.value) IN ('string', 'number', 'boolean') THEN v.value END`;
  }
}

/** One sum aggregation's query: the exact total as decimal text, NULL when nothing is numeric. */
export function sumAggregation(field: string, source: SqlSearchSource, where: Sql): Sql {
  const table = source.from;
  const typed = typedColumn(source, field);
  if (typed && typed.kind !== 'text') {
    return sql`SELECT sum(${column(typed.column)})::text AS total FROM ${table} AS t WHERE ${where}`;
  }
  return sql`SELECT sum(svc_numeric(v.value))::text AS total FROM ${table} AS t, ${valuesAt(field)}
    WHERE ${where} AND svc_double(v.value) IS NOT NULL`;
}
