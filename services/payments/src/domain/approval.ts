import { timingSafeEqual } from 'node:crypto';
import { logger, NotFoundError } from '@svc/core';
import type { GuardedWrite } from '@svc/table';
import { retryOnConflict } from '@svc/table';
import type { Outcome } from '../providers/provider';
import { providerNamed } from '../providers/registry';
import { findPayment, type PaymentRecord } from '../repository/payment-repository';
import {
  findPaymentSource,
  newPaymentSourceWrite,
  type PaymentSourceRecord,
} from '../repository/payment-source-repository';
import { hashToken } from './context';
import { paymentStatusEvents } from './events';
import { newSource, startSubscription } from './initialise';
import { savePaymentVersion, saveSourceVersion } from './versioned';

/**
 * The donor's decision on the simulated provider's page (3-D Secure, TWINT). The page's token
 * (kept only as a hash, also after the decision, so nobody without it learns the outcome)
 * authorises it; a decision on something no longer pending changes
 * nothing, so a double click is harmless.
 */
function tokenMatches(token: string, hash: string | undefined): boolean {
  if (!hash) return false;
  const given = Buffer.from(hashToken(token));
  const stored = Buffer.from(hash);
  return given.length === stored.length && timingSafeEqual(given, stored);
}

/** What waits for a donor's decision on an approval page: a payment or a payment source. */
interface Approvable {
  status: string;
  provider: string;
  instrument_token?: string | undefined;
  approval_token_hash?: string | undefined;
}

/** The record the page's token opens; 404 alike for a wrong token and for none. */
async function findByToken<T extends Approvable>(
  find: (uuid: string) => Promise<T | undefined>,
  what: string,
  uuid: string,
  token: string,
): Promise<T> {
  const found = await find(uuid);
  if (!found || !tokenMatches(token, found.approval_token_hash)) throw new NotFoundError(`${what} not found`);
  return found;
}

/** The donor's decision, asked of the provider and settled; one no longer pending is returned as it is. */
function decide<T extends Approvable>(
  findPending: () => Promise<T>,
  approved: boolean,
  settle: (record: T, outcome: Outcome) => Promise<T>,
): Promise<T> {
  return retryOnConflict(async () => {
    const record = await findPending();
    if (record.status !== 'pending') return record;
    const outcome = await providerNamed(record.provider).completeApproval(record.instrument_token, approved);
    return settle(record, outcome);
  });
}

export function findPendingPayment(uuid: string, token: string): Promise<PaymentRecord> {
  return findByToken(findPayment, 'Payment', uuid, token);
}

export function decidePayment(uuid: string, token: string, approved: boolean): Promise<PaymentRecord> {
  return decide(() => findPendingPayment(uuid, token), approved, settlePending);
}

/**
 * Records the provider's final answer on a pending payment, with what it brings: the saved
 * source and the subscription a succeeded payment starts. Guarded by the version read, so of two
 * answers racing (the donor's return and the provider's event) one lands and the other re-reads
 * a payment that is no longer pending. A pending answer changes nothing.
 */
export async function settlePending(payment: PaymentRecord, outcome: Outcome): Promise<PaymentRecord> {
  if (payment.status !== 'pending' || outcome.status === 'pending') return payment;
  const {
    action: _action,
    instrument_token: instrumentToken,
    subscription_request: subscriptionRequest,
    // Why it was pending (processing, provider_unavailable) ends with the wait, and so do its checks.
    status_reason: _pendingReason,
    next_check: _nextCheck,
    ...rest
  } = payment;
  const succeeded = outcome.status === 'succeeded';
  const next: PaymentRecord = {
    ...rest,
    status: succeeded ? 'succeeded' : 'failed',
    ...(outcome.status === 'failed' ? { status_reason: outcome.reason } : {}),
    event_sequence: payment.event_sequence + 1,
    events: [],
  };
  const source =
    succeeded && payment.create_payment_source && instrumentToken ? sourceOfPayment(next, instrumentToken) : undefined;
  next.events = paymentStatusEvents(next);
  const extra = source ? await withSubscription(next, source, subscriptionRequest) : [];
  return savePaymentVersion(payment, next, extra);
}

/** The payment source a succeeded payment saves: `next` names it. */
function sourceOfPayment(next: PaymentRecord, instrumentToken: string): PaymentSourceRecord {
  const source = newSource({
    request: {
      account_uuid: next.account_uuid,
      payment_method: next.payment_method,
      profile: next.profile,
      amount: { value: String(next.amount_minor), currency: next.currency },
    },
    organisationUuid: next.organisation_uuid,
    provider: next.provider,
    authorisation: {
      outcome: { status: 'succeeded' },
      maskedInformation: next.payment_information ?? {},
      instrumentToken,
    },
    created: next.created,
    testMode: next.test_mode,
    supporterUuid: next.supporter_uuid,
    providerAccount: next.provider_account,
  });
  next.created_payment_source_uuid = source.uuid;
  return source;
}

/** The source's write, and the subscription the payment asked for, started on it (`next` names it). */
async function withSubscription(
  next: PaymentRecord,
  source: PaymentSourceRecord,
  subscriptionRequest: unknown,
): Promise<GuardedWrite[]> {
  const writes: GuardedWrite[] = [{ item: newPaymentSourceWrite(source) }];
  if (subscriptionRequest !== undefined) {
    const started = await startSubscription(subscriptionRequest, next, source).catch((error: unknown) => {
      // The donor has paid: the payment is recorded whatever happens to its subscription, and
      // the request stays on the payment for support to act on.
      logger.error('Could not start the subscription of an approved payment', { payment: next.uuid, error });
      next.subscription_request = subscriptionRequest;
      return undefined;
    });
    if (started) {
      next.subscription_uuid = started.uuid;
      writes.push({ item: started.write });
    }
  }
  return writes;
}

/**
 * The instrument of a paid payment that was to save one, come after the payment settled without
 * it (the provider's answer lacked it; its notification brings it): the source is saved now, and
 * the subscription the payment asked for starts. Safe twice: a payment with its source is left.
 */
export function attachLateInstrument(uuid: string, instrumentToken: string): Promise<PaymentRecord | undefined> {
  return retryOnConflict(async () => {
    const payment = await findPayment(uuid);
    if (payment?.status !== 'succeeded' || !payment.create_payment_source || payment.created_payment_source_uuid)
      return payment;
    const { subscription_request: subscriptionRequest, ...rest } = payment;
    const next: PaymentRecord = { ...rest, events: [] };
    const extra = await withSubscription(next, sourceOfPayment(next, instrumentToken), subscriptionRequest);
    return savePaymentVersion(payment, next, extra);
  });
}

export function findPendingSource(uuid: string, token: string): Promise<PaymentSourceRecord> {
  return findByToken(findPaymentSource, 'Payment source', uuid, token);
}

export function decideSource(uuid: string, token: string, approved: boolean): Promise<PaymentSourceRecord> {
  return decide(() => findPendingSource(uuid, token), approved, settlePendingSource);
}

/**
 * Records the provider's final answer on a pending source: active with its instrument, or failed
 * with the reason. A pending answer, or a source no longer pending, changes nothing.
 */
export async function settlePendingSource(source: PaymentSourceRecord, outcome: Outcome): Promise<PaymentSourceRecord> {
  if (source.status !== 'pending' || outcome.status === 'pending') return source;
  const {
    action: _action,
    instrument_token: instrumentToken,
    status_reason: _pendingReason,
    next_check: _nextCheck,
    ...rest
  } = source;
  const next: PaymentSourceRecord =
    outcome.status === 'succeeded'
      ? { ...rest, status: 'active', ...(instrumentToken ? { instrument_token: instrumentToken } : {}) }
      : { ...rest, status: 'failed', status_reason: outcome.reason };
  return saveSourceVersion(source, next);
}
