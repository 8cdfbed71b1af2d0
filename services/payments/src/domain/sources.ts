import {
  assertAccountGrant,
  definedFields,
  isResumedRequest,
  NotFoundError,
  newResourceUuid,
  now,
  type Principal,
} from '@svc/core';
import { type GuardedWrite, transactWrite } from '@svc/table';
import {
  findPaymentSource,
  newPaymentSourceWrite,
  type PaymentSourceRecord,
} from '../repository/payment-source-repository';
import { approvalPath, authoriseNew, type DonorConnection } from './context';
import { newSource, pendingFields } from './initialise';
import type { PaymentRequest } from './request';
import { retryOnConflict, saveSourceVersion } from './versioned';

/**
 * Saves an instrument for later charges. Where the method needs it (cards), the provider
 * verifies it with a charge of the requested amount that is refunded at once.
 */
export async function createPaymentSource(
  principal: Promise<Principal>,
  request: PaymentRequest,
  baseUrl: string,
  donor: DonorConnection = {},
): Promise<PaymentSourceRecord> {
  const uuid = newResourceUuid('payment_source');
  // A re-run of a request that died after storing its source returns that source.
  if (isResumedRequest() && (await findPaymentSource(uuid))) return getPaymentSource(principal, uuid);
  const { account, profile, provider, context, supporter, amount, authorisation, approvalTokenHash } =
    await authoriseNew(
      principal,
      request,
      uuid,
      (id, token, providerName) => `${baseUrl}${approvalPath(providerName, 'payment-sources', id)}?token=${token}`,
      donor,
      'source_only',
    );
  const { outcome } = authorisation;
  if (outcome.status === 'succeeded' && request.payment_method === 'card') {
    await provider.refund(uuid, amount, { context, providerReference: authorisation.providerReference });
  }
  const base = newSource({
    request: { ...request, profile: profile.name },
    organisationUuid: account.organisation_uuid,
    provider: provider.name,
    authorisation,
    created: now(),
    testMode: request.test_mode ?? false,
    supporterUuid: supporter.supporter_uuid,
    uuid,
  });
  const source: PaymentSourceRecord = {
    ...base,
    custom_parameters: request.custom_parameters ?? {},
    ...(outcome.status === 'failed' ? { status: 'failed', status_reason: outcome.reason } : {}),
    ...(outcome.status === 'pending' ? { status: 'pending', ...pendingFields(outcome, approvalTokenHash) } : {}),
    ...definedFields({ provider_reference: authorisation.providerReference }),
    ...definedFields({ provider_account: profile.stripe_account }),
  };
  if (outcome.status === 'failed') delete source.instrument_token;
  const writes: GuardedWrite[] = [{ item: newPaymentSourceWrite(source) }];
  if (supporter.write) writes.push({ item: supporter.write });
  await transactWrite(writes);
  return source;
}

export async function getPaymentSource(principal: Promise<Principal>, uuid: string): Promise<PaymentSourceRecord> {
  const [caller, source] = await Promise.all([principal, findPaymentSource(uuid)]);
  if (!source) throw new NotFoundError('Payment source not found');
  assertAccountGrant(caller, source.organisation_uuid, source.account_uuid);
  return source;
}

export function replaceSourceCustomParameters(
  principal: Promise<Principal>,
  uuid: string,
  parameters: Record<string, unknown>,
): Promise<PaymentSourceRecord> {
  return retryOnConflict(async () => {
    const source = await getPaymentSource(principal, uuid);
    return saveSourceVersion(source, { ...source, custom_parameters: parameters });
  });
}
