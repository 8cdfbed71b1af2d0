import type { SortableField, Supporter } from './supporter';

export type SortOrder = 'asc' | 'desc';

/**
 * Text compares as people read it: case and accents only break ties, and digit runs compare as
 * numbers ("9" before "10", so postal codes and birth years sort naturally). Made at the first
 * sort by a text field, not at module load: building an ICU collator costs a cold start about 6 ms.
 */
let textCollator: Intl.Collator | undefined;

function collator(): Intl.Collator {
  textCollator ??= new Intl.Collator('en', { numeric: true });
  return textCollator;
}

type Value = Supporter[SortableField];

function compareValues(a: NonNullable<Value>, b: NonNullable<Value>): number {
  if (typeof a === 'string' && typeof b === 'string') return collator().compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  // Objects (custom_parameters, svc_parameters) have no natural order: compare their JSON text.
  return compareValues(canonicalJson(a), canonicalJson(b));
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}

/** Creation order, then uuid: the order of the organisation index. */
export function byCreation(order: SortOrder) {
  const sign = order === 'desc' ? -1 : 1;
  return (a: Supporter, b: Supporter) =>
    sign * (a.created - b.created || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
}

/**
 * Orders by one top-level field. Supporters without the field come last in both directions;
 * ties keep creation order (oldest first), so paging is stable.
 */
export function byField(field: SortableField, order: SortOrder) {
  const sign = order === 'desc' ? -1 : 1;
  const tieBreak = byCreation('asc');
  return (a: Supporter, b: Supporter) => {
    const x = a[field];
    const y = b[field];
    if (x === undefined || y === undefined) {
      if (x === undefined && y === undefined) return tieBreak(a, b);
      return x === undefined ? 1 : -1;
    }
    return sign * compareValues(x, y) || tieBreak(a, b);
  };
}
