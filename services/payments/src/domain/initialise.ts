import { assertAccountGrant, definedFields, isResumedRequest, newResourceUuid, now, type Principal } from '@svc/core';
import { type GuardedWrite, type TransactItem, transactWrite } from '@svc/table';
import type { Authorisation, Outcome } from '../providers/provider';
import { findPayment, newPaymentWrite, type PaymentRecord, withSucceededAt } from '../repository/payment-repository';
import { newPaymentSourceWrite, type PaymentSourceRecord } from '../repository/payment-source-repository';
import { approvalPath, authoriseNew } from './context';
import { paymentStatusEvents } from './events';
import { FIRST_CHECK_SECONDS } from './recheck';
import { type PaymentRequest, requireSourceForSubscription } from './request';
import { parsePaymentSubscription, subscriptions } from './subscriptions-port';

/**
 * Initialises a payment: the provider authorises it, then the payment (carrying its event), a
 * new supporter and a new payment source are written together: one conditional put when there
 * is only the payment, one transaction otherwise. The payment's uuid is the provider's
 * idempotency reference; a re-run of a request that died (same Idempotency-Key, same body) names
 * the same payment, so it returns what its first run stored, or asks the provider again under
 * the same reference and gets the first answer back: one charge either way.
 */
export async function initialisePayment(
  principal: Promise<Principal>,
  request: PaymentRequest,
  baseUrl: string,
): Promise<PaymentRecord> {
  requireSourceForSubscription(request);
  const uuid = newResourceUuid('payment');
  const stored = await storedByEarlierRun(principal, uuid);
  if (stored) return stored;
  const {
    account,
    profile,
    provider,
    providerAccount,
    tried,
    supporter,
    charge,
    currency,
    authorisation,
    approvalTokenHash,
  } = await authoriseNew({
    principal,
    request,
    uuid,
    approvalPage: (id, token, providerName) => `${baseUrl}${approvalPath(providerName, 'payments', id)}?token=${token}`,
    saving: request.create_payment_source ? 'with_payment' : 'none',
    beforeAuthorising: async (account) => {
      if (request.subscription === undefined) return;
      await subscriptions().checkPaymentSubscription(
        parsePaymentSubscription(request.subscription),
        account.organisation_uuid,
        account.uuid,
      );
    },
  });
  const { outcome } = authorisation;
  const created = now();
  const testMode = request.test_mode ?? false;
  const source =
    request.create_payment_source && outcome.status === 'succeeded'
      ? newSource({
          request,
          organisationUuid: account.organisation_uuid,
          provider: provider.name,
          authorisation,
          created,
          testMode,
          supporterUuid: supporter.supporter_uuid,
          providerAccount,
        })
      : undefined;

  const payment: PaymentRecord = withSucceededAt({
    uuid,
    organisation_uuid: account.organisation_uuid,
    account_uuid: account.uuid,
    created,
    updated: created,
    status: outcome.status,
    ...(outcome.status === 'failed' ? { status_reason: outcome.reason } : {}),
    test_mode: testMode,
    amount_minor: charge.total,
    // The donor covered the fees: the gift, and the fees the total covers.
    ...(request.cover_fees ? { intended_minor: charge.intended } : {}),
    ...definedFields({ covered_fees: charge.fees }),
    refunded_minor: 0,
    currency,
    payment_method: request.payment_method,
    profile: profile.name,
    provider: provider.name,
    ...(tried.length > 0 ? { providers_tried: tried } : {}),
    ...definedFields({ locale: request.locale }),
    ...definedFields({ return_url: request.return_url }),
    ...(outcome.status === 'pending' ? pendingFields(outcome, approvalTokenHash) : {}),
    ...definedFields({ provider_reference: authorisation.providerReference }),
    ...definedFields({ provider_account: providerAccount }),
    ...definedFields({ provider_customer: authorisation.providerCustomer }),
    // Waiting on the donor or the provider: asked about in the background too, not only by events.
    ...(outcome.status === 'pending' && provider.outcomeOf ? { next_check: created + FIRST_CHECK_SECONDS } : {}),
    ...(Object.keys(authorisation.maskedInformation).length > 0
      ? { payment_information: authorisation.maskedInformation }
      : {}),
    ...definedFields({ supporter_uuid: supporter.supporter_uuid }),
    ...definedFields({ supporter: supporter.supporter }),
    ...(request.create_payment_source ? { create_payment_source: true } : {}),
    ...(outcome.status === 'pending' && request.create_payment_source && authorisation.instrumentToken
      ? { instrument_token: authorisation.instrumentToken }
      : {}),
    ...(source ? { created_payment_source_uuid: source.uuid } : {}),
    ...(outcome.status === 'pending' && request.subscription !== undefined
      ? { subscription_request: request.subscription }
      : {}),
    refunds: [],
    custom_parameters: request.custom_parameters ?? {},
    svc_parameters: {},
    version: 1,
    event_sequence: outcome.status === 'pending' ? 0 : 1,
    events: [],
  });
  payment.events = paymentStatusEvents(payment);

  const writes: GuardedWrite[] = [];
  if (supporter.write) writes.push({ item: supporter.write });
  if (source) writes.push({ item: newPaymentSourceWrite(source) });
  if (source && request.subscription !== undefined) {
    const started = await startSubscription(request.subscription, payment, source);
    if (started) {
      payment.subscription_uuid = started.uuid;
      writes.push({ item: started.write });
    }
  }
  writes.unshift({ item: newPaymentWrite(payment) });
  await transactWrite(writes);
  return payment;
}

/**
 * A pending payment waits for the donor (an action to follow) or for the provider (a SEPA debit
 * it processes for days, or an answer that did not come: `status_reason` says which).
 */
export function pendingFields(outcome: Outcome & { status: 'pending' }, approvalTokenHash: string) {
  return 'action' in outcome
    ? { action: outcome.action, approval_token_hash: approvalTokenHash }
    : { status_reason: outcome.reason, approval_token_hash: approvalTokenHash };
}

/** The payment an earlier run of this very request stored, if it got that far. */
async function storedByEarlierRun(principal: Promise<Principal>, uuid: string): Promise<PaymentRecord | undefined> {
  if (!isResumedRequest()) return undefined;
  const [caller, payment] = await Promise.all([principal, findPayment(uuid)]);
  if (payment) assertAccountGrant(caller, payment.organisation_uuid, payment.account_uuid);
  return payment;
}

/** The subscription a succeeded payment starts, charged from the source it saved. */
export async function startSubscription(
  request: unknown,
  payment: PaymentRecord,
  source: PaymentSourceRecord,
): Promise<{ uuid: string; write: TransactItem } | undefined> {
  const started = await subscriptions().subscriptionForPayment(
    parsePaymentSubscription(request),
    {
      organisation_uuid: payment.organisation_uuid,
      account_uuid: payment.account_uuid,
      // The gift, not the total: a subscription that covers the fees computes each charge's own.
      amount_minor: payment.intended_minor ?? payment.amount_minor,
      cover_fees: payment.intended_minor !== undefined,
      currency: payment.currency,
      test_mode: payment.test_mode,
      ...definedFields({ supporter_uuid: payment.supporter_uuid }),
      custom_parameters: payment.custom_parameters,
    },
    source,
  );
  return started && { uuid: started.subscription.uuid, write: started.write };
}

export function newSource(options: {
  request: PaymentRequest;
  organisationUuid: string;
  provider: string;
  authorisation: Authorisation;
  created: number;
  testMode: boolean;
  supporterUuid: string | undefined;
  /** Its own uuid, when the caller named it already (a source created on its own). */
  uuid?: string;
  /** The provider account the instrument lives on (a Stripe Connect account). */
  providerAccount?: string | undefined;
}): PaymentSourceRecord {
  const { request, authorisation } = options;
  return {
    uuid: options.uuid ?? newResourceUuid('payment_source'),
    organisation_uuid: options.organisationUuid,
    account_uuid: request.account_uuid,
    created: options.created,
    status: 'active',
    test_mode: options.testMode,
    payment_method: request.payment_method,
    profile: request.profile,
    provider: options.provider,
    payment_information: authorisation.maskedInformation,
    ...definedFields({ supporter_uuid: options.supporterUuid }),
    custom_parameters: {},
    ...definedFields({ instrument_token: authorisation.instrumentToken }),
    ...definedFields({ provider_account: options.providerAccount }),
    version: 1,
  };
}
