import { parseOrThrow } from '@svc/core';

/**
 * Domain functions validate their own input, so the payments domain (which hands over the
 * `supporter` object of a payment request) gets the same checks and error details as
 * `POST /supporters`.
 */
export const parseInput = parseOrThrow;
