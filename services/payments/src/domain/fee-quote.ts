import { deferred, type Principal, uuidSchema, ValidationError } from '@svc/core';
import type { Account } from '@svc/organisations';
import * as z from 'zod';
import { PAYMENT_METHODS, type PaymentMethod } from '../providers/provider';
import { resolveAccount } from './context';
import { minorUnits, moneyInput, moneyOutput } from './request';
import { orderCandidates, refuseCoverWithoutFees, usableCandidates } from './routing';

/**
 * `POST /payments/fee-quotes` (contract section 13): what a donation form shows before the donor
 * chooses to cover the fees: the total a payment with `cover_fees` would charge now, the gift and
 * the cover. The candidate quoted is the one a new payment would try first (routing.ts: the
 * route's order, a weighted candidate drawn as a payment draws it), circuits and rate limits
 * aside; a payment that moves on to another candidate charges that candidate's own total.
 */
export const feeQuoteRequest = deferred(() =>
  z
    .object({
      account_uuid: uuidSchema,
      profile: z.string().min(1).max(100),
      /** Needed only where the account has two profiles of this name (one per method). */
      payment_method: z.enum(PAYMENT_METHODS).optional(),
      amount: moneyInput,
      test_mode: z.boolean().optional(),
    })
    .strict(),
);
export type FeeQuoteRequest = z.infer<typeof feeQuoteRequest>;

export const feeQuoteResponse = deferred(() =>
  z.object({
    amount: moneyOutput.describe('The total a payment with cover_fees charges'),
    intended_amount: moneyOutput.describe('The gift, as asked'),
    fee_cover_amount: moneyOutput.describe('amount − intended_amount'),
    fees: z
      .object({ percent: z.string(), fixed: z.string().describe('Minor units') })
      .optional()
      .describe('The fees covered: the candidate’s own, else the profile’s (absent: it has none, nothing to cover)'),
    provider: z.string().describe('The provider quoted: the one a new payment would try first'),
  }),
);

export async function quoteFees(principal: Promise<Principal>, request: FeeQuoteRequest) {
  const { account } = await resolveAccount(principal, request.account_uuid);
  const { profile, method } = profileNamed(account, request);
  const payment = {
    currency: request.amount.currency,
    minor: minorUnits(request.amount),
    testMode: request.test_mode ?? false,
  };
  // Fees are asked of the profile here (no cover_fees in a quote request): the 400 names it.
  const ordered = orderCandidates(profile, payment);
  if (ordered.length > 0) refuseCoverWithoutFees(profile, ordered, 'profile');
  const [first] = await usableCandidates(profile, method, false, { ...payment, charged: true, coverFees: true }, []);
  if (!first) throw new Error('usableCandidates answers at least one candidate or throws');
  const { fees } = first.charge;
  const money = (minor: number) => ({ value: String(minor), currency: payment.currency });
  return {
    amount: money(first.charge.total),
    intended_amount: money(first.charge.intended),
    fee_cover_amount: money(first.charge.cover),
    ...(fees ? { fees: { percent: fees.percent, fixed: fees.fixed } } : {}),
    provider: first.provider.name,
  };
}

/** The account's profile of that name (and method, where given): 400 on `profile` (or `payment_method`) otherwise. */
function profileNamed(account: Account, request: FeeQuoteRequest) {
  const named = account.payment_method_profiles.filter(
    (p) =>
      p.name === request.profile &&
      (request.payment_method === undefined || p.payment_method === request.payment_method),
  );
  const [profile] = named;
  if (!profile) {
    throw ValidationError.field(
      'profile',
      'the_value_you_selected_is_not_a_valid_choice',
      `The account has no profile named ${request.profile}${request.payment_method ? ` for ${request.payment_method}` : ''}`,
    );
  }
  if (named.length > 1) {
    throw ValidationError.field(
      'payment_method',
      'error.validation.not_valid',
      `The account has ${named.length} profiles named ${request.profile}: name the payment_method`,
    );
  }
  const method = PAYMENT_METHODS.find((known): known is PaymentMethod => known === profile.payment_method);
  if (!method) {
    throw ValidationError.field(
      'profile',
      'error.validation.not_valid',
      `The profile ${profile.name} takes no payments`,
    );
  }
  return { profile, method };
}
