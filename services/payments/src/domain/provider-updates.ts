import { newEvent, type StoredEvent } from '@svc/events';
import type { Outcome } from '../providers/provider';
import { findPayment, type PaymentRecord } from '../repository/payment-repository';
import { settlePending } from './approval';
import { retryOnConflict, savePaymentVersion } from './versioned';

/**
 * What a provider tells us after the request: a pending payment's outcome (the donor came back,
 * a SEPA debit settled), a refund that failed, a dispute. Each moves a payment forward only and
 * is safe to apply twice or out of order: a settled payment stays settled, a failed refund stays
 * failed, a dispute's status only follows the provider's latest.
 */

/** A payment event of our own, numbered in the payment's sequence. */
function paymentEvent(
  payment: PaymentRecord,
  name: 'svc.payments.payment.disputed' | 'svc.payments.payment.dispute_closed',
): StoredEvent {
  payment.event_sequence += 1;
  return newEvent({
    name,
    object: 'payment',
    object_uuid: payment.uuid,
    organisation_uuid: payment.organisation_uuid,
    account_uuid: payment.account_uuid,
    sequence: payment.event_sequence,
  });
}

/**
 * Applies a provider's current answer about a payment. `outcomeNow` asks the provider where the
 * payment stands (never trusting an event's copy, which may be older than another already
 * applied), and is asked only while the payment is still pending.
 */
export function settleFromProvider(
  uuid: string,
  outcomeNow: (payment: PaymentRecord) => Promise<Outcome & { providerReference?: string }>,
): Promise<PaymentRecord | undefined> {
  return retryOnConflict(async () => {
    const read = await findPayment(uuid);
    if (read?.status !== 'pending') return read;
    const { providerReference, ...outcome } = await outcomeNow(read);
    // The provider's id, when only this answer told it (a creation whose answer was lost).
    const payment =
      providerReference && !read.provider_reference ? { ...read, provider_reference: providerReference } : read;
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
    const failed = { ...refund, status: 'failed' as const, failure_reason: reason };
    return savePaymentVersion(payment, {
      ...payment,
      refunded_minor: payment.refunded_minor - refund.amount_minor,
      refunds: payment.refunds.map((r) => (r.uuid === refundUuid ? failed : r)),
      events: [
        newEvent({
          name: 'svc.payments.refund.failed',
          object: 'refund',
          object_uuid: refund.uuid,
          organisation_uuid: payment.organisation_uuid,
          account_uuid: payment.account_uuid,
          sequence: 2,
        }),
      ],
    });
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
