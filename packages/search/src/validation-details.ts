import { type ErrorDetail, ValidationError } from '@svc/core';
import type * as z from 'zod';

/** Detail codes of interface section 7.3, and the repo's codes where the contract shows none. */
export const DETAIL_CODES = {
  notValid: 'error.validation.not_valid',
  notBlank: 'error.validation.not_blank',
  invalidChoice: 'the_value_you_selected_is_not_a_valid_choice',
  invalidType: 'error.validation.invalid_type',
  tooSmall: 'error.validation.too_small',
  tooBig: 'error.validation.too_big',
  unknownField: 'error.validation.unknown_field',
} as const;

/** Enough to fix a request; a hostile body with thousands of faults does not get thousands back. */
const MAX_DETAILS = 20;

export type PropertyPath = readonly (string | number)[];

/**
 * Collects the faults of one request so the caller sees all of them at once. Zod issues map to
 * codes the way `@svc/http`'s `issuesToDetails` maps them; the search package keeps its own copy
 * because it must not depend on the HTTP stack.
 */
export class Problems {
  private readonly details: ErrorDetail[] = [];

  get count(): number {
    return this.details.length;
  }

  add(path: PropertyPath, code: string, message: string): void {
    if (this.details.length < MAX_DETAILS) this.details.push({ code, property: path.join('.'), message });
  }

  addIssues(prefix: PropertyPath, issues: readonly z.core.$ZodIssue[]): void {
    for (const issue of issues) {
      const path = [...prefix, ...issue.path.map(String)];
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) this.add([...path, key], DETAIL_CODES.unknownField, `Unknown field ${key}`);
      } else {
        this.add(path.length > 0 ? path : ['body'], codeOf(issue), issue.message);
      }
    }
  }

  throwIfAny(): void {
    const first = this.details[0];
    if (first) throw new ValidationError(`Invalid search request: ${first.message}`, this.details);
  }
}

function codeOf(issue: z.core.$ZodIssue): string {
  if (issue.input === undefined || issue.input === null) return DETAIL_CODES.notBlank;
  switch (issue.code) {
    case 'invalid_type':
      return DETAIL_CODES.invalidType;
    case 'too_small':
      return issue.origin === 'string' && issue.minimum === 1 ? DETAIL_CODES.notBlank : DETAIL_CODES.tooSmall;
    case 'too_big':
      return DETAIL_CODES.tooBig;
    case 'invalid_value':
      return DETAIL_CODES.invalidChoice;
    default:
      return DETAIL_CODES.notValid;
  }
}
