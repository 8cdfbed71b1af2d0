import { definedFields, derivedUuid, type FeeCover, newResourceUuid, now } from '@svc/core';
import { newEvent } from '@svc/events';
import type { ProfileFees } from '@svc/organisations';
import {
  chargeSavedSource,
  findPayment,
  findPaymentSource,
  isProcessing,
  newPaymentWrite,
  type PaymentSourceRecord,
  paymentUpdateWrite,
  pendingRecurringPayment,
  recurringFeeCover,
  settledRecurringPayment,
} from '@svc/payments';
import { addDays, localDateOf, localMidnight } from '@svc/schedule';
import { type GuardedWrite, retryOnConflict, transactWrite, versioned } from '@svc/table';
import {
  type ChargeAttemptRecord,
  type InvoiceRecord,
  intendedOf,
  type SubscriptionRecord,
} from '../repository/records';
import { billableFrom, endedAt, statusAt, suspendedAt } from '../repository/state';
import {
  findInvoice,
  findSubscription,
  invoicePut,
  subscriptionPut,
  subscriptionUnchanged,
} from '../repository/subscription-repository';
import { dueOnOrAfterDay, nextDueAfterToday, periodToCharge, today } from './calendar';
import { planRules } from './plans';
import { cancelNow, suspendIndefinitely } from './subscriptions';

/**
 * Recurring billing: the period's invoice, its charge attempts, the provider's answer, dunning.
 *
 * Every step is a guarded write, so messages may arrive twice, runs may repeat and workers may
 * die at any point without a second invoice or charge:
 * 1. open: the period's invoice (its uuid derived from subscription and period, written only if
 *    absent), its first attempt and that attempt's pending payment (uuids derived from the
 *    invoice and attempt number), and the subscription moved to its next due day, in one
 *    transaction guarded by the subscription's version.
 * 2. charge: the provider, with the attempt's uuid as its idempotency reference. Whoever opened
 *    the attempt holds a lease on it; if that worker dies, the due index brings the invoice back
 *    once the lease lapses and the next worker takes over the same attempt.
 * 3. settle: attempt, invoice, payment and subscription written together, guarded by the
 *    attempt still being pending, so one answer is recorded once.
 */
export const LEASE_SECONDS = 300;
/** How often a charge the provider is still processing is asked about, events aside. */
export const PROCESSING_RECHECK_SECONDS = 86_400;

export interface BillingOutcome {
  invoices_created: number;
  charge_attempts_created: number;
  succeeded: number;
  failed: number;
}

export const noOutcome = (): BillingOutcome => ({
  invoices_created: 0,
  charge_attempts_created: 0,
  succeeded: 0,
  failed: 0,
});

export function addOutcomes(a: BillingOutcome, b: BillingOutcome): BillingOutcome {
  return {
    invoices_created: a.invoices_created + b.invoices_created,
    charge_attempts_created: a.charge_attempts_created + b.charge_attempts_created,
    succeeded: a.succeeded + b.succeeded,
    failed: a.failed + b.failed,
  };
}

/** Thrown inside a transaction when the period already has its invoice. */
class PeriodInvoiced extends Error {}

function copy<T extends { events: unknown[]; version: number; updated: number }>(record: T, at: number): T {
  return { ...structuredClone(record), events: [], version: record.version + 1, updated: at };
}

export function invoiceEvent(invoice: InvoiceRecord, name: 'created' | 'paid' | 'cancelled') {
  invoice.event_sequence += 1;
  return newEvent({
    name: `svc.subscriptions.invoice.${name}`,
    object: 'invoice',
    object_uuid: invoice.uuid,
    organisation_uuid: invoice.organisation_uuid,
    account_uuid: invoice.account_uuid,
    sequence: invoice.event_sequence,
  });
}

function attemptFailedEvent(invoice: InvoiceRecord, attempt: ChargeAttemptRecord) {
  attempt.event_sequence += 1;
  return newEvent({
    name: 'svc.subscriptions.charge_attempt.failed',
    object: 'charge_attempt',
    object_uuid: attempt.uuid,
    organisation_uuid: invoice.organisation_uuid,
    account_uuid: invoice.account_uuid,
    sequence: attempt.event_sequence,
  });
}

/** What a charge attempt charges: the gift, and with the fees covered, the total and the fees. */
export type AttemptCharge = FeeCover & { fees?: ProfileFees };

/**
 * What an attempt to charge `intended` from `source` charges: with the subscription covering the
 * fees, the total that covers the fees of the source's profile as they are now (a changed fee or
 * payment method counts from the next attempt); otherwise the gift itself.
 */
export async function attemptCharge(
  subscription: Pick<SubscriptionRecord, 'cover_fees' | 'currency'>,
  source: PaymentSourceRecord,
  intended: number,
): Promise<AttemptCharge> {
  if (!subscription.cover_fees) return { total: intended, intended, cover: 0 };
  return recurringFeeCover(source, subscription.currency, intended);
}

function uncovered(invoice: InvoiceRecord, subscription: SubscriptionRecord): AttemptCharge {
  if (subscription.cover_fees) throw new Error('A subscription that covers the fees charges its attemptCharge');
  return { total: intendedOf(invoice), intended: intendedOf(invoice), cover: 0 };
}

/** The invoice's figures as `charge` makes them: amount the total, intended_amount the gift. */
export function chargeInvoice(invoice: InvoiceRecord, charge: AttemptCharge): void {
  invoice.amount = charge.total;
  invoice.intended_amount = charge.intended;
}

/** A new invoice of the subscription (the period's, or a manual one). */
export function newInvoice(
  subscription: SubscriptionRecord,
  at: number,
  options: { period?: string; amount?: number; custom?: Record<string, string>; svc?: Record<string, unknown> },
): InvoiceRecord {
  const invoice: InvoiceRecord = {
    uuid:
      options.period === undefined
        ? newResourceUuid('invoice')
        : derivedUuid('invoice', subscription.uuid, options.period),
    subscription_uuid: subscription.uuid,
    organisation_uuid: subscription.organisation_uuid,
    account_uuid: subscription.account_uuid,
    created: at,
    updated: at,
    status: 'open',
    status_reason: 'pending',
    amount: options.amount ?? subscription.amount,
    intended_amount: options.amount ?? subscription.amount,
    currency: subscription.currency,
    ...definedFields({ period: options.period }),
    timezone: subscription.timezone,
    failed_payment_attempts: 0,
    is_manually_created: options.period === undefined,
    charge_attempts: [],
    // The subscription's parameters, with the invoice's own winning on conflicts.
    custom_parameters: { ...subscription.custom_parameters, ...options.custom },
    svc_parameters: options.svc ?? {},
    version: 1,
    event_sequence: 0,
    events: [],
  };
  invoice.events = [invoiceEvent(invoice, 'created')];
  return invoice;
}

/**
 * Adds the next charge attempt (pending, leased to this worker) and its pending payment. The
 * attempt's uuid is derived from the invoice and the attempt's number, its payment's from the
 * attempt: two workers that race for the same attempt write the same keys, and one loses. The
 * attempt charges `charge` (attemptCharge of the invoice's gift), which the invoice then shows;
 * without one, the gift itself (for a subscription that does not cover the fees only).
 */
export function openAttempt(
  invoice: InvoiceRecord,
  subscription: SubscriptionRecord,
  source: PaymentSourceRecord,
  automatic: boolean,
  at: number,
  requestRef?: string,
  charge: AttemptCharge = uncovered(invoice, subscription),
) {
  const number = invoice.charge_attempts.length + 1;
  const uuid = derivedUuid('charge_attempt', invoice.uuid, number);
  const attempt: ChargeAttemptRecord = {
    uuid,
    number,
    status: 'pending',
    created: at,
    payment_uuid: derivedUuid('payment', uuid),
    payment_source_uuid: source.uuid,
    automatic,
    lease_until: at + LEASE_SECONDS,
    ...definedFields({ request_ref: requestRef }),
    event_sequence: 0,
  };
  invoice.charge_attempts.push(attempt);
  delete invoice.next_attempt_day;
  chargeInvoice(invoice, charge);
  const payment = pendingRecurringPayment({
    uuid: attempt.payment_uuid,
    source,
    amountMinor: charge.total,
    ...(subscription.cover_fees ? { intendedMinor: charge.intended } : {}),
    ...definedFields({ coveredFees: charge.fees }),
    currency: invoice.currency,
    subscriptionUuid: subscription.uuid,
    invoiceUuid: invoice.uuid,
    chargeAttemptUuid: uuid,
    ...definedFields({ supporterUuid: subscription.supporter_uuid }),
    customParameters: invoice.custom_parameters,
  });
  return { attempt, payment };
}

async function sourceOf(uuid: string): Promise<PaymentSourceRecord> {
  const source = await findPaymentSource(uuid);
  // Sources are never deleted; a missing one is a broken store, for the dead-letter queue.
  if (!source) throw new Error(`Payment source ${uuid} is missing`);
  return source;
}

export interface OpenedAttempt {
  subscriptionUuid: string;
  invoice: InvoiceRecord;
  attempt: ChargeAttemptRecord;
  source: PaymentSourceRecord;
  /** An attempt taken up again: its first charge may have been made with its answer lost. */
  retry?: boolean;
}

/**
 * A due subscription: stores `finished` at the planned end, skips periods inside a suspension,
 * otherwise invoices the latest due period (earlier missed ones are not charged) and charges it.
 */
export async function billSubscription(uuid: string): Promise<BillingOutcome> {
  const opened = await retryOnConflict(async (): Promise<OpenedAttempt | undefined> => {
    const subscription = await findSubscription(uuid);
    if (!subscription) return undefined;
    const at = now();
    const due = billableFrom(subscription);
    if (due === undefined || due > at) return undefined;
    const next = copy(subscription, at);
    const save = (extra: GuardedWrite[] = []) =>
      transactWrite([versioned(subscriptionPut(next, subscription.version)), ...extra]);
    const dueDay = subscription.next_due_day;
    // Past the planned end, a due day before the end that a late run missed is still charged.
    const ended = endedAt(subscription, at);
    if (
      dueDay === undefined ||
      (ended && subscription.planned_end !== undefined && dueDay >= subscription.planned_end)
    ) {
      next.status = 'finished';
      next.ended_at = localMidnight(subscription.planned_end ?? today(subscription, at), subscription.timezone);
      delete next.next_due_day;
      await save();
      return undefined;
    }
    const period = periodToCharge(subscription, dueDay, at);
    if (suspendedAt(subscription, localMidnight(period, subscription.timezone))) {
      const resume = subscription.suspension_end;
      const after =
        resume === undefined ? undefined : dueOnOrAfterDay(subscription, resume > period ? resume : addDays(period, 1));
      if (after === undefined) delete next.next_due_day;
      else next.next_due_day = after;
      await save();
      return undefined;
    }
    next.last_period = period;
    const following = nextDueAfterToday(next, at);
    if (following === undefined) delete next.next_due_day;
    else next.next_due_day = following;

    const source = await sourceOf(subscription.payment_source_uuid);
    const invoice = newInvoice(subscription, at, { period });
    const charge = await attemptCharge(subscription, source, intendedOf(invoice));
    const { attempt, payment } = openAttempt(invoice, subscription, source, true, at, undefined, charge);
    try {
      await save([
        { item: invoicePut(invoice), onConditionFailed: () => new PeriodInvoiced() },
        { item: newPaymentWrite(payment) },
      ]);
    } catch (error) {
      if (!(error instanceof PeriodInvoiced)) throw error;
      // The period has its invoice already (the subscription was rescheduled onto it): move on.
      await save();
      return undefined;
    }
    return { subscriptionUuid: uuid, invoice, attempt, source };
  });
  if (!opened) return noOutcome();
  const settled = await chargeAndSettle(opened);
  return { ...settled, invoices_created: 1, charge_attempts_created: 1 };
}

/**
 * An invoice the due index brought back: a retry whose day has come (a new attempt), or an
 * attempt whose worker died before settling it (the same attempt, charged again under the same
 * reference). Dunning stops for a subscription that is no longer active.
 */
export async function retryInvoice(subscriptionUuid: string, invoiceUuid: string): Promise<BillingOutcome> {
  const opened = await retryOnConflict(async (): Promise<(OpenedAttempt & { isNew: boolean }) | undefined> => {
    const invoice = await findInvoice(subscriptionUuid, invoiceUuid);
    if (!invoice) return undefined;
    const at = now();
    const next = copy(invoice, at);
    const save = (extra: GuardedWrite[] = []) =>
      transactWrite([versioned(invoicePut(next, invoice.version)), ...extra]);
    const pending = next.charge_attempts.find((attempt) => attempt.status === 'pending');
    if (pending) {
      if ((pending.lease_until ?? 0) > at) return undefined;
      pending.lease_until = at + LEASE_SECONDS;
      await save();
      const source = await sourceOf(pending.payment_source_uuid);
      return { subscriptionUuid, invoice: next, attempt: pending, source, isNew: false, retry: true };
    }
    if (
      invoice.status !== 'open' ||
      invoice.next_attempt_day === undefined ||
      localMidnight(invoice.next_attempt_day, invoice.timezone) > at
    ) {
      return undefined;
    }
    const subscription = await findSubscription(subscriptionUuid);
    const status = subscription === undefined ? 'cancelled' : statusAt(subscription, at);
    if (!subscription || status !== 'active') {
      // No charge attempts while not active: a suspension with an end retries when it ends;
      // otherwise dunning stops and the invoice stays open for a manual close or charge.
      const resume = status === 'suspended' ? subscription?.suspension_end : undefined;
      if (resume === undefined) delete next.next_attempt_day;
      else next.next_attempt_day = resume;
      await save();
      return undefined;
    }
    const source = await sourceOf(subscription.payment_source_uuid);
    const charge = await attemptCharge(subscription, source, intendedOf(next));
    const { attempt, payment } = openAttempt(next, subscription, source, true, at, undefined, charge);
    // Guarded on the subscription too: a cancel or suspend that lands meanwhile wins.
    await save([{ item: newPaymentWrite(payment) }, versioned(subscriptionUnchanged(subscription))]);
    return { subscriptionUuid, invoice: next, attempt, source, isNew: true };
  });
  if (!opened) return noOutcome();
  const settled = await chargeAndSettle(opened);
  return { ...settled, charge_attempts_created: opened.isNew ? 1 : 0 };
}

export async function chargeAndSettle(opened: OpenedAttempt): Promise<BillingOutcome> {
  const { invoice, attempt, source } = opened;
  // A charge the provider took already (still processing) is asked about, not made again.
  const payment = await findPayment(attempt.payment_uuid);
  const outcome = await chargeSavedSource(
    source,
    invoice.amount,
    invoice.currency,
    attempt.uuid,
    payment,
    opened.retry === true,
  );
  return settle(opened.subscriptionUuid, invoice.uuid, attempt.uuid, outcome);
}

type ChargeOutcome = Awaited<ReturnType<typeof chargeSavedSource>>;

/** Records the provider's answer once: attempt, invoice, payment and subscription together. */
export function settle(
  subscriptionUuid: string,
  invoiceUuid: string,
  attemptUuid: string,
  outcome: ChargeOutcome,
): Promise<BillingOutcome> {
  return retryOnConflict(async () => {
    const [subscription, invoice] = await Promise.all([
      findSubscription(subscriptionUuid),
      findInvoice(subscriptionUuid, invoiceUuid),
    ]);
    const read = invoice?.charge_attempts.find((a) => a.uuid === attemptUuid);
    if (!subscription || !invoice || !read || read.status !== 'pending') return noOutcome();
    const payment = await findPayment(read.payment_uuid);
    if (!payment) throw new Error(`Payment ${read.payment_uuid} of charge attempt ${attemptUuid} is missing`);
    const at = now();
    const nextInvoice = copy(invoice, at);
    const nextSubscription = copy(subscription, at);
    const attempt = nextInvoice.charge_attempts.find((a) => a.uuid === attemptUuid) as ChargeAttemptRecord;
    if (isProcessing(outcome)) {
      // The provider took the charge and decides later (a SEPA debit: days). The attempt stays
      // pending, settled by the provider's event, and asked about again each day meanwhile.
      if (payment.status_reason === 'processing' && (read.lease_until ?? 0) > at) return noOutcome();
      attempt.lease_until = at + PROCESSING_RECHECK_SECONDS;
      await transactWrite([
        versioned(invoicePut(nextInvoice, invoice.version)),
        versioned(paymentUpdateWrite(settledRecurringPayment(payment, outcome), payment.version)),
      ]);
      // Neither succeeded nor failed yet: the run's summary counts it when it is decided.
      return noOutcome();
    }
    delete attempt.lease_until;
    const succeeded = outcome.status === 'succeeded';
    attempt.status = succeeded ? 'succeeded' : 'failed';
    if (outcome.status === 'failed') attempt.status_reason = outcome.reason;
    let subscriptionChanged = false;

    if (succeeded) {
      nextInvoice.status = 'paid';
      nextInvoice.status_reason = 'paid';
      delete nextInvoice.next_attempt_day;
      nextInvoice.events = [invoiceEvent(nextInvoice, 'paid')];
      if (subscription.consecutive_failed_invoices !== 0) {
        nextSubscription.consecutive_failed_invoices = 0;
        subscriptionChanged = true;
      }
    } else {
      nextInvoice.failed_payment_attempts += 1;
      nextInvoice.events = [attemptFailedEvent(nextInvoice, attempt)];
      if (invoice.status === 'open' && !invoice.is_manually_created) {
        subscriptionChanged = await dun(nextInvoice, nextSubscription, at);
      }
    }
    const writes: GuardedWrite[] = [
      versioned(invoicePut(nextInvoice, invoice.version)),
      versioned(paymentUpdateWrite(settledRecurringPayment(payment, outcome), payment.version)),
    ];
    if (subscriptionChanged) {
      writes.push(versioned(subscriptionPut(nextSubscription, subscription.version)));
    }
    await transactWrite(writes);
    return { ...noOutcome(), succeeded: succeeded ? 1 : 0, failed: succeeded ? 0 : 1 };
  });
}

/**
 * A recurring charge we had recorded failed that the provider reports paid after all (its late
 * AUTHORISATION or `payment_intent.succeeded`): money was taken, so the attempt is succeeded and
 * the payment too (announced), and the invoice is paid (announced) if no other attempt paid it;
 * from open or from cancelled by dunning alike, and the subscription's failure count starts over.
 * Answers `paid_twice` when another attempt had paid the invoice already (the donor paid twice: a
 * person refunds one), `none` when there was nothing to record (asked twice, or not failed).
 */
export function recordLateRecurringSuccess(
  subscriptionUuid: string,
  invoiceUuid: string,
  attemptUuid: string,
  providerReference: string | undefined,
): Promise<'paid' | 'paid_twice' | 'none'> {
  return retryOnConflict(async () => {
    const [subscription, invoice] = await Promise.all([
      findSubscription(subscriptionUuid),
      findInvoice(subscriptionUuid, invoiceUuid),
    ]);
    const read = invoice?.charge_attempts.find((a) => a.uuid === attemptUuid);
    if (!subscription || !invoice || !read || read.status !== 'failed') return 'none';
    const payment = await findPayment(read.payment_uuid);
    if (payment?.status !== 'failed') return 'none';
    const at = now();
    const nextInvoice = copy(invoice, at);
    const nextSubscription = copy(subscription, at);
    const attempt = nextInvoice.charge_attempts.find((a) => a.uuid === attemptUuid) as ChargeAttemptRecord;
    attempt.status = 'succeeded';
    delete attempt.status_reason;
    const paidBefore = invoice.status === 'paid';
    let subscriptionChanged = false;
    if (!paidBefore) {
      nextInvoice.status = 'paid';
      nextInvoice.status_reason = 'paid';
      delete nextInvoice.next_attempt_day;
      nextInvoice.events = [invoiceEvent(nextInvoice, 'paid')];
      if (subscription.consecutive_failed_invoices !== 0) {
        nextSubscription.consecutive_failed_invoices = 0;
        subscriptionChanged = true;
      }
    }
    const { status_reason: _failedFor, ...rest } = settledRecurringPayment(payment, {
      status: 'succeeded',
      ...(providerReference ? { providerReference } : {}),
    });
    const writes: GuardedWrite[] = [
      versioned(invoicePut(nextInvoice, invoice.version)),
      versioned(paymentUpdateWrite(rest, payment.version)),
    ];
    if (subscriptionChanged) writes.push(versioned(subscriptionPut(nextSubscription, subscription.version)));
    await transactWrite(writes);
    return paidBefore ? 'paid_twice' : 'paid';
  });
}

/**
 * A recurring debit that came back after it was paid (a SEPA return: the donor's bank took the
 * money back, payments' `debitReturned` rule): the attempt that paid the invoice is failed
 * (`debit_returned`, announced `charge_attempt.failed`), the invoice is open again and dunning
 * runs as after any failed attempt (the next attempt on the plan's schedule, or the invoice
 * cancelled once its retries are used up). Once only: an attempt no longer succeeded is left
 * alone. The payment itself is not written here: its dispute was recorded already.
 */
export function reopenReturnedDebit(
  subscriptionUuid: string,
  invoiceUuid: string,
  attemptUuid: string,
): Promise<BillingOutcome> {
  return retryOnConflict(async () => {
    const [subscription, invoice] = await Promise.all([
      findSubscription(subscriptionUuid),
      findInvoice(subscriptionUuid, invoiceUuid),
    ]);
    const read = invoice?.charge_attempts.find((a) => a.uuid === attemptUuid);
    if (!subscription || !invoice || !read || read.status !== 'succeeded' || invoice.status !== 'paid') {
      return noOutcome();
    }
    const at = now();
    const nextInvoice = copy(invoice, at);
    const nextSubscription = copy(subscription, at);
    const attempt = nextInvoice.charge_attempts.find((a) => a.uuid === attemptUuid) as ChargeAttemptRecord;
    attempt.status = 'failed';
    attempt.status_reason = 'debit_returned';
    nextInvoice.status = 'open';
    nextInvoice.status_reason = 'debit_returned';
    nextInvoice.failed_payment_attempts += 1;
    nextInvoice.events = [attemptFailedEvent(nextInvoice, attempt)];
    const subscriptionChanged =
      !invoice.is_manually_created && statusAt(subscription, at) === 'active'
        ? await dun(nextInvoice, nextSubscription, at)
        : false;
    const writes: GuardedWrite[] = [versioned(invoicePut(nextInvoice, invoice.version))];
    if (subscriptionChanged) writes.push(versioned(subscriptionPut(nextSubscription, subscription.version)));
    await transactWrite(writes);
    return { ...noOutcome(), failed: 1 };
  });
}

/**
 * Dunning after a failed attempt (contract: `retry_delays_days[i]` is the gap after failed
 * attempt i+1): schedule the next attempt, or, with the retries used up, cancel the invoice,
 * count it, and at the plan's limit cancel or suspend the subscription. Returns whether the
 * subscription changed.
 */
async function dun(invoice: InvoiceRecord, subscription: SubscriptionRecord, at: number): Promise<boolean> {
  const plan = await planRules(subscription.plan_uuid);
  const {
    retry_delays_days: delays,
    max_consecutive_failed_invoices: limit,
    on_max_failed,
  } = plan.dunning_configuration;
  const failures = invoice.failed_payment_attempts;
  const delay = delays[failures - 1];
  if (delay !== undefined) {
    invoice.next_attempt_day = addDays(localDateOf(at, invoice.timezone), delay);
    return false;
  }
  invoice.status = 'cancelled';
  invoice.status_reason = 'retries_exhausted';
  delete invoice.next_attempt_day;
  invoice.events = [...invoice.events, invoiceEvent(invoice, 'cancelled')];
  subscription.consecutive_failed_invoices += 1;
  if (subscription.consecutive_failed_invoices >= limit) {
    const status = statusAt(subscription, at);
    if (on_max_failed === 'cancel' && status !== 'cancelled' && status !== 'finished') cancelNow(subscription, at);
    if (on_max_failed === 'suspend' && status === 'active') suspendIndefinitely(subscription, at);
  }
  return true;
}
