import { type ErrorDetail, issuesToDetails, ValidationError } from '@svc/core';
import type * as z from 'zod';

/** Detail codes of the API's error details (docs/API.md), and the repo's own where none fits. */
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
 * Collects the faults of one request so the caller sees all of them at once: the hand-written
 * query and aggregation parsers add details directly, zod issues go through the shared mapping.
 */
export class Problems {
  private readonly details: ErrorDetail[] = [];

  get count(): number {
    return this.details.length;
  }

  add(path: PropertyPath, code: string, message: string): void {
    this.push([{ code, property: path.join('.'), message }]);
  }

  addIssues(prefix: PropertyPath, issues: readonly z.core.$ZodIssue[]): void {
    this.push(issuesToDetails(issues, { prefix: prefix.join('.') }));
  }

  throwIfAny(): void {
    const first = this.details[0];
    if (first) throw new ValidationError(`Invalid search request: ${first.message}`, this.details);
  }

  private push(details: readonly ErrorDetail[]): void {
    for (const detail of details) {
      if (this.details.length < MAX_DETAILS) this.details.push(detail);
    }
  }
}
