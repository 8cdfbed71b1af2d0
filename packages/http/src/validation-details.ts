import type { ErrorDetail } from '@svc/core';
import type * as z from 'zod';

/** Maps zod issues to the contract's detail objects (interface 7.3 codes where they exist). */
export function issuesToDetails(issues: readonly z.core.$ZodIssue[], location: 'body' | 'query'): ErrorDetail[] {
  return issues.map((issue) => {
    const property = issue.path.map(String).join('.') || location;
    return { code: detailCode(issue, location), property, message: issue.message };
  });
}

function detailCode(issue: z.core.$ZodIssue, location: 'body' | 'query'): string {
  if ((issue.input === undefined || issue.input === null) && issue.code !== 'unrecognized_keys') {
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
    case 'unrecognized_keys':
      return 'error.validation.unknown_field';
    default:
      return 'error.validation.not_valid';
  }
}
