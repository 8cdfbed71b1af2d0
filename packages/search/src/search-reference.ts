import fc from 'fast-check';

/**
 * Property tests against a deliberately plain reference: it interprets the wire JSON directly
 * (no parsed tree, no closures), collects field values into arrays, sorts by insertion and sums
 * in BigInt cents. Where the two disagree, one of them misreads the contract.
 */

export type Doc = Record<string, unknown>;
type WireScalar = string | number | boolean;
type WireBounds = { gt?: WireScalar; gte?: WireScalar; lt?: WireScalar; lte?: WireScalar };
export type WireClause =
  | { $and: WireClause[] }
  | { $or: WireClause[] }
  | { $not: WireClause }
  | { $exists: string }
  | { $match: Record<string, WireScalar> }
  | { $term: Record<string, WireScalar> }
  | { $terms: Record<string, WireScalar[]> }
  | { $range: Record<string, WireBounds> };

// ---------------------------------------------------------------- reference implementation

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function valuesAt(node: unknown, path: string[]): unknown[] {
  if (Array.isArray(node)) return node.flatMap((element) => valuesAt(element, path));
  const [head, ...rest] = path;
  if (head === undefined) return node === undefined ? [] : [node];
  if (!isObject(node) || !Object.keys(node).includes(head)) return [];
  return valuesAt(node[head], rest);
}

function values(document: Doc, field: string): unknown[] {
  return valuesAt(document, field.split('.'));
}

function numeric(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? (value === 0 ? 0 : value) : undefined;
  if (typeof value !== 'string' || !/^-?\d+(\.\d+)?$/.test(value)) return undefined;
  const parsed = Number.parseFloat(value);
  if (!Number.isFinite(parsed)) return undefined;
  return parsed === 0 ? 0 : parsed;
}

function looselyEqual(value: unknown, wanted: WireScalar): boolean {
  if (typeof wanted === 'string') return typeof value === 'string' && value.toLowerCase() === wanted.toLowerCase();
  if (typeof wanted === 'number') return numeric(value) === wanted;
  return value === wanted;
}

function inRange(value: unknown, bounds: WireBounds): boolean {
  const n = numeric(value);
  if (n === undefined) return false;
  const gt = numeric(bounds.gt);
  const gte = numeric(bounds.gte);
  const lt = numeric(bounds.lt);
  const lte = numeric(bounds.lte);
  return (
    (gt === undefined || n > gt) &&
    (gte === undefined || n >= gte) &&
    (lt === undefined || n < lt) &&
    (lte === undefined || n <= lte)
  );
}

/** Every field of the leaf holds when some value at that field passes. */
function everyField<T>(fields: Record<string, T>, document: Doc, passes: (value: unknown, operand: T) => boolean) {
  return Object.entries(fields).every(([name, operand]) =>
    values(document, name).some((value) => passes(value, operand)),
  );
}

export function referenceMatches(clause: WireClause, document: Doc): boolean {
  if ('$and' in clause) return clause.$and.every((inner) => referenceMatches(inner, document));
  if ('$or' in clause) return clause.$or.some((inner) => referenceMatches(inner, document));
  if ('$not' in clause) return !referenceMatches(clause.$not, document);
  if ('$exists' in clause) return values(document, clause.$exists).some((value) => value !== null);
  if ('$match' in clause) return everyField(clause.$match, document, looselyEqual);
  if ('$term' in clause) return everyField(clause.$term, document, (value, wanted) => value === wanted);
  if ('$terms' in clause) return everyField(clause.$terms, document, (value, list) => list.some((w) => w === value));
  return everyField(clause.$range, document, inRange);
}

type FieldType = 'string' | 'numeric' | 'boolean';

interface WireSort {
  field: string;
  field_type: FieldType;
  direction: 'asc' | 'desc';
}

type WireAggregation =
  | { type: 'term'; field: string; size?: number; field_type?: FieldType }
  | { type: 'sum'; field: string };

export interface WireRequest {
  query: WireClause;
  sort?: WireSort[];
  aggs?: Record<string, WireAggregation>;
  size?: number;
  from?: number;
  includes?: string[];
  excludes?: string[];
}

function asType(value: unknown, type: FieldType): WireScalar | undefined {
  if (type === 'numeric') return numeric(value);
  if (type === 'string') return typeof value === 'string' ? value : undefined;
  return typeof value === 'boolean' ? value : undefined;
}

function keyRank(key: WireScalar): number {
  return typeof key === 'boolean' ? 0 : typeof key === 'number' ? 1 : 2;
}

/** Strictly before: booleans, then numbers, then strings; false before true. */
function before(a: WireScalar, b: WireScalar): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a < b;
  if (typeof a === 'string' && typeof b === 'string') return a < b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return !a && b;
  return keyRank(a) < keyRank(b);
}

type Position = (WireScalar | null)[];

function sortValues(document: Doc, sort: WireSort[]): Position {
  const keys = sort.map((key) => {
    const candidates = values(document, key.field)
      .map((value) => asType(value, key.field_type))
      .filter((value) => value !== undefined);
    let best: WireScalar | null = null;
    for (const candidate of candidates) {
      if (best === null) best = candidate;
      else if (key.direction === 'asc' ? before(candidate, best) : before(best, candidate)) best = candidate;
    }
    return best;
  });
  return [...keys, typeof document.uuid === 'string' ? document.uuid : ''];
}

function comesBefore(a: Position, b: Position, directions: string[]): boolean {
  for (let i = 0; i < directions.length; i++) {
    const x = a[i] ?? null;
    const y = b[i] ?? null;
    if (x === y) continue;
    if (x === null) return false;
    if (y === null) return true;
    return directions[i] === 'asc' ? before(x, y) : before(y, x);
  }
  return false;
}

function insertionSort<T>(items: T[], first: (a: T, b: T) => boolean): T[] {
  const sorted: T[] = [];
  for (const item of items) {
    let index = sorted.length;
    for (
      let previous = sorted[index - 1];
      previous !== undefined && first(item, previous);
      previous = sorted[index - 1]
    ) {
      index--;
    }
    sorted.splice(index, 0, item);
  }
  return sorted;
}

function pick(value: unknown, paths: string[][]): unknown {
  if (paths.some((path) => path.length === 0)) return value;
  if (Array.isArray(value)) {
    const kept = value.map((element) => pick(element, paths)).filter((element) => element !== undefined);
    return kept.length === 0 ? undefined : kept;
  }
  if (!isObject(value)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const below = paths.filter((path) => path[0] === key).map((path) => path.slice(1));
    if (below.length === 0) continue;
    const picked = pick(inner, below);
    if (picked !== undefined) out[key] = picked;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

function drop(value: unknown, paths: string[][]): unknown {
  if (Array.isArray(value)) return value.map((element) => drop(element, paths));
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const below = paths.filter((path) => path[0] === key).map((path) => path.slice(1));
    if (below.some((path) => path.length === 0)) continue;
    out[key] = below.length === 0 ? inner : drop(inner, below);
  }
  return out;
}

function cents(value: unknown): bigint | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? BigInt(Math.round(value * 100)) : undefined;
  if (numeric(value) === undefined) return undefined;
  const [whole = '', fraction = ''] = String(value).replace('-', '').split('.');
  const magnitude = BigInt(whole + fraction.padEnd(2, '0'));
  return String(value).startsWith('-') ? -magnitude : magnitude;
}

function exactValue(total: bigint): number | string {
  const sign = total < 0n ? '-' : '';
  const magnitude = total < 0n ? -total : total;
  const fraction = String(magnitude % 100n)
    .padStart(2, '0')
    .replace(/0+$/, '');
  const text = `${sign}${magnitude / 100n}${fraction ? `.${fraction}` : ''}`;
  return String(Number(text)) === text ? Number(text) : text;
}

function termKey(value: unknown, type: FieldType | undefined): WireScalar | undefined {
  if (type !== undefined) return asType(value, type);
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  return typeof value === 'number' ? numeric(value) : undefined;
}

function referenceAggregation(definition: WireAggregation, matches: Doc[]): unknown {
  const { field } = definition;
  if (definition.type === 'sum') {
    let total = 0n;
    for (const document of matches) for (const value of values(document, field)) total += cents(value) ?? 0n;
    return [{ key: 'sum', value: exactValue(total) }];
  }
  const buckets: { key: WireScalar; doc_count: number }[] = [];
  for (const document of matches) {
    const keys = values(document, field).map((value) => termKey(value, definition.field_type));
    for (const key of new Set(keys.filter((k) => k !== undefined))) {
      const bucket = buckets.find((b) => b.key === key);
      if (bucket) bucket.doc_count++;
      else buckets.push({ key, doc_count: 1 });
    }
  }
  const first = (a: (typeof buckets)[number], b: (typeof buckets)[number]) =>
    a.doc_count !== b.doc_count
      ? a.doc_count > b.doc_count
      : keyRank(a.key) !== keyRank(b.key)
        ? keyRank(a.key) < keyRank(b.key)
        : before(a.key, b.key);
  return insertionSort(buckets, first).slice(0, definition.size ?? 10);
}

export function referenceSearch(body: WireRequest, documents: Doc[]) {
  const matches = documents.filter((document) => referenceMatches(body.query, document));
  const given = body.sort ?? [];
  const sort: WireSort[] = given.length > 0 ? given : [{ field: 'created', field_type: 'numeric', direction: 'desc' }];
  const directions = [...sort.map((key) => key.direction), 'asc'];
  const keyed = matches.map((document) => ({ document, keys: sortValues(document, sort) }));
  const ordered = insertionSort(keyed, (a, b) => comesBefore(a.keys, b.keys, directions));
  const from = body.from ?? 0;
  const page = ordered.slice(from, from + (body.size ?? 10));
  const includes = (body.includes ?? []).map((path) => path.split('.'));
  const excludes = (body.excludes ?? []).map((path) => path.split('.'));
  const shape = (document: Doc) => {
    const kept = includes.length > 0 ? (pick(document, includes) ?? {}) : document;
    return excludes.length > 0 ? drop(kept, excludes) : kept;
  };
  const aggs = body.aggs ?? {};
  return {
    summary: { hits: matches.length, last_sort_values: page.at(-1)?.keys ?? [] },
    hits: page.map((entry) => shape(entry.document)),
    aggregations: Object.fromEntries(
      Object.entries(aggs).map(([name, definition]) => [name, referenceAggregation(definition, matches)]),
    ),
  };
}

// ---------------------------------------------------------------- generators

export const FIELDS = ['a', 'b', 'n', 'n.x', 'n.y', 'tags', 'amount.value', 'flag', 'created', 'missing'];
export const field = fc.constantFrom(...FIELDS);
/** Small value pools, so that queries and documents meet often enough to tell implementations apart. */
export const text = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('alpha', 'Alpha', 'ALPHA', 'beta') },
  { weight: 1, arbitrary: fc.constantFrom('', 'İ', 'i̇', '1e3', ' 5', 'Straße', 'STRASSE') },
);
const numericText = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: -2, max: 2 }).map(String) },
  { weight: 2, arbitrary: fc.constantFrom('007', '-0', '0.50', '-3.5', '1.25', '2.0') },
  { weight: 1, arbitrary: fc.constantFrom('9007199254740993', '90071992547409930', '123456789012345678') },
);
const number = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -2, max: 2 }) },
  { weight: 1, arbitrary: fc.integer({ min: -12, max: 12 }).map((n) => n / 4) },
);
const queryScalar = fc.oneof(text, numericText, number, fc.boolean());
const scalar = fc.oneof({ weight: 6, arbitrary: queryScalar }, { weight: 1, arbitrary: fc.constant(null) });
const fieldValue = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 2, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.record({ x: scalar, y: scalar }, { requiredKeys: [] }) },
);
const nested = fc.oneof(
  { weight: 3, arbitrary: fc.record({ x: fieldValue, y: fieldValue }, { requiredKeys: [] }) },
  { weight: 2, arbitrary: fc.array(fc.record({ x: scalar, y: scalar }, { requiredKeys: [] }), { maxLength: 3 }) },
  { weight: 1, arbitrary: scalar },
);
export const documentBody = fc.record(
  {
    a: fieldValue,
    b: fieldValue,
    n: nested,
    tags: fc.array(scalar, { maxLength: 4 }),
    amount: fc.record({ value: fc.oneof(numericText, number, text), currency: fc.constantFrom('CHF', 'EUR') }),
    flag: fc.oneof(fc.boolean(), fc.constant(null)),
    created: fc.oneof(fc.integer({ min: 0, max: 5 }), numericText),
  },
  { requiredKeys: [] },
);
/** Unique uuids in random order, so the tie-break never coincides with input order. */
export const uuids = fc.oneof(
  { weight: 1, arbitrary: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 4 }) },
  { weight: 4, arbitrary: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 10, maxLength: 40 }) },
);
export const documents = uuids.chain((ids) =>
  fc.tuple(...ids.map((uuid) => documentBody.map((body): Doc => ({ ...body, uuid })))),
);

const fieldsTo = <T>(value: fc.Arbitrary<T>, minKeys: number) =>
  fc
    .uniqueArray(fc.tuple(field, value), { minLength: minKeys, maxLength: 2, selector: ([name]) => name })
    .map((entries) => Object.fromEntries(entries));
const bound = fc.oneof(
  fc.integer({ min: -20, max: 20 }),
  numericText.filter((t) => t.length < 6),
);
const bounds: fc.Arbitrary<WireBounds> = fc
  .record({ gt: bound, gte: bound, lt: bound, lte: bound }, { requiredKeys: [] })
  .filter((b) => Object.keys(b).length > 0);
const leaf: fc.Arbitrary<WireClause> = fc.oneof(
  fieldsTo(queryScalar, 0).map(($match) => ({ $match })),
  fieldsTo(queryScalar, 1).map(($term) => ({ $term })),
  fieldsTo(fc.array(queryScalar, { minLength: 1, maxLength: 3 }), 1).map(($terms) => ({ $terms })),
  fieldsTo(bounds, 1).map(($range) => ({ $range })),
  field.map(($exists) => ({ $exists })),
);
export const { clause } = fc.letrec<{ clause: WireClause }>((tie) => ({
  clause: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    { weight: 3, arbitrary: leaf },
    fc.array(tie('clause'), { maxLength: 3 }).map(($and) => ({ $and })),
    fc.array(tie('clause'), { maxLength: 3 }).map(($or) => ({ $or })),
    tie('clause').map(($not) => ({ $not })),
  ),
}));
export const sortKey: fc.Arbitrary<WireSort> = fc.record({
  field,
  field_type: fc.constantFrom('string', 'numeric', 'boolean'),
  direction: fc.constantFrom('asc', 'desc'),
});
export const aggregation: fc.Arbitrary<WireAggregation> = fc.oneof(
  fc.record(
    { type: fc.constant('term'), field, size: fc.integer({ min: 1, max: 4 }) },
    { requiredKeys: ['type', 'field'] },
  ),
  fc.record({ type: fc.constant('term'), field, field_type: fc.constantFrom('string', 'numeric', 'boolean') }),
  fc.record({ type: fc.constant('sum'), field }),
);
const projection = fc.uniqueArray(fc.constantFrom('uuid', 'a', 'n.x', 'n', 'amount.value', 'tags', 'missing.z'), {
  maxLength: 3,
});
export const requestBody: fc.Arbitrary<WireRequest> = fc.record(
  {
    query: clause,
    sort: fc.array(sortKey, { maxLength: 3 }),
    aggs: fc.dictionary(fc.constantFrom('one', 'two', 'three'), aggregation, { maxKeys: 3 }),
    size: fc.integer({ min: 0, max: 12 }),
    from: fc.integer({ min: 0, max: 8 }),
    includes: projection,
    excludes: projection,
  },
  { requiredKeys: ['query'] },
);
