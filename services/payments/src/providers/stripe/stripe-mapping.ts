import type Stripe from 'stripe';
import type { Outcome, RefundOutcome } from '../provider';

/**
 * Stripe's objects and errors in our terms. Pure functions: every status and decline code has
 * one answer here, tested one by one.
 */

/** A PaymentIntent's status as our outcome (an intent that needs the donor carries the redirect). */
export function intentOutcome(
  intent: Pick<Stripe.PaymentIntent, 'status' | 'next_action' | 'last_payment_error'>,
): Outcome {
  switch (intent.status) {
    case 'succeeded':
      return { status: 'succeeded' };
    case 'processing':
      return { status: 'pending', reason: 'processing' };
    case 'requires_action':
      return actionOutcome(intent.next_action);
    case 'requires_payment_method':
      // Back to needing a payment method: the last attempt failed (a decline, a failed 3-D Secure).
      return { status: 'failed', reason: declineReason(intent.last_payment_error) };
    case 'canceled':
      return { status: 'failed', reason: 'cancelled' };
    case 'requires_confirmation':
    case 'requires_capture':
      return { status: 'pending', reason: 'processing' };
    default:
      return { status: 'pending', reason: 'processing' };
  }
}

/** What the donor must do: follow Stripe's redirect; an action we cannot offer has failed. */
function actionOutcome(next: { redirect_to_url?: { url: string | null } | null } | null): Outcome {
  const url = next?.redirect_to_url?.url;
  return url
    ? { status: 'pending', action: { action_type: 'redirect', url } }
    : { status: 'failed', reason: 'authentication_required' };
}

/** A SetupIntent's status as our outcome (a saved SEPA mandate is `succeeded` at once). */
export function setupOutcome(setup: Pick<Stripe.SetupIntent, 'status' | 'next_action' | 'last_setup_error'>): Outcome {
  switch (setup.status) {
    case 'succeeded':
      return { status: 'succeeded' };
    case 'requires_action':
      return actionOutcome(setup.next_action);
    case 'requires_payment_method':
      return { status: 'failed', reason: declineReason(setup.last_setup_error) };
    case 'canceled':
      return { status: 'failed', reason: 'cancelled' };
    default:
      return { status: 'pending', reason: 'processing' };
  }
}

/**
 * The reason a payment failed, from Stripe's error: the decline code where the issuer gave one
 * (`insufficient_funds`, `lost_card`, …), else the error code (`card_declined`,
 * `expired_card`, `authentication_required`, …), else `declined`.
 */
export function declineReason(
  error: { code?: string | undefined; decline_code?: string | undefined } | null | undefined,
): string {
  const decline = error?.decline_code;
  if (decline && decline !== 'generic_decline') return decline;
  return error?.code ?? 'declined';
}

/** What kind of failure a thrown SDK error is. */
export type StripeFailure =
  /** The payment was refused (a card error): a failed payment, not an error of ours. */
  | { kind: 'declined'; reason: string; intent?: Stripe.PaymentIntent | undefined }
  /** Our request was wrong in a way the client can fix (an unknown payment method id). */
  | { kind: 'invalid'; param: string | undefined; message: string }
  /**
   * Stripe refused our credentials: a revoked or rolled key (401 `authentication_error`), or a
   * connected account that no longer grants the platform access (403 `permission_error`, or
   * `account_invalid`). Stripe authenticates before it processes anything, so nothing was done;
   * it stays so until an operator acts.
   * https://docs.stripe.com/api/errors (authentication_error, permission_error)
   */
  | { kind: 'refused'; message: string }
  /** No answer, or Stripe failed: the outcome is unknown until retrieved again. */
  | { kind: 'unknown'; message: string };

interface ErrorLike {
  type?: string;
  statusCode?: number;
  code?: string;
  decline_code?: string;
  param?: string;
  message?: string;
  payment_intent?: Stripe.PaymentIntent;
  setup_intent?: Stripe.SetupIntent;
}

export function classifyError(error: unknown): StripeFailure {
  const e = (typeof error === 'object' && error !== null ? error : {}) as ErrorLike;
  const message = e.message ?? String(error);
  switch (e.type) {
    case 'StripeCardError':
      return { kind: 'declined', reason: declineReason(e), intent: e.payment_intent };
    case 'StripeInvalidRequestError':
      // An idempotency key reused with other parameters is our bug, never the client's input.
      if (e.code === 'idempotency_key_in_use') return { kind: 'unknown', message };
      // A connected account the platform lost access to (disconnected from the platform).
      if (e.code === 'account_invalid') return { kind: 'refused', message };
      return { kind: 'invalid', param: e.param, message };
    case 'StripeIdempotencyError':
      return { kind: 'unknown', message };
    case 'StripeAuthenticationError':
    case 'StripePermissionError':
      return { kind: 'refused', message };
    default:
      // StripeConnectionError, StripeAPIError (5xx), rate limits and anything unexpected.
      return { kind: 'unknown', message };
  }
}

/** A Refund's status as our refund outcome. */
export function refundOutcome(refund: Pick<Stripe.Refund, 'status' | 'failure_reason'>): RefundOutcome {
  switch (refund.status) {
    case 'succeeded':
      return { status: 'succeeded' };
    case 'failed':
    case 'canceled':
      return { status: 'failed', reason: refund.failure_reason ?? refund.status };
    default:
      return { status: 'pending' };
  }
}

/** Masked information of a PaymentMethod: never a full number. */
export function maskedPaymentMethod(method: Stripe.PaymentMethod | string | null | undefined): Record<string, unknown> {
  if (!method || typeof method === 'string') return {};
  if (method.card) {
    return {
      brand: method.card.brand,
      last4: method.card.last4,
      expiry_month: method.card.exp_month,
      expiry_year: method.card.exp_year,
      ...(method.billing_details?.name ? { cardholder: method.billing_details.name } : {}),
      ...(method.card.fingerprint ? { fingerprint: method.card.fingerprint } : {}),
    };
  }
  if (method.sepa_debit) {
    const { country } = method.sepa_debit;
    return {
      ...(country ? { country_code: country } : {}),
      ...(method.billing_details?.name ? { account_holder: method.billing_details.name } : {}),
    };
  }
  return {};
}
