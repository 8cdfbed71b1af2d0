import { setTimeout } from 'node:timers/promises';
import { BUSINESS_METRICS, definedFields, logger, recordMetric, ValidationError } from '@svc/core';
import type { PaymentMethodProfile, RouteCandidate } from '@svc/organisations';
import { providerFault } from '../providers/faults';
import {
  type Authorisation,
  type AuthoriseRequest,
  type PaymentMethod,
  type PaymentProvider,
  type ProviderContext,
  ProviderNotReachedError,
} from '../providers/provider';
import { providerNamed } from '../providers/registry';
import { type Admission, admit, recordAnswer, recordFailure } from '../repository/provider-health-repository';
import { takeProviderSlot } from '../repository/provider-rate-repository';

/**
 * Which provider takes a new payment, and fail-over while one is down.
 *
 * A profile names one provider, or a `route` of candidates. The candidates whose `when` matches
 * the payment are tried in order; weighted ones first share new payments by weight (the one
 * drawn goes first, the others follow in their order). Each candidate is skipped while its
 * circuit is open (provider-health-repository), or this second's share of its rate limit is
 * used up (provider-rate-repository). A call is moved to the next candidate only when it
 * provably did nothing there: the connection was refused or the name did not resolve, or the
 * provider answered 429. Everything else stays where it went: a decline is the donor's answer,
 * and an unknown outcome (a timeout, a cut connection, a 5xx) is resolved at that provider and
 * never sent elsewhere, so a donor is never charged twice. Refunds, cancels and charges of saved
 * instruments go to the provider that holds the payment or the instrument: tokens are not
 * portable between providers.
 */

/** The reason a candidate was passed over, kept on the payment (`providers_tried`). */
export interface TriedProvider {
  provider: string;
  reason: 'circuit_open' | 'rate_limited' | 'limit_reached' | 'connection_refused' | 'unusable';
}

export interface RoutedAuthorisation {
  provider: PaymentProvider;
  context: ProviderContext;
  authorisation: Authorisation;
  tried: TriedProvider[];
}

/** The profile's candidates, one per provider setting, as a single-provider profile is one. */
function candidatesOf(profile: PaymentMethodProfile): RouteCandidate[] {
  if (profile.route) return profile.route;
  return [
    {
      provider: profile.provider ?? '',
      ...definedFields({
        stripe_account: profile.stripe_account,
        merchant_account: profile.merchant_account,
        raw_card_data: profile.raw_card_data,
      }),
    },
  ];
}

function matches(candidate: RouteCandidate, payment: { currency: string; minor: number; testMode: boolean }): boolean {
  const when = candidate.when;
  if (!when) return true;
  if (when.currency && !when.currency.includes(payment.currency)) return false;
  if (when.min_amount !== undefined && payment.minor < Number(when.min_amount)) return false;
  if (when.max_amount !== undefined && payment.minor > Number(when.max_amount)) return false;
  if (when.test_mode !== undefined && when.test_mode !== payment.testMode) return false;
  return true;
}

/**
 * The matching candidates in the order they are tried: one weighted candidate drawn by weight
 * first (`draw` in [0, 1)), then every other in the profile's order.
 */
export function orderCandidates(
  profile: PaymentMethodProfile,
  payment: { currency: string; minor: number; testMode: boolean },
  draw: number = Math.random(),
): RouteCandidate[] {
  const matching = candidatesOf(profile).filter((candidate) => matches(candidate, payment));
  const weighted = matching.filter((candidate) => (candidate.weight ?? 0) > 0);
  const total = weighted.reduce((sum, candidate) => sum + (candidate.weight ?? 0), 0);
  if (total === 0) return matching;
  let point = draw * total;
  const first = weighted.find((candidate) => {
    point -= candidate.weight ?? 0;
    return point < 0;
  });
  return first ? [first, ...matching.filter((candidate) => candidate !== first)] : matching;
}

/** The provider context of one candidate: the profile's settings with the candidate's own. */
export function candidateContext(
  profile: PaymentMethodProfile,
  candidate: RouteCandidate,
  testMode: boolean,
): ProviderContext {
  return {
    profile: {
      name: profile.name,
      payment_method: profile.payment_method,
      provider: candidate.provider,
      ...definedFields({
        stripe_account: candidate.stripe_account ?? (profile.route ? undefined : profile.stripe_account),
        merchant_account: candidate.merchant_account ?? (profile.route ? undefined : profile.merchant_account),
        raw_card_data: candidate.raw_card_data ?? profile.raw_card_data,
        platform_fee_basis_points: profile.platform_fee_basis_points,
        platform_fee_fixed: profile.platform_fee_fixed,
        statement_descriptor_suffix: profile.statement_descriptor_suffix,
      }),
    },
    testMode,
  };
}

/** The account a provider charges on (a Stripe connected account, an Adyen merchant account). */
export function providerAccountOf(context: ProviderContext): string | undefined {
  return context.profile.stripe_account ?? context.profile.merchant_account;
}

interface Usable {
  provider: PaymentProvider;
  context: ProviderContext;
}

/**
 * The candidates that can take this payment at all (a known provider, the method, its keys), in
 * order; none is a 400 on `profile` that says why each could not.
 */
async function usableCandidates(
  profile: PaymentMethodProfile,
  method: PaymentMethod,
  saving: boolean,
  payment: { currency: string; minor: number; testMode: boolean },
  tried: TriedProvider[],
): Promise<Usable[]> {
  const ordered = orderCandidates(profile, payment);
  const refuse = (message: string) => ValidationError.field('profile', 'error.validation.not_valid', message);
  if (ordered.length === 0)
    throw refuse(`No provider of the profile ${profile.name} takes ${payment.currency} payments of this amount`);
  const usable: Usable[] = [];
  const why: string[] = [];
  for (const candidate of ordered) {
    const context = candidateContext(profile, candidate, payment.testMode);
    let provider: PaymentProvider;
    try {
      provider = providerNamed(candidate.provider);
    } catch {
      why.push(`The profile names ${candidate.provider}, which is not a payment provider here`);
      continue;
    }
    if (!provider.methods.includes(method)) {
      why.push(`The ${provider.name} provider does not take ${method} payments`);
      continue;
    }
    const unusable = await provider.unusableFor?.(context, method, saving);
    if (unusable) {
      why.push(unusable);
      if (profile.route) tried.push({ provider: provider.name, reason: 'unusable' });
      continue;
    }
    usable.push({ provider, context });
  }
  if (usable.length === 0) throw refuse(why.join('; '));
  return usable;
}

/**
 * Authorises a new payment (or sets up a source) at the first candidate that takes it, by the
 * rules above. `request` builds the provider's request for a candidate (its approval page is the
 * provider's own). When every candidate was passed over without being reached, the payment
 * fails (`provider_unavailable`): nothing was charged anywhere.
 */
export async function authoriseRouted(options: {
  profile: PaymentMethodProfile;
  method: PaymentMethod;
  saving: boolean;
  amount: { currency: string; minor: number };
  testMode: boolean;
  request: (provider: PaymentProvider, context: ProviderContext) => AuthoriseRequest;
}): Promise<RoutedAuthorisation> {
  const { profile, method, saving, amount, testMode } = options;
  const tried: TriedProvider[] = [];
  const usable = await usableCandidates(profile, method, saving, { ...amount, testMode }, tried);
  const mode = testMode ? 'test' : 'live';
  const admissions = await Promise.all(usable.map(({ provider }) => admit(provider.name, mode)));
  // Every circuit open: the first is tried still (a payment not tried at all is a donation lost).
  const allOpen = admissions.every((admission) => admission === 'skip');
  for (const [index, { provider, context }] of usable.entries()) {
    const admission: Admission = allOpen && index === 0 ? 'go' : (admissions[index] ?? 'go');
    const last = index === usable.length - 1;
    if (admission === 'skip') {
      tried.push(passedOver(provider.name, 'circuit_open'));
      continue;
    }
    const slot = () => takeProviderSlot(provider.name, providerAccountOf(context), testMode);
    if (!(await slot())) {
      if (!last) {
        tried.push(passedOver(provider.name, 'limit_reached'));
        continue;
      }
      // The last candidate: the payment waits for the next second's share (within the request's
      // budget), and fails without a call if there is none then either.
      await setTimeout(1000 - (Date.now() % 1000));
      // (A frozen service clock, in tests, stays in its second: the payment then fails as below.)
      if (!(await slot())) {
        tried.push(passedOver(provider.name, 'limit_reached'));
        return notReachedAnywhere(provider, context, tried);
      }
    }
    try {
      const authorisation = await authoriseAt(provider, options.request(provider, context));
      const unknown =
        authorisation.outcome.status === 'pending' &&
        'reason' in authorisation.outcome &&
        authorisation.outcome.reason === 'provider_unavailable';
      if (unknown) await recordFailure(provider.name, mode, admission, 'no_answer');
      else await recordAnswer(provider.name, mode, admission);
      return { provider, context, authorisation, tried };
    } catch (error) {
      if (!(error instanceof ProviderNotReachedError)) throw error;
      // 429 is the provider's limit, not an outage: it does not count against its circuit.
      if (error.reason === 'connection_refused') await recordFailure(provider.name, mode, admission, error.reason);
      tried.push(passedOver(provider.name, error.reason === 'rate_limited' ? 'rate_limited' : 'connection_refused'));
      if (last) return notReachedAnywhere(provider, context, tried);
    }
  }
  // Unreachable: the last candidate returns above.
  throw new Error('No candidate was tried');
}

/** The provider's authorisation, or the fault the local runtime injects in its place. */
async function authoriseAt(provider: PaymentProvider, request: AuthoriseRequest): Promise<Authorisation> {
  const fault = providerFault(provider.name);
  if (fault === 'refuse') throw new ProviderNotReachedError(provider.name, 'connection_refused');
  if (fault) return { outcome: { status: 'pending', reason: 'provider_unavailable' }, maskedInformation: {} };
  return provider.authorise(request);
}

function passedOver(provider: string, reason: TriedProvider['reason']): TriedProvider {
  recordMetric(BUSINESS_METRICS.providerFailovers, 1, { provider, reason });
  logger.warn('A payment passed over a provider', { provider, reason });
  return { provider, reason };
}

function notReachedAnywhere(
  provider: PaymentProvider,
  context: ProviderContext,
  tried: TriedProvider[],
): RoutedAuthorisation {
  return {
    provider,
    context,
    authorisation: { outcome: { status: 'failed', reason: 'provider_unavailable' }, maskedInformation: {} },
    tried,
  };
}
