import { deferred } from '@svc/core';
import * as z from 'zod';
import { type FieldType, fieldPathSchema, fieldTypeSchema } from './field-schemas';
import { toNumber } from './numeric';
import { DETAIL_CODES, type Problems } from './problems';

export type SortDirection = 'asc' | 'desc';

export interface SortKey {
  readonly field: string;
  readonly fieldType: FieldType;
  readonly direction: SortDirection;
}

/** A sort value as `summary.last_sort_values` carries it; null stands for a missing value. */
export type SortValue = string | number | boolean | null;

/** Newest first, as lists are (contract: `created` is the service clock's timestamp). */
export const DEFAULT_SORT: readonly SortKey[] = [{ field: 'created', fieldType: 'numeric', direction: 'desc' }];

export const sortKeySchema = deferred(() =>
  z
    .strictObject({
      field: fieldPathSchema,
      field_type: fieldTypeSchema,
      direction: z.enum(['asc', 'desc']).default('asc'),
    })
    .transform((key): SortKey => ({ field: key.field, fieldType: key.field_type, direction: key.direction })),
);

/**
 * The cursor must have the shape this request's sort gives `last_sort_values`: a value of the
 * key's type (or null for missing) per sort key, then the uuid. Numeric keys also take numeric
 * strings and are normalised to numbers, the form responses carry.
 */
export function parseSearchAfter(
  raw: readonly unknown[],
  sort: readonly SortKey[],
  from: number,
  problems: Problems,
): SortValue[] | undefined {
  if (from > 0) {
    problems.add(['search_after'], DETAIL_CODES.notValid, 'search_after cannot be combined with from greater than 0');
  }
  if (raw.length !== sort.length + 1) {
    const message = `search_after takes ${sort.length + 1} values: one per sort key, then the uuid`;
    problems.add(['search_after'], DETAIL_CODES.notValid, message);
    return undefined;
  }
  const values: SortValue[] = [];
  for (const [index, value] of raw.entries()) {
    const key = sort[index];
    const normalised = key ? sortValueOfType(value, key.fieldType) : typeof value === 'string' ? value : undefined;
    if (normalised === undefined) {
      const expected = key ? `a ${key.fieldType} value or null` : 'the uuid';
      problems.add(['search_after', index], DETAIL_CODES.notValid, `Expected ${expected}`);
    } else {
      values.push(normalised);
    }
  }
  return values.length === raw.length ? values : undefined;
}

function sortValueOfType(value: unknown, type: FieldType): SortValue | undefined {
  if (value === null) return null;
  switch (type) {
    case 'numeric':
      return toNumber(value);
    case 'string':
      return typeof value === 'string' ? value : undefined;
    case 'boolean':
      return typeof value === 'boolean' ? value : undefined;
  }
}
