import { forEachValueAt, splitFieldPath } from './field-path';
import type { FieldType } from './field-schemas';
import { readAs } from './numeric';
import type { SearchDocument } from './query-compiler';
import type { SortDirection, SortKey, SortValue } from './sort-request';

/**
 * A document's position in the result order: one value per sort key, then its uuid, the unique
 * tie-break that makes the order total. The same tuple is `summary.last_sort_values` and, sent
 * back as `search_after`, the point the next page starts strictly after.
 */
export type SortTuple = readonly SortValue[];

export interface SortOrder {
  readonly tupleOf: (document: SearchDocument) => SortTuple;
  /** Negative when `a` comes first; 0 only for equal tuples. */
  readonly compare: (a: SortTuple, b: SortTuple) => number;
}

export function compileSortOrder(sort: readonly SortKey[]): SortOrder {
  const extractors = sort.map(sortValueExtractor);
  const directions: SortDirection[] = [...sort.map((key) => key.direction), 'asc'];
  return {
    tupleOf: (document) => {
      const tuple: SortValue[] = extractors.map((extract) => extract(document));
      tuple.push(typeof document.uuid === 'string' ? document.uuid : '');
      return tuple;
    },
    compare: (a, b) => {
      for (let index = 0; index < directions.length; index++) {
        const order = compareSortValues(a[index] ?? null, b[index] ?? null, directions[index] ?? 'asc');
        if (order !== 0) return order;
      }
      return 0;
    },
  };
}

/**
 * Values of the wrong type count as missing: a numeric key reads numbers and numeric strings, a
 * string key strings, a boolean key booleans. A field holding several values sorts by its
 * smallest ascending and its largest descending, as search indexes do.
 */
function sortValueExtractor(key: SortKey): (document: SearchDocument) => SortValue {
  const segments = splitFieldPath(key.field);
  const convert = converterFor(key.fieldType);
  const wanted = key.direction === 'asc' ? -1 : 1;
  return (document) => {
    let best: SortValue = null;
    forEachValueAt(document, segments, (value) => {
      const converted = convert(value);
      if (converted !== undefined && (best === null || Math.sign(compareValues(converted, best)) === wanted)) {
        best = converted;
      }
    });
    return best;
  };
}

function converterFor(type: FieldType): (value: unknown) => Exclude<SortValue, null> | undefined {
  return readAs(type);
}

/** Missing values (null) sort last in both directions, so a page never starts with gaps. */
function compareSortValues(a: SortValue, b: SortValue, direction: SortDirection): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  const order = compareValues(a, b);
  return direction === 'asc' ? order : -order;
}

/** Values of one key share a type: numbers by value, strings by code unit, false before true. */
function compareValues(a: Exclude<SortValue, null>, b: Exclude<SortValue, null>): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
