import { derivedUuid, now } from '@svc/core';
import { newEvent } from '@svc/events';
import type { Outcome, RefundOutcome } from '../providers/provider';
import { findPayment, type PaymentRecord, type RefundRecord } from '../repository/payment-repository';
import { settlePending } from './approval';
import { paymentEvent, refundEvents } from './events';
import { type ChargeOutcome, offSession } from './recurring';
import { subscriptions } from './subscriptions-port';
import { retryOnConflict, savePaymentVersion } from './versioned';

/**
 * What a provider tells us after the request: a pending payment's outcome (the donor came back,
 * a SEPA debit settled), a refund that failed, a dispute. Each moves a payment forward only and
 * is safe to apply twice or out of order: a settled payment stays settled, a failed refund stays
 * failed, a dispute's status only follows the provider's latest.
 */

/**
 * Applies a provider's current answer about a payment. `outcomeNow` asks the provider where the
 * payment stands (never trusting an event's copy, which may be older than another already
 * applied), and is asked only while the payment is still pending.
 */
export function settleFromProvider(
  uuid: string,
  outcomeNow: (payment: PaymentRecord) => Promise<Outcome & { providerReference?: string; instrumentToken?: string }>,
): Promise<PaymentRecord | undefined> {
  return retryOnConflict(async () => {
    const read = await findPayment(uuid);
    if (read?.status !== 'pending') return read;
    const { providerReference, instrumentToken, ...outcome } = await outcomeNow(read);
    // What only this answer told (a creation whose answer was lost): the provider's id, and the
    // instrument it saved for a payment that creates a payment source.
    const payment: PaymentRecord = {
      ...read,
      ...(providerReference && !read.provider_reference ? { provider_reference: providerReference } : {}),
      ...(instrumentToken && read.create_payment_source && !read.instrument_token
        ? { instrument_token: instrumentToken }
        : {}),
    };
    if (outcome.status === 'pending' && 'action' in outcome) {
      // The donor must act (3-D Secure, TWINT) but never got the link: the answer to the creation
      // was lost. The action is recorded, so the client sees it on the payment and can send the
      // donor there; the payment then waits like any other for the donor's return or Stripe's
      // event, and is no longer asked about.
      if (read.action) return read;
      const { status_reason: _unknown, ...waiting } = payment;
      return savePaymentVersion(read, { ...waiting, action: outcome.action, events: [] });
    }
    if (outcome.status === 'pending' && 'reason' in outcome) {
      if (read.status_reason === 'provider_unavailable' || read.status_reason !== outcome.reason) {
        // Still waiting: for a known reason now, or (still unknown) to be asked again later.
        return savePaymentVersion(read, { ...payment, status_reason: outcome.reason, events: [] });
      }
      return read;
    }
    return settlePending(payment, outcome as Outcome);
  });
}

/**
 * A recurring charge the provider decided later (a SEPA debit settled or returned): recorded
 * through its charge attempt, so the invoice is paid or dunned with the payment in one write.
 * Safe twice: only a pending attempt is settled.
 */
export async function settleRecurringFromProvider(
  payment: PaymentRecord,
  outcomeNow: (payment: PaymentRecord) => Promise<ChargeOutcome>,
): Promise<PaymentRecord | undefined> {
  const { subscription_uuid: subscription, invoice_uuid: invoice, charge_attempt_uuid: attempt } = payment;
  if (payment.status !== 'pending' || !subscription || !invoice || !attempt) return payment;
  const outcome = offSession(await outcomeNow(payment));
  await subscriptions().settleChargeAttempt(subscription, invoice, attempt, outcome);
  return findPayment(payment.uuid);
}

/**
 * A refund the provider failed after accepting it: marked failed with the reason, its amount
 * free to refund again, announced as `svc.payments.refund.failed`.
 */
export function failRefund(
  paymentUuid: string,
  refundUuid: string,
  reason: string,
): Promise<PaymentRecord | undefined> {
  return retryOnConflict(async () => {
    const payment = await findPayment(paymentUuid);
    const refund = payment?.refunds.find((r) => r.uuid === refundUuid);
    if (!payment || !refund || refund.status === 'failed') return payment;
    return savePaymentVersion(payment, withFailedRefund({ ...payment, events: [] }, refund, reason));
  });
}

type Refund = PaymentRecord['refunds'][number];

/** The payment with one refund failed: its amount free again, its failure announced. */
function withFailedRefund(payment: PaymentRecord, refund: Refund, reason: string): PaymentRecord {
  const failed = { ...refund, status: 'failed' as const, failure_reason: reason };
  return {
    ...payment,
    refunded_minor: payment.refunded_minor - refund.amount_minor,
    refunds: payment.refunds.map((r) => (r.uuid === refund.uuid ? failed : r)),
    events: [
      ...payment.events,
      newEvent({
        name: 'svc.payments.refund.failed',
        object: 'refund',
        object_uuid: refund.uuid,
        organisation_uuid: payment.organisation_uuid,
        account_uuid: payment.account_uuid,
        sequence: 2,
      }),
    ],
  };
}

/** Marks a refund as not yet answered by the provider (the resolver asks again). */
export function refundToConfirm(paymentUuid: string, refundUuid: string): Promise<PaymentRecord | undefined> {
  return retryOnConflict(async () => {
    const payment = await findPayment(paymentUuid);
    if (!payment || payment.refunds_to_confirm?.includes(refundUuid)) return payment;
    return savePaymentVersion(payment, {
      ...payment,
      refunds_to_confirm: [...(payment.refunds_to_confirm ?? []), refundUuid],
      events: [],
    });
  });
}

/**
 * The provider's answers to refunds it had not answered: confirmed ones leave the list, refused
 * ones are marked failed (announced, amount free again), still unanswered ones (undefined) stay.
 */
export function confirmRefunds(
  paymentUuid: string,
  answer: (payment: PaymentRecord, refund: Refund) => Promise<RefundOutcome | undefined>,
): Promise<PaymentRecord | undefined> {
  return retryOnConflict(async () => {
    const payment = await findPayment(paymentUuid);
    if (!payment?.refunds_to_confirm?.length) return payment;
    let next: PaymentRecord = { ...payment, events: [] };
    const left: string[] = [];
    for (const refundUuid of payment.refunds_to_confirm) {
      const refund = payment.refunds.find((r) => r.uuid === refundUuid);
      if (refund?.status !== 'succeeded') continue;
      const outcome = await answer(payment, refund);
      if (!outcome) left.push(refundUuid);
      else if (outcome.status === 'failed') next = withFailedRefund(next, refund, outcome.reason);
    }
    const { refunds_to_confirm: _list, ...rest } = next;
    return savePaymentVersion(payment, left.length > 0 ? { ...rest, refunds_to_confirm: left } : rest);
  });
}

export interface DisputeUpdate {
  providerReference: string;
  status: string;
  reason: string;
  amountMinor: number;
  closed: boolean;
}

/**
 * A dispute opened (`svc.payments.payment.disputed`) or closed (`…dispute_closed`) on a payment.
 * A closed dispute is not reopened by a late copy of its opening.
 */
export function recordDispute(paymentUuid: string, update: DisputeUpdate): Promise<PaymentRecord | undefined> {
  return retryOnConflict(async () => {
    const payment = await findPayment(paymentUuid);
    if (!payment) return undefined;
    const known = payment.dispute?.provider_reference === update.providerReference ? payment.dispute : undefined;
    const wasClosed = known !== undefined && CLOSED.has(known.status);
    if (wasClosed || (known && known.status === update.status)) return payment;
    const next: PaymentRecord = {
      ...payment,
      dispute: {
        provider_reference: update.providerReference,
        status: update.status,
        reason: update.reason,
        amount_minor: update.amountMinor,
      },
      events: [],
    };
    if (!known) next.events.push(paymentEvent(next, 'svc.payments.payment.disputed'));
    if (update.closed) next.events.push(paymentEvent(next, 'svc.payments.payment.dispute_closed'));
    return savePaymentVersion(payment, next);
  });
}

/** Dispute statuses after which nothing changes any more. */
const CLOSED = new Set(['won', 'lost', 'warning_closed', 'prevented']);

/**
 * Refunds made at the provider without us (Stripe's dashboard): each recorded once, under a uuid
 * derived from the provider's id, its amount counted as refunded (never beyond the payment), and
 * announced as `svc.payments.refund.succeeded`.
 */
export function recordProviderRefunds(
  paymentUuid: string,
  refunds: ReadonlyArray<{ providerReference: string; amountMinor: number }>,
): Promise<PaymentRecord | undefined> {
  return retryOnConflict(async () => {
    const payment = await findPayment(paymentUuid);
    if (payment?.status !== 'succeeded') return payment;
    const next: PaymentRecord = { ...payment, refunds: [...payment.refunds], events: [] };
    for (const made of refunds) {
      const uuid = derivedUuid('refund', made.providerReference);
      if (next.refunds.some((refund) => refund.uuid === uuid)) continue;
      const amount = Math.min(made.amountMinor, next.amount_minor - next.refunded_minor);
      if (amount <= 0) continue;
      const refund: RefundRecord = { uuid, amount_minor: amount, status: 'succeeded', created: now() };
      next.refunds.push(refund);
      next.refunded_minor += amount;
      next.events.push(...refundEvents(next, refund));
    }
    return next.events.length === 0 ? payment : savePaymentVersion(payment, next);
  });
}
