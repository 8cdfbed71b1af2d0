import type { Aggregation } from './aggregation-request';
import { ExactSum } from './exact-sum';
import { forEachValueAt, splitFieldPath } from './field-path';
import type { FieldType } from './field-schemas';
import { readAs, toNumber } from './numeric';
import type { Scalar } from './query';
import type { SearchDocument } from './query-compiler';

export interface TermBucket {
  readonly key: Scalar;
  readonly doc_count: number;
}

export interface SumBucket {
  readonly key: 'sum';
  /** A number when exact as a double, otherwise the exact decimal string (see ExactSum). */
  readonly value: number | string;
}

export type AggregationResult = readonly TermBucket[] | readonly SumBucket[];

/** Fed every matching document, not just the page, then asked for its buckets once. */
export interface Aggregator {
  readonly name: string;
  add(document: SearchDocument): void;
  result(): AggregationResult;
}

export function createAggregator(aggregation: Aggregation): Aggregator {
  const segments = splitFieldPath(aggregation.field);
  if (aggregation.type === 'sum') {
    const sum = new ExactSum();
    return {
      name: aggregation.name,
      add: (document) => forEachValueAt(document, segments, (value) => sum.add(value)),
      result: () => [{ key: 'sum', value: sum.value() }],
    };
  }
  const toKey = termKeyOf(aggregation.fieldType);
  const counts = new Map<Scalar, number>();
  // A document counts once per distinct key, however often the key repeats in an array.
  const seen: Scalar[] = [];
  return {
    name: aggregation.name,
    add: (document) => {
      seen.length = 0;
      forEachValueAt(document, segments, (value) => {
        const key = toKey(value);
        if (key === undefined || seen.includes(key)) return;
        seen.push(key);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      });
    },
    result: () =>
      [...counts]
        .sort(([keyA, countA], [keyB, countB]) => countB - countA || compareKeys(keyA, keyB))
        .slice(0, aggregation.size)
        .map(([key, doc_count]) => ({ key, doc_count })),
  };
}

/**
 * With a field type, values are read as that type (numeric takes numeric strings, so `"1000"` and
 * `1000` share a bucket) and others are skipped; without one, every string, number and boolean is
 * its own key, `"1"` apart from `1`.
 */
function termKeyOf(type: FieldType | undefined): (value: unknown) => Scalar | undefined {
  if (type !== undefined) return readAs(type);
  return (value) =>
    typeof value === 'string' || typeof value === 'boolean'
      ? value
      : typeof value === 'number'
        ? toNumber(value)
        : undefined;
}

/** Ties in count list by key: booleans, then numbers, then strings, each in natural order. */
function compareKeys(a: Scalar, b: Scalar): number {
  const rank = typeRank(a) - typeRank(b);
  if (rank !== 0) return rank;
  return a < b ? -1 : a > b ? 1 : 0;
}

function typeRank(key: Scalar): number {
  return typeof key === 'boolean' ? 0 : typeof key === 'number' ? 1 : 2;
}
