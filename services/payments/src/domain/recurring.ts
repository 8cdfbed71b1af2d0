import { amountRefusal, definedFields, type FeeCover, feeCoverAt, logger, money, now } from '@svc/core';
import { findAccount, type PaymentMethodProfile, type ProfileFees } from '@svc/organisations';
import type { Outcome, ProviderContext } from '../providers/provider';
import { providerNamed } from '../providers/registry';
import type { PaymentRecord } from '../repository/payment-repository';
import type { PaymentSourceRecord } from '../repository/payment-source-repository';
import { storedContext } from './context';
import { paymentStatusEvents } from './events';
import { candidateContext, providerAccountOf } from './routing';

/**
 * Payments that recurring billing makes from a saved payment source. The subscriptions domain
 * writes them in its own transactions (with the invoice and the charge attempt they belong to),
 * so the shapes, events and provider calls live here, beside the other payments.
 */
export interface RecurringCharge {
  /** The payment's uuid, derived from the charge attempt: a repeat writes the same key. */
  uuid: string;
  source: PaymentSourceRecord;
  /** What is charged: with a subscription that covers the fees, the total (recurringFeeCover). */
  amountMinor: number;
  /** The gift, where the subscription covers the fees (absent otherwise: amountMinor is the gift). */
  intendedMinor?: number;
  /** The fees the total covers. */
  coveredFees?: ProfileFees;
  currency: string;
  subscriptionUuid: string;
  invoiceUuid: string;
  chargeAttemptUuid: string;
  supporterUuid?: string;
  customParameters: Record<string, unknown>;
}

/** A saved instrument's charge: the outcome, and the provider's id of the payment when it has one. */
export type ChargeOutcome = Outcome & { providerReference?: string };

/** The payment of a charge attempt while the provider is asked: `pending`, with no event yet. */
export function pendingRecurringPayment(charge: RecurringCharge): PaymentRecord {
  const created = now();
  const { source } = charge;
  return {
    uuid: charge.uuid,
    organisation_uuid: source.organisation_uuid,
    account_uuid: source.account_uuid,
    created,
    updated: created,
    status: 'pending',
    test_mode: source.test_mode,
    amount_minor: charge.amountMinor,
    ...definedFields({ intended_minor: charge.intendedMinor, covered_fees: charge.coveredFees }),
    refunded_minor: 0,
    currency: charge.currency,
    payment_method: source.payment_method,
    profile: source.profile,
    provider: source.provider,
    ...definedFields({ provider_account: source.provider_account }),
    payment_information: source.payment_information,
    ...definedFields({ supporter_uuid: charge.supporterUuid }),
    charged_payment_source_uuid: source.uuid,
    subscription_uuid: charge.subscriptionUuid,
    invoice_uuid: charge.invoiceUuid,
    charge_attempt_uuid: charge.chargeAttemptUuid,
    refunds: [],
    custom_parameters: charge.customParameters,
    svc_parameters: {},
    version: 1,
    event_sequence: 0,
    events: [],
  };
}

/** The payment once the provider answered, carrying its status event. */
export function settledRecurringPayment(payment: PaymentRecord, outcome: ChargeOutcome): PaymentRecord {
  if (isProcessing(outcome)) return processingRecurringPayment(payment, outcome);
  const status = outcome.status === 'pending' ? 'failed' : outcome.status;
  const settled: PaymentRecord = {
    ...payment,
    status,
    // The provider's id of the charge, for its refunds.
    ...(outcome.providerReference ? { provider_reference: outcome.providerReference } : {}),
    ...(outcome.status === 'failed' ? { status_reason: outcome.reason } : {}),
    ...(outcome.status === 'pending' ? { status_reason: 'approval_required' } : {}),
    event_sequence: payment.event_sequence + 1,
    updated: now(),
    version: payment.version + 1,
  };
  settled.events = paymentStatusEvents(settled);
  return settled;
}

/** Nobody is there to follow a redirect: a saved instrument's charge that needs the donor failed. */
export function offSession(outcome: ChargeOutcome): ChargeOutcome {
  if (!('action' in outcome)) return outcome;
  return {
    status: 'failed',
    reason: 'authentication_required',
    ...(outcome.providerReference ? { providerReference: outcome.providerReference } : {}),
  };
}

/** Whether the provider is still working on the charge (a SEPA debit, for days). */
export function isProcessing(outcome: ChargeOutcome): boolean {
  return outcome.status === 'pending' && 'reason' in outcome && outcome.reason === 'processing';
}

/** The payment while the provider works on it: still pending, with the provider's id; no event. */
function processingRecurringPayment(payment: PaymentRecord, outcome: ChargeOutcome): PaymentRecord {
  return {
    ...payment,
    ...(outcome.providerReference ? { provider_reference: outcome.providerReference } : {}),
    status_reason: 'processing',
    events: [],
    updated: now(),
    version: payment.version + 1,
  };
}

/**
 * Charges a saved source through its provider, with the charge attempt's uuid as the provider's
 * idempotency reference (a retried charge of one attempt is one charge at a real PSP). A source
 * that cannot be charged any more fails the attempt instead of throwing. A saved instrument is
 * charged without the donor present, so an answer that needs the donor's approval is a failure.
 *
 * A charge the provider already took (its payment carries the provider's id: a SEPA debit it is
 * still processing) is not charged again: the provider is asked where it stands. A retry of an
 * attempt whose first charge got no answer tells the provider when it was first tried, so the
 * provider looks for that charge before it charges (and never re-uses an expired key).
 */
export async function chargeSavedSource(
  source: PaymentSourceRecord | undefined,
  amountMinor: number,
  currency: string,
  reference: string,
  payment?: PaymentRecord,
  retry = false,
): Promise<ChargeOutcome> {
  const provider = payment ? providerNamed(payment.provider) : undefined;
  if (payment?.provider_reference && provider?.outcomeOf) {
    const found = await provider.outcomeOf(reference, {
      context: storedContext(payment),
      providerReference: payment.provider_reference,
      paymentUuid: payment.uuid,
    });
    return offSession({ ...found, providerReference: found.providerReference ?? payment.provider_reference });
  }
  if (source?.status !== 'active' || !source.instrument_token) {
    // A retry whose first charge's answer was lost: that charge may land though the source is
    // gone since (a mandate revoked); it is looked for before the attempt is failed.
    if (retry && payment && provider?.outcomeOf) {
      const found = await provider.outcomeOf(reference, {
        context: storedContext(payment),
        paymentUuid: payment.uuid,
        created: payment.created,
      });
      if (!found.absent) return offSession(found);
    }
    return { status: 'failed', reason: 'payment_source_unavailable' };
  }
  // Never a rounded sum: an amount the source's provider cannot take exactly in its minor units
  // (a subscription refuses one, so this is one older than that check) is charged nowhere.
  const unrepresentable = amountRefusal(source.provider, currency, amountMinor);
  if (unrepresentable) {
    logger.error('A recurring charge the provider cannot take exactly was not made', {
      source: source.uuid,
      reason: unrepresentable,
    });
    return { status: 'failed', reason: 'amount_not_representable' };
  }
  return providerNamed(source.provider).chargeInstrument(
    source.instrument_token,
    money(amountMinor, currency),
    reference,
    await chargeContext(source),
    retry && payment ? payment.created : undefined,
  );
}

/** The profile a saved source was made on, as the account has it now. */
async function profileOf(source: PaymentSourceRecord): Promise<PaymentMethodProfile | undefined> {
  const account = await findAccount(source.account_uuid);
  return account?.payment_method_profiles.find(
    (p) => p.name === source.profile && p.payment_method === source.payment_method,
  );
}

/**
 * The fees a saved source's charges carry, as its profile has them now: those of the route's
 * candidate that holds the instrument (its provider and account; instruments are not portable),
 * else the profile's. A fee changed on the profile applies to the next charges.
 */
export async function feesOfSource(source: PaymentSourceRecord): Promise<ProfileFees | undefined> {
  const profile = await profileOf(source);
  if (!profile) return undefined;
  const holder = profile.route?.find(
    (candidate) =>
      candidate.provider === source.provider &&
      providerAccountOf(candidateContext(profile, candidate, source.test_mode)) === source.provider_account,
  );
  return holder?.fees ?? profile.fees;
}

/**
 * What a recurring charge of `intended` from a saved source costs a donor who covers the fees: the
 * total covering the fees of the source's profile (feesOfSource), rounded up to what its provider
 * can charge (@svc/core fee-cover.ts). Without fees there, nothing is covered: the total is the gift.
 */
export async function recurringFeeCover(
  source: PaymentSourceRecord,
  currency: string,
  intended: number,
): Promise<FeeCover & { fees?: ProfileFees }> {
  const fees = await feesOfSource(source);
  return { ...feeCoverAt(source.provider, currency, intended, fees), ...definedFields({ fees }) };
}

/**
 * The provider settings a saved source is charged under: where it lives (stored with it), and
 * the profile's current platform fee and statement descriptor suffix (a fee changed on the
 * profile applies to the next charges).
 */
async function chargeContext(source: PaymentSourceRecord): Promise<ProviderContext> {
  const context = storedContext(source);
  const profile = await profileOf(source);
  if (!profile) return context;
  return {
    ...context,
    profile: {
      ...context.profile,
      ...definedFields({
        platform_fee_basis_points: profile.platform_fee_basis_points,
        platform_fee_fixed: profile.platform_fee_fixed,
        statement_descriptor_suffix: profile.statement_descriptor_suffix,
      }),
    },
  };
}
