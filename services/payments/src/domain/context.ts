import { createHash } from 'node:crypto';
import {
  assertAccountGrant,
  definedFields,
  derivedToken,
  money,
  NotFoundError,
  type Principal,
  ValidationError,
} from '@svc/core';
import { type Account, findAccountToPay } from '@svc/organisations';
import type { DonorDetails, PaymentAtProvider, ProviderContext } from '../providers/provider';
import { minorUnits, type PaymentRequest, refuseSourceOnlyFields } from './request';
import { authoriseRouted, providerAccountOf } from './routing';
import { linkSupporter } from './supporter-link';

/**
 * Resolves what a payment request points at: the account (granted to the caller) and the payment
 * method profile on that account. The provider is chosen later, per payment (routing.ts).
 */
export async function resolveAccountAndProfile(principal: Promise<Principal>, request: PaymentRequest) {
  const { caller, account } = await resolveAccount(principal, request.account_uuid);
  return { caller, account, profile: findProfile(account, request) };
}

/** The active account a new payment (or a quote for one) goes to: 404 unknown, 403 not granted, 400 inactive. */
export async function resolveAccount(principal: Promise<Principal>, accountUuid: string) {
  const [caller, account] = await Promise.all([principal, findAccountToPay(accountUuid)]);
  if (!account) throw new NotFoundError('Account not found');
  assertAccountGrant(caller, account.organisation_uuid, account.uuid);
  if (!account.active) {
    throw ValidationError.field('account_uuid', 'error.account.inactive', 'This account is not active');
  }
  return { caller, account };
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

/**
 * Where the donor approves a pending payment or source: the simulated provider's own page, or
 * the return endpoint a real provider sends the donor back to after its page (3-D Secure, TWINT).
 */
export function approvalPath(providerName: string, kind: 'payments' | 'payment-sources', uuid: string): string {
  return providerName === 'simulated'
    ? `/simulated/${kind}/${uuid}`
    : `/providers/${providerName}/return/${kind}/${uuid}`;
}

/** The provider settings a later call about a stored payment or source needs. */
export function storedContext(stored: {
  profile: string;
  payment_method: string;
  provider: string;
  provider_account?: string | undefined;
  test_mode: boolean;
}): ProviderContext {
  return {
    profile: {
      name: stored.profile,
      payment_method: stored.payment_method,
      provider: stored.provider,
      ...definedFields(
        stored.provider === 'adyen'
          ? { merchant_account: stored.provider_account }
          : { stripe_account: stored.provider_account },
      ),
    },
    testMode: stored.test_mode,
  };
}

/** What a refund of a stored payment tells its provider about the payment. */
export function refundTarget(payment: {
  uuid: string;
  profile: string;
  payment_method: string;
  provider: string;
  provider_account?: string | undefined;
  provider_reference?: string | undefined;
  test_mode: boolean;
  amount_minor: number;
  currency: string;
}): PaymentAtProvider {
  return {
    context: storedContext(payment),
    providerReference: payment.provider_reference,
    paymentUuid: payment.uuid,
    amount: money(payment.amount_minor, payment.currency),
  };
}

/** What the linked supporter tells a provider about the donor. */
function donorDetails(link: { supporter_uuid?: string; supporter?: Record<string, unknown> }): DonorDetails {
  const s = link.supporter ?? {};
  const text = (field: string) => (typeof s[field] === 'string' && s[field] !== '' ? (s[field] as string) : undefined);
  const name = [text('first_name'), text('last_name')].filter(Boolean).join(' ') || text('legal_entity');
  const street = [text('street'), text('house_number')].filter(Boolean).join(' ');
  return {
    ...definedFields({ supporterUuid: link.supporter_uuid, email: text('email'), name }),
    ...(street || text('postal_code') || text('city') || text('country')
      ? {
          address: {
            ...definedFields({
              line1: street || undefined,
              postalCode: text('postal_code'),
              city: text('city'),
              country: text('country'),
            }),
          },
        }
      : {}),
  };
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
export interface NewAuthorisation {
  principal: Promise<Principal>;
  request: PaymentRequest;
  /** The new payment's or source's uuid: the provider's idempotency reference. */
  uuid: string;
  approvalPage: (uuid: string, token: string, providerName: string) => string;
  /** Whether the instrument is kept for later charges: a payment that saves one, or only a source. */
  saving: 'none' | 'with_payment' | 'source_only';
  /** Checks once the account is known, before the provider is asked (a payment's subscription). */
  beforeAuthorising?: (account: Account) => Promise<void>;
}

export async function authoriseNew({
  principal,
  request,
  uuid,
  approvalPage,
  saving,
  beforeAuthorising = async () => refuseSourceOnlyFields(request),
}: NewAuthorisation) {
  const { account, profile } = await resolveAccountAndProfile(principal, request);
  await beforeAuthorising(account);
  const supporter = await linkSupporter(request, account.organisation_uuid);
  const approvalToken = await derivedToken('approval', uuid);
  const intended = money(minorUnits(request.amount), request.amount.currency);
  const { provider, context, authorisation, tried, charge } = await authoriseRouted({
    reference: uuid,
    organisation: account.organisation_uuid,
    profile,
    method: request.payment_method,
    saving: saving !== 'none',
    amount: intended,
    coverFees: request.cover_fees === true,
    sourceOnly: saving === 'source_only',
    testMode: request.test_mode ?? false,
    request: (candidate, candidateContext, candidateCharge) => ({
      reference: uuid,
      method: request.payment_method,
      // The candidate's own total when the donor covers its fees (routing.ts chargeAt).
      amount: money(candidateCharge.total, intended.currency),
      paymentInformation: request.payment_information,
      approvalUrl: approvalPage(uuid, approvalToken, candidate.name),
      context: candidateContext,
      saveInstrument: saving !== 'none',
      sourceOnly: saving === 'source_only',
      metadata: {
        svc_reference: uuid,
        svc_organisation_uuid: account.organisation_uuid,
        svc_account_uuid: account.uuid,
      },
      donor: donorDetails(supporter),
    }),
  });
  return {
    account,
    /** The profile as the chosen provider took it (its name, and that provider's settings). */
    profile: context.profile,
    provider,
    context,
    providerAccount: providerAccountOf(context),
    tried,
    supporter,
    /** What the provider charged: the total, the intended amount, and the fees covered. */
    charge,
    currency: intended.currency,
    authorisation,
    approvalTokenHash: hashToken(approvalToken),
  };
}
