/**
 * When the resolver asks a provider again about a payment or source that waits on it, so none
 * depends on the provider's events alone (a webhook lost, an endpoint misconfigured):
 *
 * - an hour after it was made (FIRST_CHECK_SECONDS), then once a day (CHECK_EVERY_SECONDS);
 * - one waiting for the donor (3-D Secure, TWINT, a source's set-up) is given up after
 *   APPROVAL_EXPIRES_SECONDS: cancelled at the provider so it cannot complete later, and failed
 *   with `approval_expired`;
 * - a debit the provider is processing (SEPA: Stripe confirms it within 14 business days) is
 *   checked until PROCESSING_CHECKS_END_SECONDS, then left to the provider's events with an error
 *   logged for support.
 */
export const FIRST_CHECK_SECONDS = 3_600;
export const CHECK_EVERY_SECONDS = 86_400;
export const APPROVAL_EXPIRES_SECONDS = 2 * 86_400;
export const PROCESSING_CHECKS_END_SECONDS = 21 * 86_400;

/** The next check of something made at `created` and checked at `at`, or undefined when checks end. */
export function nextCheck(created: number, at: number, waitingFor: 'donor' | 'provider'): number | undefined {
  const end = created + (waitingFor === 'donor' ? APPROVAL_EXPIRES_SECONDS : PROCESSING_CHECKS_END_SECONDS);
  if (at >= end) return undefined;
  return Math.min(at + CHECK_EVERY_SECONDS, end);
}
