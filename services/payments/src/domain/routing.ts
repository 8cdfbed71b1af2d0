import { setTimeout } from 'node:timers/promises';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  amountRefusal,
  BUSINESS_METRICS,
  definedFields,
  type FeeCover,
  feeCoverAt,
  isResumedRequest,
  logger,
  now,
  recordMetric,
  ValidationError,
} from '@svc/core';
import type { PaymentMethodProfile, ProfileFees, RouteCandidate } from '@svc/organisations';
import { db, defineEntity, TTL_ATTRIBUTE, tableName } from '@svc/table';
import * as z from 'zod';
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
import {
  type Admission,
  admit,
  recordAnswer,
  recordFailure,
  releaseProbe,
} from '../repository/provider-health-repository';
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
 *
 * A donor who covers the fees (`cover_fees`) is charged each candidate's own total: its `fees`,
 * or the profile's where it has none, so a payment that moves to another candidate charges that
 * candidate's total. `when` compares the intended amount (the gift), the same at every candidate;
 * whether a candidate can take its total in its minor units is asked of that total.
 */

/** The reason a candidate was passed over, kept on the payment (`providers_tried`). */
export interface TriedProvider {
  provider: string;
  reason: 'circuit_open' | 'rate_limited' | 'limit_reached' | 'connection_refused' | 'unusable';
  /**
   * The provider account the candidate would have charged on (stored, not in the API's answer):
   * a callback of that provider about this payment is believed to be about money it may have
   * taken only when it comes from this account (provider-binding.ts).
   */
  account?: string;
}

export interface RoutedAuthorisation {
  provider: PaymentProvider;
  context: ProviderContext;
  authorisation: Authorisation;
  tried: TriedProvider[];
  /** What the provider was asked to charge: the intended amount, with the donor's cover of its fees if asked. */
  charge: Charge;
}

/** The amount a candidate charges (`total`), the gift (`intended`), and the fees it covers by, if any. */
export interface Charge extends FeeCover {
  /** The fees the total covers (the candidate's, else the profile's); absent when none were covered. */
  fees?: ProfileFees;
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

/** The fees a candidate charges: its own, else the profile's. */
export function feesOf(profile: PaymentMethodProfile, candidate: RouteCandidate): ProfileFees | undefined {
  return candidate.fees ?? profile.fees;
}

/** What a candidate charges for `intended`: the total covering its fees when the donor asked for that. */
export function chargeAt(
  profile: PaymentMethodProfile,
  candidate: RouteCandidate,
  payment: { currency: string; minor: number; coverFees?: boolean | undefined },
): Charge {
  const fees = payment.coverFees ? feesOf(profile, candidate) : undefined;
  const cover = feeCoverAt(candidate.provider, payment.currency, payment.minor, fees);
  return { ...cover, ...definedFields({ fees }) };
}

/** chargeAt, or why the total cannot be counted (a percentage near 100 on a huge gift: past the safe integers). */
function chargeOrRefusal(
  profile: PaymentMethodProfile,
  candidate: RouteCandidate,
  payment: { currency: string; minor: number; coverFees?: boolean | undefined },
): Charge | { refusal: string } {
  try {
    return chargeAt(profile, candidate, payment);
  } catch (error) {
    if (error instanceof RangeError) return { refusal: error.message };
    throw error;
  }
}

/** The 400 (on `field`) where none of the candidates that would take the payment has fees to cover. */
export function refuseCoverWithoutFees(
  profile: PaymentMethodProfile,
  candidates: readonly RouteCandidate[],
  field = 'cover_fees',
): void {
  if (candidates.some((candidate) => feesOf(profile, candidate) !== undefined)) return;
  throw ValidationError.field(
    field,
    'error.validation.not_valid',
    `The profile ${profile.name} has no fees to cover (its fees, or its route candidates')`,
  );
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
  return context.profile.provider === 'adyen' ? context.profile.merchant_account : context.profile.stripe_account;
}

interface Usable {
  provider: PaymentProvider;
  context: ProviderContext;
  charge: Charge;
}

/**
 * The candidates that can take this payment at all (a known provider, the method, the amount in
 * its minor units, its keys), in order; none is a 400 on `profile` that says why each could not,
 * or on `amount.value` when the amount alone kept every one of them out.
 */
export async function usableCandidates(
  profile: PaymentMethodProfile,
  method: PaymentMethod,
  saving: boolean,
  payment: { currency: string; minor: number; testMode: boolean; charged: boolean; coverFees?: boolean | undefined },
  tried: TriedProvider[],
): Promise<Usable[]> {
  const ordered = orderCandidates(profile, payment);
  const refuse = (message: string) => ValidationError.field('profile', 'error.validation.not_valid', message);
  if (ordered.length === 0)
    throw refuse(`No provider of the profile ${profile.name} takes ${payment.currency} payments of this amount`);
  if (payment.coverFees) refuseCoverWithoutFees(profile, ordered);
  const usable: Usable[] = [];
  const why: string[] = [];
  let amountRefused = 0;
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
    // The same money at every candidate (issue 45): one that cannot take this amount exactly in
    // its own minor units (Stripe's KWD in tens of fils, Adyen's IDR in whole rupiah) is passed
    // over as unusable, never sent a rounded sum (@svc/core currencies.ts). A total covering the
    // fees is the candidate's own, already rounded up to what it can take.
    const charge = chargeOrRefusal(profile, candidate, payment);
    const refusedAmount =
      'refusal' in charge
        ? charge.refusal
        : payment.charged
          ? amountRefusal(provider.name, payment.currency, charge.total)
          : undefined;
    if (refusedAmount) amountRefused += 1;
    const unusable = refusedAmount ?? (await provider.unusableFor?.(context, method, saving));
    if (unusable) {
      why.push(unusable);
      if (profile.route)
        tried.push({
          provider: provider.name,
          reason: 'unusable',
          ...definedFields({ account: providerAccountOf(context) }),
        });
      continue;
    }
    if ('refusal' in charge) continue;
    usable.push({ provider, context, charge });
  }
  if (usable.length === 0 && amountRefused === ordered.length) {
    throw ValidationError.field('amount.value', 'error.validation.not_valid', why.join('; '));
  }
  if (usable.length === 0) throw refuse(why.join('; '));
  return usable;
}

/**
 * Authorises a new payment (or sets up a source) at the first candidate that takes it, by the
 * rules above. `request` builds the provider's request for a candidate (its approval page is the
 * provider's own). A candidate's circuit is asked when the payment reaches it, so a probe is
 * claimed only for a call about to be made (and released when that call is not made after all).
 * Candidates passed over for their circuit alone are the last resort: when every other was passed
 * over too, the first of them is tried anyway (a payment not tried at all is a donation lost).
 * When nothing could be called, the payment fails (`provider_unavailable`): nothing was charged.
 *
 * A re-run of a request that died (same Idempotency-Key, same payment uuid) must not reach a
 * provider the first run did not use while the first run's call may have charged: with several
 * candidates, the provider about to be called is recorded first (PAYMENT_ROUTE), and a re-run
 * asks the provider recorded again under the same idempotency key, and no other.
 */
export async function authoriseRouted(options: {
  /** The new payment's (or source's) uuid. */
  reference: string;
  /** Whose payment: its share of a provider limit it shares with others is bounded (provider-rate-repository). */
  organisation?: string;
  profile: PaymentMethodProfile;
  method: PaymentMethod;
  saving: boolean;
  amount: { currency: string; minor: number };
  /** The donor covers the fees: each candidate charges the total that covers its own (chargeAt). */
  coverFees?: boolean;
  /** A source set up without a payment: its amount picks the route's candidates but is charged nowhere. */
  sourceOnly?: boolean;
  testMode: boolean;
  request: (provider: PaymentProvider, context: ProviderContext, charge: Charge) => AuthoriseRequest;
}): Promise<RoutedAuthorisation> {
  const { profile, method, saving, amount, testMode, reference } = options;
  const tried: TriedProvider[] = [];
  const charged = options.sourceOnly !== true;
  const found = await usableCandidates(
    profile,
    method,
    saving,
    { ...amount, testMode, charged, coverFees: options.coverFees },
    tried,
  );
  const several = found.length > 1;
  // A re-run asks where the first run went whatever the route looks like now (issue 45): the
  // record exists only if the first run had several candidates, and is read on re-runs alone.
  const resumedAt = profile.route
    ? await calledBefore(reference, found, profile, { ...amount, testMode, coverFees: options.coverFees })
    : undefined;
  const usable = resumedAt ? [resumedAt] : found;
  const mode = testMode ? 'test' : 'live';
  const circuitOpen: Usable[] = [];
  let last: Usable | undefined;

  const attempt = async (
    candidate: Usable,
    admission: Admission,
    isLast: boolean,
  ): Promise<RoutedAuthorisation | 'moved'> => {
    const { provider, context, charge } = candidate;
    last = candidate;
    const release = () => (admission === 'probe' ? releaseProbe(provider.name, mode) : Promise.resolve());
    const slot = () =>
      takeProviderSlot(provider.name, providerAccountOf(context), testMode, now(), options.organisation);
    if (!(await slot())) {
      // The last candidate: the payment waits for the next second's share (within the request's
      // budget) once. (A frozen service clock, in tests, stays in its second.)
      if (isLast) await setTimeout(1000 - (Date.now() % 1000));
      if (!isLast || !(await slot())) {
        await release();
        tried.push(passedOver(provider.name, 'limit_reached', context));
        return 'moved';
      }
    }
    if (several) {
      const route = {
        payment_uuid: reference,
        provider: provider.name,
        account: providerAccountOf(context) ?? PLATFORM_ACCOUNT,
        expires_at: now() + 8 * 86_400,
      };
      await db().send(new PutCommand({ TableName: tableName(), Item: ROUTE_CALLED.item(route) }));
    }
    try {
      const authorisation = await authoriseAt(provider, options.request(provider, context, charge));
      const unknown =
        authorisation.outcome.status === 'pending' &&
        'reason' in authorisation.outcome &&
        authorisation.outcome.reason === 'provider_unavailable';
      if (unknown) await recordFailure(provider.name, mode, admission, 'no_answer');
      else await recordAnswer(provider.name, mode, admission);
      return { provider, context, authorisation, tried, charge };
    } catch (error) {
      if (!(error instanceof ProviderNotReachedError)) {
        await release();
        throw error;
      }
      // 429 is the provider's limit, not an outage: it does not count against its circuit.
      if (error.reason === 'connection_refused') await recordFailure(provider.name, mode, admission, error.reason);
      else await release();
      tried.push(
        passedOver(provider.name, error.reason === 'rate_limited' ? 'rate_limited' : 'connection_refused', context),
      );
      return 'moved';
    }
  };

  if (resumedAt) {
    // The first run called it and may have charged there: asked again whatever its circuit, and
    // never left for another; not reached now, the payment waits on it as an unknown outcome.
    const result = await attempt(resumedAt, 'go', true);
    if (result !== 'moved') return result;
    const { provider, context, charge } = resumedAt;
    const unknown: Authorisation = {
      outcome: { status: 'pending', reason: 'provider_unavailable' },
      maskedInformation: {},
    };
    return { provider, context, authorisation: unknown, tried, charge };
  }
  for (const [index, candidate] of usable.entries()) {
    const admission = await admit(candidate.provider.name, mode);
    if (admission === 'skip') {
      tried.push(passedOver(candidate.provider.name, 'circuit_open', candidate.context));
      circuitOpen.push(candidate);
      continue;
    }
    const result = await attempt(candidate, admission, index === usable.length - 1 && circuitOpen.length === 0);
    if (result !== 'moved') return result;
  }
  const lastResort = circuitOpen[0];
  if (lastResort) {
    const result = await attempt(lastResort, 'go', true);
    if (result !== 'moved') return result;
  }
  const nothing = last ?? lastResort ?? usable[0];
  if (!nothing) throw new Error('No usable candidate');
  return notReachedAnywhere(nothing, tried);
}

/** The account recorded for a candidate that names none (the platform's own Stripe account, the simulated provider). */
const PLATFORM_ACCOUNT = '(platform)';

const routeSchema = z.object({
  payment_uuid: z.string(),
  provider: z.string(),
  /** The provider account called (a Stripe connected account, an Adyen merchant account). */
  account: z.string().optional(),
  expires_at: z.number(),
});

/**
 * The provider a payment with several candidates was last sent to, written before the call (TTL
 * 8 days: past every idempotency window of ours and the providers'), so a re-run of its request
 * asks that provider again instead of another.
 */
export const ROUTE_CALLED = defineEntity<z.infer<typeof routeSchema>, string>({
  name: 'payment_route',
  summary:
    'The provider a routed payment was last sent to, written before the call, so a re-run of its request asks the same provider (TTL 8 days).',
  prefix: 'PAYMENT_ROUTE',
  idShown: '<payment uuid>',
  sort: 'PAYMENT_ROUTE',
  id: (route) => route.payment_uuid,
  idParts: (uuid) => [uuid],
  byKey: 'where a re-run of a routed payment goes',
  storage: {
    toAttributes: ({ provider, account, expires_at }) => ({
      provider,
      ...definedFields({ account }),
      [TTL_ATTRIBUTE]: expires_at,
    }),
    fromAttributes: (item) => ({
      payment_uuid: String(item.pk).split('#')[1],
      provider: item.provider,
      ...definedFields({ account: item.account }),
      expires_at: item[TTL_ATTRIBUTE],
    }),
  },
  parse: (value) => routeSchema.parse(value),
});

/**
 * On a re-run, the provider and account the first run called last, if it called one: the
 * candidate that is exactly that provider and account, else (the route was edited since, or it
 * has two candidates of one provider) that provider and account rebuilt from the record. Never
 * another: the first run's call may have charged there. A record of before accounts were kept
 * matches by provider alone.
 */
async function calledBefore(
  reference: string,
  candidates: Usable[],
  profile: PaymentMethodProfile,
  payment: { currency: string; minor: number; testMode: boolean; coverFees?: boolean | undefined },
): Promise<Usable | undefined> {
  if (!isResumedRequest()) return undefined;
  const called = await ROUTE_CALLED.find(reference);
  if (!called) return undefined;
  const same = candidates.find(
    (candidate) =>
      candidate.provider.name === called.provider &&
      (called.account === undefined || (providerAccountOf(candidate.context) ?? PLATFORM_ACCOUNT) === called.account),
  );
  if (same) return same;
  let provider: PaymentProvider;
  try {
    provider = providerNamed(called.provider);
  } catch {
    return undefined;
  }
  const recorded = called.account === PLATFORM_ACCOUNT ? undefined : called.account;
  const account =
    called.provider === 'adyen'
      ? definedFields({ merchant_account: recorded })
      : definedFields({ stripe_account: recorded });
  // The candidate called is gone from the route: the profile's fees, as a candidate without its own.
  const candidate = { provider: called.provider, ...account };
  return {
    provider,
    context: candidateContext(profile, candidate, payment.testMode),
    charge: chargeAt(profile, candidate, payment),
  };
}

/** The provider's authorisation, or the fault the local runtime injects in its place. */
async function authoriseAt(provider: PaymentProvider, request: AuthoriseRequest): Promise<Authorisation> {
  const fault = providerFault(provider.name);
  if (fault === 'refuse') throw new ProviderNotReachedError(provider.name, 'connection_refused');
  if (fault) return { outcome: { status: 'pending', reason: 'provider_unavailable' }, maskedInformation: {} };
  return provider.authorise(request);
}

function passedOver(provider: string, reason: TriedProvider['reason'], context: ProviderContext): TriedProvider {
  recordMetric(BUSINESS_METRICS.providerFailovers, 1, { provider, reason });
  logger.info('A payment passed over a provider', { provider, reason });
  return { provider, reason, ...definedFields({ account: providerAccountOf(context) }) };
}

function notReachedAnywhere({ provider, context, charge }: Usable, tried: TriedProvider[]): RoutedAuthorisation {
  return {
    provider,
    context,
    authorisation: { outcome: { status: 'failed', reason: 'provider_unavailable' }, maskedInformation: {} },
    tried,
    charge,
  };
}
