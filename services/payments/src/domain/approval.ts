import { timingSafeEqual } from 'node:crypto';
import { logger, NotFoundError } from '@svc/core';
import type { GuardedWrite } from '@svc/table';
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
import { retryOnConflict, savePaymentVersion, saveSourceVersion } from './versioned';

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

export async function findPendingPayment(uuid: string, token: string): Promise<PaymentRecord> {
  const payment = await findPayment(uuid);
  if (!payment || !tokenMatches(token, payment.approval_token_hash)) {
    throw new NotFoundError('Payment not found');
  }
  return payment;
}

export function decidePayment(uuid: string, token: string, approved: boolean): Promise<PaymentRecord> {
  return retryOnConflict(async () => {
    const payment = await findPendingPayment(uuid, token);
    if (payment.status !== 'pending') return payment;
    const outcome = await providerNamed(payment.provider).completeApproval(payment.instrument_token, approved);
    return settlePending(payment, outcome);
  });
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
    // Why it was pending (processing, provider_unavailable) ends with the wait.
    status_reason: _pendingReason,
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

export async function findPendingSource(uuid: string, token: string): Promise<PaymentSourceRecord> {
  const source = await findPaymentSource(uuid);
  if (!source || !tokenMatches(token, source.approval_token_hash)) {
    throw new NotFoundError('Payment source not found');
  }
  return source;
}

export function decideSource(uuid: string, token: string, approved: boolean): Promise<PaymentSourceRecord> {
  return retryOnConflict(async () => {
    const source = await findPendingSource(uuid, token);
    if (source.status !== 'pending') return source;
    const outcome = await providerNamed(source.provider).completeApproval(source.instrument_token, approved);
    return settlePendingSource(source, outcome);
  });
}

/**
 * Records the provider's final answer on a pending source: active with its instrument, or failed
 * with the reason. A pending answer, or a source no longer pending, changes nothing.
 */
export async function settlePendingSource(source: PaymentSourceRecord, outcome: Outcome): Promise<PaymentSourceRecord> {
  if (source.status !== 'pending' || outcome.status === 'pending') return source;
  const { action: _action, instrument_token: instrumentToken, status_reason: _pendingReason, ...rest } = source;
  const next: PaymentSourceRecord =
    outcome.status === 'succeeded'
      ? { ...rest, status: 'active', ...(instrumentToken ? { instrument_token: instrumentToken } : {}) }
      : { ...rest, status: 'failed', status_reason: outcome.reason };
  return saveSourceVersion(source, next);
}
