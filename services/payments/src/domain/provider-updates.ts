import { BUSINESS_METRICS, logger, now, recordMetric } from '@svc/core';
import { newEvent } from '@svc/events';
import { retryOnConflict } from '@svc/table';
import type { FoundOutcome, Outcome, RefundOutcome } from '../providers/provider';
import { findPayment, type PaymentRecord, type RefundRecord } from '../repository/payment-repository';
import { settlePending } from './approval';
import { paymentEvent, refundEvents } from './events';
import { boundToCallback, type CallbackClaim } from './provider-binding';
import { type ChargeOutcome, offSession } from './recurring';
import { subscriptions } from './subscriptions-port';
import { savePaymentVersion } from './versioned';

/**
 * What a provider tells us after the request: a pending payment's outcome (the donor came back,
 * a SEPA debit settled), a refund that failed, a dispute. Each moves a payment forward only and
 * is safe to apply twice or out of order: a settled payment stays settled, a failed refund stays
 * failed, a dispute's status only follows the provider's latest.
 */

/**
 * Logged (ProviderAnomalies, kind paid_at_other_provider, alarmed) when a provider reports paid a
 * payment of ours that is recorded at another provider: the donor may have paid twice.
 */
export const PAID_AT_OTHER_PROVIDER = 'A provider reports paid a payment recorded at another provider';

/**
 * Whose the payment is, as a callback of `claim.provider` sees it:
 * - `held`: recorded at that provider (the caller still binds account, mode and references);
 * - `elsewhere`: recorded at another provider of its route, and this provider, on this account
 *   and in this mode, was a candidate passed over (`providers_tried`): money it reports is
 *   alarmed for a person (the donor may have paid twice), never applied;
 * - `unbound`: neither. The callback names a payment its sender never had a part in (another
 *   charity's, by its free-text reference): ignored, and alarmed as such (provider-binding.ts),
 *   before any alarm that would let a stranger page the operator about a payment not theirs.
 */
export function heldBy(
  payment: PaymentRecord,
  claim: CallbackClaim,
  paid: boolean,
  callback: string,
): 'held' | 'elsewhere' | 'unbound' {
  if (payment.provider === claim.provider) return 'held';
  const candidate = (payment.providers_tried ?? []).some(
    (tried) =>
      tried.provider === claim.provider &&
      (tried.account || undefined) === (claim.account || undefined) &&
      payment.test_mode !== claim.live,
  );
  if (!candidate) {
    boundToCallback(payment, claim, callback);
    return 'unbound';
  }
  if (paid) {
    recordMetric(BUSINESS_METRICS.providerAnomalies, 1, { kind: 'paid_at_other_provider' });
    logger.error(PAID_AT_OTHER_PROVIDER, {
      payment: payment.uuid,
      recorded_at: payment.provider,
      reported_by: claim.provider,
    });
  }
  return 'elsewhere';
}

/** Logged (with the ProviderAnomalies metric, kind succeeded_after_failure, alarmed) when a failed payment was paid. */
export const SUCCEEDED_AFTER_FAILURE = 'A payment recorded as failed was paid at the provider';

/**
 * Applies a provider's current answer about a payment. `outcomeNow` asks the provider where the
 * payment stands (never trusting an event's copy, which may be older than another already
 * applied), and is asked only while the payment is still pending, or, with `reviveFailed` (the
 * provider said it succeeded), while it is failed: money the donor paid is recorded whatever we
 * had concluded before (the payment becomes `succeeded`, announced), and a person is alerted.
 */
export function settleFromProvider(
  uuid: string,
  outcomeNow: (payment: PaymentRecord) => Promise<FoundOutcome>,
  options: { reviveFailed?: boolean } = {},
): Promise<PaymentRecord | undefined> {
  return retryOnConflict(async () => {
    const read = await findPayment(uuid);
    if (!read) return read;
    const revivable = options.reviveFailed === true && read.status === 'failed';
    if (read.status !== 'pending' && !revivable) return read;
    const { providerReference, instrumentToken, absent: _absent, ...outcome } = await outcomeNow(read);
    // What only this answer told (a creation whose answer was lost): the provider's id, and the
    // instrument it saved for a payment that creates a payment source.
    const payment: PaymentRecord = {
      ...read,
      ...(providerReference && !read.provider_reference ? { provider_reference: providerReference } : {}),
      ...(instrumentToken && read.create_payment_source && !read.instrument_token
        ? { instrument_token: instrumentToken }
        : {}),
    };
    if (read.status === 'failed') {
      if (outcome.status !== 'succeeded') return read;
      recordMetric(BUSINESS_METRICS.providerAnomalies, 1, { kind: 'succeeded_after_failure' });
      logger.error(SUCCEEDED_AFTER_FAILURE, { payment: read.uuid, failed_for: read.status_reason });
      return settlePending({ ...payment, status: 'pending' }, outcome);
    }
    if (outcome.status === 'pending' && 'action' in outcome) {
      // The donor must act (3-D Secure, TWINT) but never got the link: the answer to the creation
      // was lost. The action is recorded, so the client sees it on the payment and can send the
      // donor there; the payment then waits like any other for the donor's return, Stripe's
      // event or the resolver's next check.
      if (read.action) return read;
      const { status_reason: _unknown, ...waiting } = payment;
      return savePaymentVersion(read, { ...waiting, action: outcome.action, events: [] });
    }
    if (outcome.status === 'pending' && 'reason' in outcome) {
      if (read.status_reason === 'provider_unavailable' || read.status_reason !== outcome.reason) {
        // Still waiting: for a known reason now (the donor's action is done once it is processing),
        // or (still unknown) to be asked again later.
        const { action: _done, ...waiting } = payment;
        const next = outcome.reason === 'processing' ? waiting : payment;
        return savePaymentVersion(read, { ...next, status_reason: outcome.reason, events: [] });
      }
      return read;
    }
    return settlePending(payment, outcome as Outcome);
  });
}

/**
 * A recurring charge we had failed that the provider reports paid after all, on any provider: it
 * is recorded (attempt, payment and invoice paid, subscriptions' `recordLateRecurringSuccess`)
 * and counted (ProviderAnomalies, `succeeded_after_failure`); when dunning had paid the invoice
 * with another attempt meanwhile, the donor paid twice and the alarm asks a person to refund one.
 */
export async function recordRecurringPaidAfterFailure(
  payment: PaymentRecord,
  providerReference: string | undefined,
): Promise<void> {
  const { subscription_uuid: subscription, invoice_uuid: invoice, charge_attempt_uuid: attempt } = payment;
  if (!subscription || !invoice || !attempt) return;
  const recorded = await subscriptions().recordLateRecurringSuccess(subscription, invoice, attempt, providerReference);
  if (recorded === 'none') return;
  recordMetric(BUSINESS_METRICS.providerAnomalies, 1, { kind: 'succeeded_after_failure' });
  const log = recorded === 'paid_twice' ? logger.error : logger.warn;
  log.call(logger, recorded === 'paid_twice' ? PAID_TWICE : SUCCEEDED_AFTER_FAILURE, {
    payment: payment.uuid,
    charge_attempt: attempt,
  });
}

/** Logged (and alarmed) when a late success paid an invoice another attempt had paid: refund one. */
export const PAID_TWICE = 'A recurring charge recorded as failed was paid after its invoice was paid again';

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

type Refund = PaymentRecord['refunds'][number];

/**
 * A refund as the provider reports it: one of ours (by its uuid), or one made at the provider
 * without us (Stripe's dashboard: a uuid derived from the provider's id, and its amount).
 */
export interface ProviderRefund {
  uuid: string;
  providerReference?: string | undefined;
  amountMinor: number;
  outcome: RefundOutcome;
}

/**
 * Applies what the provider says of refunds, each moving forward only: pending → succeeded
 * (announced `svc.payments.refund.succeeded`), pending or succeeded → failed (announced
 * `…refund.failed`, its amount free again); a failed refund stays failed. A refund made at the
 * provider without us is recorded once, pending or succeeded as the provider says (never beyond
 * what is left of the payment), and announced when it has succeeded.
 */
export function applyProviderRefunds(
  paymentUuid: string,
  refunds: readonly ProviderRefund[],
): Promise<PaymentRecord | undefined> {
  return retryOnConflict(async () => {
    const payment = await findPayment(paymentUuid);
    if (!payment) return payment;
    let next: PaymentRecord = { ...payment, refunds: [...payment.refunds], events: [] };
    // Refunds we hold first (a failure frees its amount), then ones made at the provider.
    const known = new Set(payment.refunds.map((r) => r.uuid));
    const ordered = [...refunds].sort((a, b) => Number(known.has(b.uuid)) - Number(known.has(a.uuid)));
    for (const update of ordered) next = withRefund(next, update);
    // The provider has answered these: nothing left to confirm of them.
    const answered = new Set(refunds.map((r) => r.uuid));
    const toConfirm = (payment.refunds_to_confirm ?? []).filter((uuid) => !answered.has(uuid));
    const { refunds_to_confirm: _list, ...rest } = next;
    next = toConfirm.length > 0 ? { ...rest, refunds_to_confirm: toConfirm } : rest;
    const unchanged =
      next.refunds.length === payment.refunds.length &&
      next.refunds.every((r, i) => r === payment.refunds[i]) &&
      toConfirm.length === (payment.refunds_to_confirm ?? []).length;
    return unchanged ? payment : savePaymentVersion(payment, next);
  });
}

function withRefund(payment: PaymentRecord, update: ProviderRefund): PaymentRecord {
  const known = payment.refunds.find((r) => r.uuid === update.uuid);
  const { outcome } = update;
  if (!known) {
    const left = payment.amount_minor - payment.refunded_minor;
    const amount = Math.min(update.amountMinor, left);
    if (payment.status !== 'succeeded' || outcome.status === 'failed' || amount <= 0) return payment;
    const refund: RefundRecord = {
      uuid: update.uuid,
      amount_minor: amount,
      status: outcome.status,
      created: now(),
      ...(update.providerReference ? { provider_reference: update.providerReference } : {}),
    };
    const next = { ...payment, refunds: [...payment.refunds, refund], refunded_minor: payment.refunded_minor + amount };
    return outcome.status === 'succeeded' ? { ...next, events: [...next.events, ...refundEvents(next, refund)] } : next;
  }
  if (known.status === 'failed' || known.status === outcome.status) return payment;
  if (outcome.status === 'failed') return withFailedRefund(payment, known, outcome.reason);
  if (outcome.status === 'pending') return payment;
  const succeeded: Refund = { ...known, status: 'succeeded' };
  const next = { ...payment, refunds: payment.refunds.map((r) => (r.uuid === known.uuid ? succeeded : r)) };
  return { ...next, events: [...next.events, ...refundEvents(next, succeeded)] };
}

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
 * The provider's answers to refunds it had not answered: each answered one leaves the list and is
 * applied (applyProviderRefunds' rules); still unanswered ones (undefined) stay.
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
      if (!refund || refund.status === 'failed') continue;
      const outcome = await answer(payment, refund);
      if (!outcome) left.push(refundUuid);
      else next = withRefund(next, { uuid: refundUuid, amountMinor: refund.amount_minor, outcome });
    }
    const { refunds_to_confirm: _list, ...rest } = next;
    return savePaymentVersion(payment, left.length > 0 ? { ...rest, refunds_to_confirm: left } : rest);
  });
}

export interface DisputeUpdate {
  providerReference: string;
  /** The dispute's status as the provider has it now (read from the provider, not an event's copy). */
  status: string;
  reason: string;
  amountMinor: number;
  /** The provider took the disputed amount from the account, or gave it back. */
  funds?: 'withdrawn' | 'reinstated' | undefined;
  /** A new round that reopens a closed dispute (Adyen's SECOND_CHARGEBACK after a reversal). */
  supersedes?: boolean | undefined;
}

/**
 * The debit came back: one rule for every provider. A direct debit has no dispute process: the
 * donor's bank returns it (AC04 closed account, AM04 insufficient funds, MD06 the donor's claim
 * within eight weeks) and the return is final. Adyen: "There is no dispute management process
 * available for SEPA" (https://docs.adyen.com/risk-management/chargeback-guidelines/sepa-chargebacks/),
 * and it reports the return as a CHARGEBACK; Stripe opens a dispute that is `lost` from the start
 * (https://docs.stripe.com/payments/sepa-debit#disputed-payments). So a dispute on a debit whose
 * funds were withdrawn is `lost` whatever the provider calls it, and the payment ends in one
 * observable state on both: succeeded, with a lost dispute and its funds withdrawn.
 */
export function isReturnedDebit(payment: Pick<PaymentRecord, 'payment_method' | 'dispute'>): boolean {
  return payment.payment_method === 'sepa_dd' && payment.dispute?.status === 'lost';
}

function disputeStatusOf(payment: PaymentRecord, update: DisputeUpdate): string {
  return payment.payment_method === 'sepa_dd' && update.funds === 'withdrawn' && update.status !== 'won'
    ? 'lost'
    : update.status;
}

/**
 * A dispute on a payment as the provider reports it, each change announced once: opened
 * (`svc.payments.payment.disputed`), closed (`…dispute_closed`, on reaching a final status by
 * whichever update brings it, e.g. `won` before the `closed` event), funds withdrawn or reinstated
 * (`…dispute_funds_withdrawn`, `…dispute_funds_reinstated`; funds may move after the close). A
 * closed dispute is not reopened by a late copy of an earlier status.
 *
 * A returned debit that paid a recurring invoice opens the invoice again and lets dunning run
 * (subscriptions' `reopenReturnedDebit`, once per attempt): asked on every update that finds the
 * debit returned, so an update whose invoice write failed is completed by the provider's retry.
 */
export async function recordDispute(paymentUuid: string, update: DisputeUpdate): Promise<PaymentRecord | undefined> {
  const recorded = await recordDisputeOnPayment(paymentUuid, update);
  const { subscription_uuid: subscription, invoice_uuid: invoice, charge_attempt_uuid: attempt } = recorded ?? {};
  if (recorded && isReturnedDebit(recorded) && subscription && invoice && attempt) {
    await subscriptions().reopenReturnedDebit(subscription, invoice, attempt);
  }
  return recorded;
}

function recordDisputeOnPayment(paymentUuid: string, update: DisputeUpdate): Promise<PaymentRecord | undefined> {
  return retryOnConflict(async () => {
    const payment = await findPayment(paymentUuid);
    if (!payment) return undefined;
    const known = payment.dispute?.provider_reference === update.providerReference ? payment.dispute : undefined;
    const wasClosed = known !== undefined && CLOSED.has(known.status);
    const status = wasClosed && !update.supersedes ? known.status : disputeStatusOf(payment, update);
    const funds = update.funds ?? known?.funds;
    if (known && known.status === status && known.funds === funds && known.reason === update.reason) return payment;
    const next: PaymentRecord = {
      ...payment,
      dispute: {
        provider_reference: update.providerReference,
        status,
        reason: update.reason,
        amount_minor: update.amountMinor,
        ...(funds ? { funds } : {}),
      },
      events: [],
    };
    if (!known) next.events.push(paymentEvent(next, 'svc.payments.payment.disputed'));
    if (!wasClosed && CLOSED.has(status)) next.events.push(paymentEvent(next, 'svc.payments.payment.dispute_closed'));
    if (funds && funds !== known?.funds)
      next.events.push(paymentEvent(next, `svc.payments.payment.dispute_funds_${funds}`));
    return savePaymentVersion(payment, next);
  });
}

/** Dispute statuses after which the dispute is over (https://docs.stripe.com/api/disputes/object#dispute_object-status). */
const CLOSED = new Set(['won', 'lost', 'warning_closed', 'prevented']);
