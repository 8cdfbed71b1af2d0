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
  const source =
    succeeded && payment.create_payment_source && instrumentToken
      ? newSource({
          request: {
            account_uuid: payment.account_uuid,
            payment_method: payment.payment_method,
            profile: payment.profile,
            amount: { value: String(payment.amount_minor), currency: payment.currency },
          },
          organisationUuid: payment.organisation_uuid,
          provider: payment.provider,
          authorisation: { outcome, maskedInformation: payment.payment_information ?? {}, instrumentToken },
          created: payment.created,
          testMode: payment.test_mode,
          supporterUuid: payment.supporter_uuid,
          providerAccount: payment.provider_account,
        })
      : undefined;
  const next: PaymentRecord = {
    ...rest,
    status: succeeded ? 'succeeded' : 'failed',
    ...(outcome.status === 'failed' ? { status_reason: outcome.reason } : {}),
    ...(source ? { created_payment_source_uuid: source.uuid } : {}),
    event_sequence: payment.event_sequence + 1,
    events: [],
  };
  next.events = paymentStatusEvents(next);
  const extra: GuardedWrite[] = [];
  if (source) extra.push({ item: newPaymentSourceWrite(source) });
  if (source && subscriptionRequest !== undefined) {
    const started = await startSubscription(subscriptionRequest, next, source).catch((error: unknown) => {
      // The donor has paid: the payment is recorded whatever happens to its subscription, and
      // the request stays on the payment for support to act on.
      logger.error('Could not start the subscription of an approved payment', { payment: payment.uuid, error });
      next.subscription_request = subscriptionRequest;
      return undefined;
    });
    if (started) {
      next.subscription_uuid = started.uuid;
      extra.push({ item: started.write });
    }
  }
  return savePaymentVersion(payment, next, extra);
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
