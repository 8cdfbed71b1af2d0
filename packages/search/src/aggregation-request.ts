import { deferred } from '@svc/core';
import * as z from 'zod';
import { isRecord } from './field-path';
import { type FieldType, fieldPathSchema, fieldTypeSchema } from './field-schemas';
import { SEARCH_LIMITS } from './limits';
import { DETAIL_CODES, type Problems } from './problems';
import type { FieldGuard } from './searchable-fields';

export type Aggregation =
  | {
      readonly name: string;
      readonly type: 'term';
      readonly field: string;
      readonly size: number;
      readonly fieldType?: FieldType;
    }
  | { readonly name: string; readonly type: 'sum'; readonly field: string };

/** Read first, so an unknown type is reported as a wrong choice at `aggs.<name>.type`. */
const aggregationType = deferred(() => z.looseObject({ type: z.enum(['term', 'sum']) }));
const termAggregation = deferred(() =>
  z.strictObject({
    type: z.literal('term'),
    field: fieldPathSchema,
    size: z.int().min(1).max(SEARCH_LIMITS.maxTermBuckets).default(SEARCH_LIMITS.defaultTermBuckets),
    field_type: fieldTypeSchema.optional(),
  }),
);
/** A sum is numeric by nature; `field_type` is accepted so clients may send it uniformly. */
const sumAggregation = deferred(() =>
  z.strictObject({
    type: z.literal('sum'),
    field: fieldPathSchema,
    field_type: z.literal('numeric').optional(),
  }),
);

/**
 * `aggs` maps names to definitions. Walked by hand rather than with `z.record`, which drops a
 * `__proto__` name silently; here every name is either kept or reported.
 */
export function parseAggregations(raw: unknown, allowed: FieldGuard, problems: Problems): Aggregation[] | undefined {
  if (raw === undefined || raw === null) return [];
  if (!isRecord(raw)) {
    problems.add(['aggs'], DETAIL_CODES.invalidType, 'Aggregations are an object mapping names to definitions');
    return undefined;
  }
  const entries = Object.entries(raw);
  if (entries.length > SEARCH_LIMITS.maxAggregations) {
    problems.add(['aggs'], DETAIL_CODES.tooBig, `At most ${SEARCH_LIMITS.maxAggregations} aggregations`);
    return undefined;
  }
  const aggs: Aggregation[] = [];
  for (const [name, definition] of entries) {
    const at = ['aggs', name];
    if (name.length === 0 || name.length > SEARCH_LIMITS.maxAggregationNameLength) {
      const message = `An aggregation name has 1 to ${SEARCH_LIMITS.maxAggregationNameLength} characters`;
      problems.add(at, DETAIL_CODES.notValid, message);
      continue;
    }
    const aggregation = parseAggregation(name, definition, problems);
    if (aggregation && !allowed(aggregation.field)) {
      problems.add([...at, 'field'], DETAIL_CODES.invalidChoice, `The field ${aggregation.field} cannot be aggregated`);
    } else if (aggregation) {
      aggs.push(aggregation);
    }
  }
  return aggs.length === entries.length ? aggs : undefined;
}

function parseAggregation(name: string, definition: unknown, problems: Problems): Aggregation | undefined {
  const at = ['aggs', name];
  const typed = aggregationType.safeParse(definition, { reportInput: true });
  if (!typed.success) {
    problems.addIssues(at, typed.error.issues);
    return undefined;
  }
  if (typed.data.type === 'sum') {
    const sum = sumAggregation.safeParse(definition, { reportInput: true });
    if (sum.success) return { name, type: 'sum', field: sum.data.field };
    problems.addIssues(at, sum.error.issues);
    return undefined;
  }
  const term = termAggregation.safeParse(definition, { reportInput: true });
  if (!term.success) {
    problems.addIssues(at, term.error.issues);
    return undefined;
  }
  const { field, size, field_type } = term.data;
  return field_type ? { name, type: 'term', field, size, fieldType: field_type } : { name, type: 'term', field, size };
}
