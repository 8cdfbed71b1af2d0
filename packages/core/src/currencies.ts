/**
 * Amounts in each provider's minor units (issue 45). Our API, our records and our events count
 * money in the ISO 4217 minor unit of its currency (`{"value": "1000", "currency": "CHF"}` is
 * 10.00 CHF, `"500"` ISK is 500 krónur). A provider counts in its own minor unit, which is ISO's
 * except where the provider documents otherwise: the same donation is 500 at one PSP and 50000 at
 * another. Every amount crosses to a provider through `providerAmount` and back through
 * `fromProviderAmount`; an amount a provider cannot take exactly is refused before any call,
 * never rounded into another sum. One table: the ISO exponents, then each provider's documented
 * exceptions, each with the passage it rests on.
 */

/**
 * ISO 4217 List One, the active codes with minor units. Codes without them (gold, SDR, test and
 * "no currency" codes such as XAU, XDR, XTS, XXX) and withdrawn codes are unknown here, so no
 * payment is taken in them.
 */
const ISO_EXPONENT_0 = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF';
const ISO_EXPONENT_3 = 'BHD IQD JOD KWD LYD OMR TND';
const ISO_EXPONENT_4 = 'CLF UYW';
const ISO_EXPONENT_2 = [
  'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD',
  'CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS',
  'GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL',
  'MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK',
  'PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS',
  'TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG',
].join(' ');

const codes = (list: string) => list.split(' ');

const ISO_EXPONENTS: ReadonlyMap<string, number> = new Map(
  (
    [
      [ISO_EXPONENT_0, 0],
      [ISO_EXPONENT_2, 2],
      [ISO_EXPONENT_3, 3],
      [ISO_EXPONENT_4, 4],
    ] as const
  ).flatMap(([list, exponent]) => codes(list).map((code) => [code, exponent] as const)),
);

/** Every ISO 4217 code we take, sorted. */
export const ISO_CURRENCIES: readonly string[] = [...ISO_EXPONENTS.keys()].sort();

/** The ISO 4217 exponent of a code (2 for CHF, 0 for JPY, 3 for KWD), or undefined for a code we do not take. */
export function isoExponent(currency: string): number | undefined {
  return ISO_EXPONENTS.get(currency);
}

/**
 * How a provider writes one currency: its number of decimals, and `step`, the provider minor
 * units every amount must be a multiple of (1: any whole number).
 */
interface ProviderRule {
  exponent: number;
  step: number;
  /** The largest amount the provider takes, in its minor units (none documented: no bound but ours). */
  max?: number;
}

export const AMOUNT_PROVIDERS = ['simulated', 'stripe', 'adyen'] as const;
export type AmountProvider = (typeof AMOUNT_PROVIDERS)[number];

/**
 * Stripe (https://docs.stripe.com/currencies, read from a stored copy of the page):
 *
 * - Every other currency is two-decimal: "All API requests expect amounts to be provided in a
 *   currency's smallest unit. For example, to charge 10 USD, provide an amount value of 1000"
 *   (the current page's Chinese edition: "Unless otherwise noted, currencies are two-decimal";
 *   the English sentence was not seen here). Every presentment currency Stripe lists that is not
 *   named below has ISO exponent 2 as well.
 * - #zero-decimal: "For zero-decimal currencies, still provide amounts as an integer but without
 *   multiplying by 100. For example, to charge ¥500, provide an amount value of 500." The list:
 *   BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF. All are ISO exponent 0 but
 *   MGA (ISO 2): an MGA amount must be whole ariary. UGX is overridden by the special case below.
 * - #three-decimal: "these API calls require the least-significant (last) digit to be 0. Your
 *   integration must round amounts to the nearest ten. For example, 5.124 KWD must be rounded to
 *   5120 or 5130." BHD JOD KWD OMR TND. We never round a donation: an amount with a last digit is
 *   refused (its donor chooses the amount, not us).
 * - #special-cases, ISK: "Effective 0:00 UTC on 2023-04-14, ISK becomes a zero-decimal currency.
 *   To maintain backwards compatibility, you must pass in amounts with two decimals. For example,
 *   to charge 5 ISK, provide an amount value of 500. The amount value must be evenly divisible by
 *   100". Stripe answers anything else `400 invalid_charge_amount_no_decimal_compatible`, refunds
 *   too (https://support.stripe.com/questions/deprecation-of-fractional-isk-charges-and-refunds).
 * - #special-cases, UGX: "UGX was a decimal-based currency, but is now effectively a zero-decimal
 *   currency. To maintain backwards compatibility, you must pass in amounts with two decimals. For
 *   example, to charge 5 UGX, provide an amount value of 500. The amount value must be evenly
 *   divisible by 100".
 * - #special-cases, HUF and TWD: "Stripe treats HUF as a zero-decimal currency for payouts, even
 *   though you can charge two-decimal amounts" (the same for TWD). Charges and refunds are ours
 *   to make, payouts are not: two-decimal, no exception.
 */
const STRIPE_ZERO_DECIMAL = 'BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF VND VUV XAF XOF XPF';
const STRIPE_THREE_DECIMAL = 'BHD JOD KWD OMR TND';
const STRIPE_TWO_DECIMALS_WHOLE_UNITS = 'ISK UGX';

/**
 * Adyen (https://docs.adyen.com/development-resources/currency-codes/): "For most APIs the value
 * must be specified in minor units, given the number of decimals of the currency." Its table
 * gives the decimals, and its note says where they are not ISO's: "For CLP, CVE, IDR, and ISK
 * the standard has a different number of decimals than shown in our currency codes table above.
 * When submitting amounts in minor units, the decimals in the table on this page are leading."
 * The rows: "CLP | Chilean Peso | 2 (differs from standard)", "CVE | Cape Verdi Escudo | 0
 * (differs from standard)", "IDR | Indonesian Rupiah | 0 (differs from standard)", "ISK | Iceland
 * Krona | 2 (differs from standard)". Verified here: the CLP and CVE rows on a stored copy of
 * Adyen's page (cut off before the rest); the note and the IDR and ISK rows on a copy of the page
 * another PSP publishes (docs.one-cp.com/currency-codes), and Adyen Web's own table
 * (packages/lib/src/utils/constants/currency-decimals.ts: IDR and CVE zero-decimal, CLP and ISK
 * not, so two). An IDR or CVE amount must be whole units. Whether Adyen takes fractional CLP or
 * ISK is not documented here; ours never are (ISO has no decimals for them).
 */
const ADYEN_DECIMALS: Readonly<Record<string, number>> = { CLP: 2, CVE: 0, IDR: 0, ISK: 2 };

/**
 * Stripe's largest amount: "The amount value supports up to eight digits (for example, a value of
 * 99999999 for a USD charge of 999,999.99 USD)" (https://docs.stripe.com/currencies#minimum-and-maximum-charge-amounts),
 * in its minor units. IDR goes to twelve digits (the largest Stripe allows is 999,999,999,998 in
 * its minor units, as Stripe's own table and its client libraries' limits show). Other
 * per-currency exceptions in Stripe's table are not encoded (unknowable here); a larger amount
 * routes to another candidate or is refused before any call.
 */
const STRIPE_MAX_DIGITS_AMOUNT = 99_999_999;
const STRIPE_MAX_AMOUNT: Readonly<Record<string, number>> = { IDR: 999_999_999_999 };

function ruleOf(provider: string, currency: string): ProviderRule | undefined {
  const iso = isoExponent(currency);
  if (iso === undefined) return undefined;
  switch (provider) {
    case 'simulated':
      return { exponent: iso, step: 1 };
    case 'adyen':
      return { exponent: ADYEN_DECIMALS[currency] ?? iso, step: 1 };
    case 'stripe': {
      const max = STRIPE_MAX_AMOUNT[currency] ?? STRIPE_MAX_DIGITS_AMOUNT;
      if (codes(STRIPE_ZERO_DECIMAL).includes(currency)) return { exponent: 0, step: 1, max };
      if (codes(STRIPE_THREE_DECIMAL).includes(currency)) return { exponent: 3, step: 10, max };
      if (codes(STRIPE_TWO_DECIMALS_WHOLE_UNITS).includes(currency)) return { exponent: 2, step: 100, max };
      return { exponent: 2, step: 1, max };
    }
    default:
      throw new Error(`No amount rules for the provider ${provider}: add its exceptions to currencies.ts`);
  }
}

/** The provider's number of decimals for a currency (Stripe's ISK: 2), or undefined for a code we do not take. */
export function providerExponent(provider: AmountProvider | (string & {}), currency: string): number | undefined {
  return ruleOf(provider, currency)?.exponent;
}

/** An amount a provider cannot take exactly (or reports in a form that is no ISO amount). */
export class UnrepresentableAmountError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = 'UnrepresentableAmountError';
  }
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The provider's amount, or why there is none: one computation for the check and the conversion. */
function convert(
  provider: string,
  currency: string,
  isoMinor: number,
): { amount: number; refusal?: undefined } | { refusal: string } {
  const rule = ruleOf(provider, currency);
  const iso = isoExponent(currency);
  if (!rule || iso === undefined) return { refusal: `${currency} is no ISO 4217 currency we take` };
  if (!Number.isSafeInteger(isoMinor) || isoMinor < 0) {
    return { refusal: `${isoMinor} is no whole non-negative number of minor units` };
  }
  const shift = rule.exponent - iso;
  const value = BigInt(isoMinor);
  let amount: bigint;
  if (shift >= 0) amount = value * 10n ** BigInt(shift);
  else {
    const divisor = 10n ** BigInt(-shift);
    if (value % divisor !== 0n) {
      return {
        refusal: `${provider} takes ${currency} with ${rule.exponent} decimals: ${isoMinor} minor units (${iso} decimals) are not a whole number of its units`,
      };
    }
    amount = value / divisor;
  }
  if (amount % BigInt(rule.step) !== 0n) {
    return {
      refusal: `${provider} takes ${currency} amounts only in multiples of ${rule.step} of its minor units (${rule.exponent} decimals)`,
    };
  }
  if (amount > MAX_SAFE) return { refusal: `${isoMinor} ${currency} is too large for ${provider}'s minor units` };
  if (rule.max !== undefined && amount > BigInt(rule.max)) {
    return { refusal: `${provider} takes at most ${rule.max} ${currency} in its minor units` };
  }
  return { amount: Number(amount) };
}

/** Why `provider` cannot take `isoMinor` of `currency` exactly, or undefined when it can. */
export function amountRefusal(
  provider: AmountProvider | (string & {}),
  currency: string,
  isoMinor: number,
): string | undefined {
  return convert(provider, currency, isoMinor).refusal;
}

/**
 * Our amount (ISO 4217 minor units) in the provider's minor units: the same money, exactly.
 * Throws UnrepresentableAmountError where the provider cannot take it (a request is refused
 * before this, see `amountRefusal`).
 */
export function providerAmount(provider: AmountProvider | (string & {}), currency: string, isoMinor: number): number {
  const converted = convert(provider, currency, isoMinor);
  if (converted.refusal !== undefined) throw new UnrepresentableAmountError(converted.refusal);
  return converted.amount;
}

/**
 * An amount the provider reports (its minor units) in ours. Throws UnrepresentableAmountError
 * where it is no whole number of ISO minor units (a fraction of an ISK króna at Stripe): never
 * an amount we asked for.
 */
export function fromProviderAmount(
  provider: AmountProvider | (string & {}),
  currency: string,
  providerMinor: number,
): number {
  const rule = ruleOf(provider, currency);
  const iso = isoExponent(currency);
  if (!rule || iso === undefined) throw new UnrepresentableAmountError(`${currency} is no ISO 4217 currency we take`);
  if (!Number.isSafeInteger(providerMinor) || providerMinor < 0) {
    throw new UnrepresentableAmountError(`${providerMinor} is no whole non-negative number of minor units`);
  }
  const shift = iso - rule.exponent;
  const value = BigInt(providerMinor);
  if (shift >= 0) {
    const amount = value * 10n ** BigInt(shift);
    if (amount > MAX_SAFE) throw new UnrepresentableAmountError(`${providerMinor} ${currency} is too large`);
    return Number(amount);
  }
  const divisor = 10n ** BigInt(-shift);
  if (value % divisor !== 0n) {
    throw new UnrepresentableAmountError(
      `${provider} reported ${providerMinor} ${currency} in ${rule.exponent} decimals: no whole number of ISO minor units (${iso} decimals)`,
    );
  }
  return Number(value / divisor);
}

/**
 * The largest amount the provider can take that is at most `isoMinor` (in the provider's minor
 * units): for what we compute rather than what a donor chose, such as a platform fee, which may
 * come out finer than the provider counts (0.37 MGA at Stripe is 0).
 */
export function providerAmountAtMost(
  provider: AmountProvider | (string & {}),
  currency: string,
  isoMinor: number,
): number {
  return providerAmount(provider, currency, isoMinor - (isoMinor % grainOf(provider, currency)));
}

/**
 * The provider's smallest amount in ISO minor units: its step (a power of ten) shifted by the
 * difference of the exponents, at least one (Stripe's MGA: 100, its KWD: 10, its ISK: 1; Adyen's
 * IDR: 100). Every amount it takes is a multiple of it.
 */
function grainOf(provider: string, currency: string): number {
  const rule = ruleOf(provider, currency);
  const iso = isoExponent(currency);
  if (!rule || iso === undefined) throw new UnrepresentableAmountError(`${currency} is no ISO 4217 currency we take`);
  return 10 ** Math.max(0, Math.log10(rule.step) - (rule.exponent - iso));
}

/**
 * The smallest amount at least `isoMinor` that the provider's minor units can hold (in ISO minor
 * units): for a sum we compute and may only round up, such as a total that covers the donor's fees
 * (fee-cover.ts), which must never leave the charity less than the gift. Its upper bound (Stripe's
 * eight digits) is not applied here: `amountRefusal` still refuses an amount above it.
 */
export function providerAmountAtLeast(
  provider: AmountProvider | (string & {}),
  currency: string,
  isoMinor: number,
): number {
  const grain = grainOf(provider, currency);
  const remainder = isoMinor % grain;
  return remainder === 0 ? isoMinor : isoMinor + grain - remainder;
}
