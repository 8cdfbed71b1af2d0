import type { PolicyCondition } from './policy-document';

/**
 * Evaluation of POST policy conditions against a form, as S3 does it (AWS's "Creating a POST
 * Policy", condition matching). Field names are case-insensitive (callers pass them lower-cased);
 * values are compared case-sensitively. A field the form lacks has the value "".
 */
export interface ConditionSubject {
  /** The value of a form field (or `bucket`, the bucket of the URL); "" when absent. */
  field(name: string): string;
  /** Byte length of the uploaded file. */
  size: number;
}

export function conditionHolds(condition: PolicyCondition, subject: ConditionSubject): boolean {
  switch (condition.kind) {
    case 'eq':
      return subject.field(condition.field) === condition.value;
    case 'starts-with':
      return startsWithHolds(condition.field, subject.field(condition.field), condition.prefix);
    case 'content-length-range':
      return subject.size >= condition.min && subject.size <= condition.max;
  }
}

/**
 * An empty prefix matches anything. A Content-Type with commas is a list, and every item must
 * start with the prefix (so `image/png,text/html` does not pass `starts-with image/`).
 */
function startsWithHolds(field: string, value: string, prefix: string): boolean {
  if (field === 'content-type') return value.split(',').every((item) => item.startsWith(prefix));
  return value.startsWith(prefix);
}

/** The condition as S3 quotes it in "Policy Condition failed: [...]". */
export function describeCondition(condition: PolicyCondition): string {
  const items =
    condition.kind === 'content-length-range'
      ? [condition.kind, condition.min, condition.max]
      : [condition.kind, `$${condition.field}`, condition.kind === 'eq' ? condition.value : condition.prefix];
  return `[${items.map((item) => JSON.stringify(item)).join(', ')}]`;
}

/** Fields that need no condition: the policy, its signature, the file and `x-ignore-*`. */
export function isExemptField(name: string): boolean {
  return name === 'policy' || name === 'x-amz-signature' || name === 'file' || name.startsWith('x-ignore-');
}

/** Form fields no condition names: S3 refuses them ("Extra input fields"). */
export function uncoveredFields(fieldNames: Iterable<string>, conditions: readonly PolicyCondition[]): string[] {
  const covered = new Set(conditions.flatMap((condition) => ('field' in condition ? [condition.field] : [])));
  return [...fieldNames].filter((name) => !isExemptField(name) && !covered.has(name));
}

/** The size window every content-length-range condition allows together, if any names one. */
export function lengthRange(conditions: readonly PolicyCondition[]): { min: number; max: number } | undefined {
  let range: { min: number; max: number } | undefined;
  for (const condition of conditions) {
    if (condition.kind !== 'content-length-range') continue;
    range = {
      min: Math.max(range?.min ?? 0, condition.min),
      max: Math.min(range?.max ?? Number.POSITIVE_INFINITY, condition.max),
    };
  }
  return range;
}
