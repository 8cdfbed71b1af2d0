import { createHash } from 'node:crypto';
import { assertAccountGrant, derivedToken, money, NotFoundError, type Principal, ValidationError } from '@svc/core';
import { type Account, findAccount } from '@svc/organisations';
import { providerNamed } from '../providers/registry';
import { minorUnits, type PaymentRequest, refuseSubscription } from './request';
import { linkSupporter } from './supporter-link';

/**
 * Resolves what a payment request points at: the account (granted to the caller), the payment
 * method profile on that account, and the provider behind it.
 */
export async function resolveAccountAndProvider(principal: Promise<Principal>, request: PaymentRequest) {
  const [caller, account] = await Promise.all([principal, findAccount(request.account_uuid)]);
  if (!account) throw new NotFoundError('Account not found');
  assertAccountGrant(caller, account.organisation_uuid, account.uuid);
  if (!account.active) {
    throw ValidationError.field('account_uuid', 'error.account.inactive', 'This account is not active');
  }
  const profile = findProfile(account, request);
  return { caller, account, profile, provider: providerNamed(profile.provider) };
}

function findProfile(account: Account, request: PaymentRequest) {
  const profile = account.payment_method_profiles.find(
    (p) => p.name === request.profile && p.payment_method === request.payment_method,
  );
  if (!profile) {
    throw ValidationError.field(
      'profile',
      'the_value_you_selected_is_not_a_valid_choice',
      `The account has no ${request.payment_method} profile named ${request.profile}`,
    );
  }
  return profile;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * The common start of a payment and of a payment source: the account, profile and provider,
 * the donor, and the provider's authorisation with its approval page address. `uuid` (the
 * new payment's or source's) is the provider's idempotency reference, and the approval token is
 * derived from it under the service key, so a re-run of the request asks the provider the very
 * same thing and the approval link the provider recorded stays valid.
 */
export async function authoriseNew(
  principal: Promise<Principal>,
  request: PaymentRequest,
  uuid: string,
  approvalPage: (uuid: string, token: string) => string,
  beforeAuthorising: (account: Account) => Promise<void> = async () => refuseSubscription(request),
) {
  const { account, profile, provider } = await resolveAccountAndProvider(principal, request);
  await beforeAuthorising(account);
  const supporter = await linkSupporter(request, account.organisation_uuid);
  const approvalToken = await derivedToken('approval', uuid);
  const amount = money(minorUnits(request.amount), request.amount.currency);
  const authorisation = await provider.authorise({
    reference: uuid,
    method: request.payment_method,
    amount,
    paymentInformation: request.payment_information,
    approvalUrl: approvalPage(uuid, approvalToken),
  });
  return {
    account,
    profile,
    provider,
    supporter,
    amount,
    authorisation,
    approvalTokenHash: hashToken(approvalToken),
  };
}
