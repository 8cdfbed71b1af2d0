import { newUuid, now, type Principal } from '@svc/core';
import { type GuardedWrite, transactWrite } from '@svc/table';
import type { Authorisation } from '../providers/provider';
import { newPaymentWrite, type PaymentRecord } from '../repository/payment-repository';
import { newPaymentSourceWrite, type PaymentSourceRecord } from '../repository/payment-source-repository';
import { authoriseNew } from './context';
import { paymentStatusEvents } from './events';
import type { PaymentRequest } from './request';

/**
 * Initialises a payment: the provider authorises it, then the payment (carrying its event), a
 * new supporter and a new payment source are written together: one conditional put when there
 * is only the payment, one transaction otherwise. A real PSP adapter must
 * treat the payment uuid as its idempotency reference.
 */
export async function initialisePayment(
  principal: Promise<Principal>,
  request: PaymentRequest,
  baseUrl: string,
): Promise<PaymentRecord> {
  const { account, profile, provider, supporter, uuid, amount, authorisation, approvalTokenHash } = await authoriseNew(
    principal,
    request,
    (id, token) => `${baseUrl}/simulated/payments/${id}?token=${token}`,
  );
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
        })
      : undefined;

  const payment: PaymentRecord = {
    uuid,
    organisation_uuid: account.organisation_uuid,
    account_uuid: account.uuid,
    created,
    updated: created,
    status: outcome.status,
    ...(outcome.status === 'failed' ? { status_reason: outcome.reason } : {}),
    test_mode: testMode,
    amount_minor: amount.minor,
    refunded_minor: 0,
    currency: amount.currency,
    payment_method: request.payment_method,
    profile: profile.name,
    provider: provider.name,
    ...(request.locale === undefined ? {} : { locale: request.locale }),
    ...(request.return_url === undefined ? {} : { return_url: request.return_url }),
    ...(outcome.status === 'pending' ? { action: outcome.action, approval_token_hash: approvalTokenHash } : {}),
    ...(Object.keys(authorisation.maskedInformation).length > 0
      ? { payment_information: authorisation.maskedInformation }
      : {}),
    ...(supporter.supporter_uuid === undefined ? {} : { supporter_uuid: supporter.supporter_uuid }),
    ...(supporter.supporter === undefined ? {} : { supporter: supporter.supporter }),
    ...(request.create_payment_source ? { create_payment_source: true } : {}),
    ...(outcome.status === 'pending' && request.create_payment_source && authorisation.instrumentToken
      ? { instrument_token: authorisation.instrumentToken }
      : {}),
    ...(source ? { created_payment_source_uuid: source.uuid } : {}),
    refunds: [],
    custom_parameters: request.custom_parameters ?? {},
    svc_parameters: {},
    version: 1,
    event_sequence: outcome.status === 'pending' ? 0 : 1,
    events: [],
  };
  payment.events = paymentStatusEvents(payment);

  const writes: GuardedWrite[] = [{ item: newPaymentWrite(payment) }];
  if (supporter.write) writes.push({ item: supporter.write });
  if (source) writes.push({ item: newPaymentSourceWrite(source) });
  await transactWrite(writes);
  return payment;
}

export function newSource(options: {
  request: PaymentRequest;
  organisationUuid: string;
  provider: string;
  authorisation: Authorisation;
  created: number;
  testMode: boolean;
  supporterUuid: string | undefined;
}): PaymentSourceRecord {
  const { request, authorisation } = options;
  return {
    uuid: newUuid(),
    organisation_uuid: options.organisationUuid,
    account_uuid: request.account_uuid,
    created: options.created,
    status: 'active',
    test_mode: options.testMode,
    payment_method: request.payment_method,
    profile: request.profile,
    provider: options.provider,
    payment_information: authorisation.maskedInformation,
    ...(options.supporterUuid === undefined ? {} : { supporter_uuid: options.supporterUuid }),
    custom_parameters: {},
    ...(authorisation.instrumentToken === undefined ? {} : { instrument_token: authorisation.instrumentToken }),
    version: 1,
  };
}
