import type * as z from 'zod';
import { type ErrorDetail, ValidationError } from './errors';

/**
 * Maps zod issues to the contract's detail objects (the documented codes where they exist), one
 * mapping for the HTTP stack and for domain functions that validate their own input.
 * `location` picks the code for a missing value (a body field: not_blank, a query parameter:
 * not_null); `prefix` names where the input sits in the request (e.g. `supporter`).
 */
export function issuesToDetails(
  issues: readonly z.core.$ZodIssue[],
  options: { location?: 'body' | 'query'; prefix?: string } = {},
): ErrorDetail[] {
  const location = options.location ?? 'body';
  return issues.flatMap((issue) => {
    const path = [...(options.prefix ? [options.prefix] : []), ...issue.path.map(String)];
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        code: 'error.validation.unknown_field',
        property: [...path, key].join('.'),
        message: `Unknown field ${key}`,
      }));
    }
    return [{ code: detailCode(issue, location), property: path.join('.') || location, message: issue.message }];
  });
}

function detailCode(issue: z.core.$ZodIssue, location: 'body' | 'query'): string {
  if (issue.input === undefined || issue.input === null) {
    return location === 'query' ? 'error.validation.not_null' : 'error.validation.not_blank';
  }
  switch (issue.code) {
    case 'invalid_type':
      return 'error.validation.invalid_type';
    case 'too_small':
      return issue.origin === 'string' && issue.minimum === 1
        ? 'error.validation.not_blank'
        : 'error.validation.too_small';
    case 'too_big':
      return 'error.validation.too_big';
    case 'invalid_value':
      return 'the_value_you_selected_is_not_a_valid_choice';
    default:
      return 'error.validation.not_valid';
  }
}

/** Parses input with a schema or throws a 400 whose details name each offending property. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, prefix?: string): z.output<S> {
  const parsed = schema.safeParse(input, { reportInput: true });
  if (parsed.success) return parsed.data;
  throw new ValidationError('Invalid input', issuesToDetails(parsed.error.issues, prefix ? { prefix } : {}));
}
