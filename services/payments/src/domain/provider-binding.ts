import { AMOUNT_PROVIDERS, amountRefusal, BUSINESS_METRICS, logger, providerAmount, recordMetric } from '@svc/core';

/**
 * The one check every provider callback passes before it changes anything (issue 44): a Stripe
 * event or an Adyen notification speaks for one provider, one provider account and one mode, and
 * names the provider's own object; it may change a payment or source of ours only when all of
 * these are what we stored when we made it. A signature proves only that the provider sent the
 * callback, not that the object it names is ours: any charity with its own connected account or
 * merchant account can make the provider send signed callbacks whose free-text reference
 * (Stripe's `metadata.svc_reference`, Adyen's `merchantReference`) names another charity's
 * payment. A future provider calls `boundToCallback` with what its callback claims and gets the
 * same protection.
 *
 * Provider, account and mode are always compared. The others are compared where the callback
 * carries them (each provider's code says which of its callbacks do) and, for the reference,
 * where we stored one: a payment whose creation answer was lost has none yet, and then the
 * provider, account, mode (and, where the callback carries them, amount and currency) must still
 * match before the callback may fill it in.
 */
export interface CallbackClaim {
  provider: string;
  /** The provider account the callback comes from; undefined for the platform's own account. */
  account: string | undefined;
  /** Whether the callback is of live money (Stripe `livemode`, Adyen's batch `live`). */
  live: boolean;
  /** The provider's id of the payment or source the callback is about. */
  reference?: string | undefined;
  /**
   * The amount the callback is about, when it is the whole payment's: as the callback carries it,
   * in the provider's own minor units (500 ISK is 50000 at Adyen), compared with what we stored
   * in that provider's units (@svc/core currencies.ts).
   */
  amountMinor?: number | undefined;
  /**
   * The largest amount a modification may be about (a refund's or chargeback's amount may be less
   * than the payment's, never more), in the provider's minor units as well.
   */
  atMostMinor?: number | undefined;
  currency?: string | undefined;
}

/** What we stored of a payment or source when we made it at the provider. */
export interface BoundRecord {
  uuid: string;
  provider: string;
  provider_account?: string | undefined;
  test_mode: boolean;
  provider_reference?: string | undefined;
  amount_minor?: number | undefined;
  currency?: string | undefined;
}

export const BINDING_FIELDS = ['provider', 'account', 'mode', 'reference', 'amount', 'currency'] as const;
export type BindingField = (typeof BINDING_FIELDS)[number];

/** Logged (ProviderAnomalies, kind callback_unbound, alarmed) when a callback names what its sender does not hold. */
export const CALLBACK_UNBOUND = 'A provider callback names a payment or source its sender does not hold: ignored';

/** The fields in which the callback's claim differs from what we stored (none: it is bound). */
export function bindingMismatches(record: BoundRecord, claim: CallbackClaim): BindingField[] {
  const mismatched: BindingField[] = [];
  if (record.provider !== claim.provider) mismatched.push('provider');
  // An empty account is the platform's own, as an absent one is.
  if ((record.provider_account || undefined) !== (claim.account || undefined)) mismatched.push('account');
  if (record.test_mode === claim.live) mismatched.push('mode');
  if (
    record.provider_reference !== undefined &&
    claim.reference !== undefined &&
    claim.reference !== record.provider_reference
  ) {
    mismatched.push('reference');
  }
  const recorded = recordedAtProvider(record, claim.provider);
  if (claim.amountMinor !== undefined && recorded !== claim.amountMinor) mismatched.push('amount');
  if (claim.atMostMinor !== undefined && (recorded === undefined || claim.atMostMinor > recorded)) {
    mismatched.push('amount');
  }
  // Stripe writes currencies in lower case, we and Adyen in upper case (ISO 4217 either way).
  if (claim.currency !== undefined && record.currency?.toUpperCase() !== claim.currency.toUpperCase()) {
    mismatched.push('currency');
  }
  return mismatched;
}

/**
 * What we stored as the amount, in the minor units of the provider the callback speaks for: a
 * provider's callback says what it charged in its own units. A provider without amount rules, or
 * a record whose amount it could not have charged exactly (none made through our adapters), is
 * compared as stored.
 */
function recordedAtProvider(record: BoundRecord, provider: string): number | undefined {
  const { amount_minor: amount, currency } = record;
  if (amount === undefined || currency === undefined) return amount;
  if (!(AMOUNT_PROVIDERS as readonly string[]).includes(provider)) return amount;
  const code = currency.toUpperCase();
  return amountRefusal(provider, code, amount) === undefined ? providerAmount(provider, code, amount) : amount;
}

/**
 * Whether the callback may change `record`. When it may not, nothing is to change: the mismatch
 * is logged with what differed (never the values' secrets: ids and modes only), counted, and the
 * caller acknowledges the callback all the same, so the provider does not retry it for days.
 */
export function boundToCallback(record: BoundRecord, claim: CallbackClaim, callback: string): boolean {
  const mismatched = bindingMismatches(record, claim);
  if (mismatched.length === 0) return true;
  recordMetric(BUSINESS_METRICS.providerAnomalies, 1, { kind: 'callback_unbound' });
  logger.error(CALLBACK_UNBOUND, {
    callback,
    object: record.uuid,
    mismatched,
    stored: {
      provider: record.provider,
      account: record.provider_account ?? null,
      live: !record.test_mode,
      reference: record.provider_reference ?? null,
    },
    claimed: {
      provider: claim.provider,
      account: claim.account ?? null,
      live: claim.live,
      reference: claim.reference ?? null,
    },
  });
  return false;
}
