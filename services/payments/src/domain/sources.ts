import { definedFields, isResumedRequest, newResourceUuid, now, onAccount, type Principal, readFor } from '@svc/core';
import { type GuardedWrite, retryOnConflict, transactWrite } from '@svc/table';
import {
  findPaymentSource,
  newPaymentSourceWrite,
  type PaymentSourceRecord,
} from '../repository/payment-source-repository';
import { approvalPath, authoriseNew } from './context';
import { newSource, pendingFields } from './initialise';
import { FIRST_CHECK_SECONDS } from './recheck';
import type { PaymentRequest } from './request';
import { saveSourceVersion } from './versioned';

/**
 * Saves an instrument for later charges, without charging it: the provider sets it up for
 * off-session use (Stripe: a SetupIntent). One that waits for the donor (3-D Secure, TWINT) is
 * pending with the provider's action, and is settled by the donor's return, the provider's event
 * or the resolver's check; it fails after SOURCE_APPROVAL_SECONDS (resolution.ts).
 */
export async function createPaymentSource(
  principal: Promise<Principal>,
  request: PaymentRequest,
  baseUrl: string,
): Promise<PaymentSourceRecord> {
  const uuid = newResourceUuid('payment_source');
  // A re-run of a request that died after storing its source returns that source.
  if (isResumedRequest() && (await findPaymentSource(uuid))) return getPaymentSource(principal, uuid);
  const { account, profile, provider, providerAccount, supporter, authorisation, approvalTokenHash } =
    await authoriseNew({
      principal,
      request,
      uuid,
      approvalPage: (id, token, providerName) =>
        `${baseUrl}${approvalPath(providerName, 'payment-sources', id)}?token=${token}`,
      saving: 'source_only',
    });
  const { outcome } = authorisation;
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
    ...(outcome.status === 'pending'
      ? {
          status: 'pending',
          ...pendingFields(outcome, approvalTokenHash),
          // Asked about in the background too, where the provider can be asked.
          ...(provider.sourceOutcomeOf ? { next_check: now() + FIRST_CHECK_SECONDS } : {}),
        }
      : {}),
    ...definedFields({ provider_reference: authorisation.providerReference }),
    ...definedFields({ provider_account: providerAccount }),
  };
  if (outcome.status === 'failed') delete source.instrument_token;
  const writes: GuardedWrite[] = [{ item: newPaymentSourceWrite(source) }];
  if (supporter.write) writes.push({ item: supporter.write });
  await transactWrite(writes);
  return source;
}

export async function getPaymentSource(principal: Promise<Principal>, uuid: string): Promise<PaymentSourceRecord> {
  return readFor(principal, findPaymentSource(uuid), 'Payment source not found', onAccount);
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
