import { providerAmountAtLeast } from './currencies';

/**
 * Fees a donor may cover (contract section 13, issue 48 point 1). A payment-method profile or a
 * route candidate carries its provider's fees as `{"percent": "2.9", "fixed": "30"}`: a percentage
 * of the amount charged, written as a decimal string, plus a fixed part in ISO minor units. A
 * donor who covers them is charged the smallest total T that leaves the intended amount A once
 * the fees of T are taken:
 *
 *     T = ceil((A + fixed) / (1 − percent/100))
 *
 * The fee of a total is rounded UP to the minor unit: fee(T) = ceil(T · percent/100) + fixed.
 * With that rounding the contract's formula is exactly the smallest T with T − fee(T) ≥ A:
 * T − ceil(T·q) = floor(T·(1 − q)), and floor(x) ≥ A + fixed (an integer) holds exactly when
 * x ≥ A + fixed. (With a fee rounded to nearest or down, a smaller T could already suffice, and the
 * formula would overcharge by a unit now and then.) Rounding the fee up also never leaves the
 * charity short whichever way its provider rounds its own fee: the donor's cover is at worst one
 * minor unit more than the provider takes.
 *
 * Everything is integer arithmetic on the decimal string (BigInt), never a float: 2.9 % of 1030 is
 * 29.87, which a float could put on either side of a whole unit.
 */
export interface Fees {
  /** A percentage, 0 ≤ percent < 100, with at most four decimals ("2.9", "1.45", "0"). */
  readonly percent: string;
  /** Minor units of the currency ("30"). */
  readonly fixed: string;
}

/** 0 ≤ percent < 100, at most four decimals, no sign, no exponent, no leading zeros ("2.9"). */
export const FEE_PERCENT_PATTERN = /^(0|[1-9][0-9]?)(\.[0-9]{1,4})?$/;
/** A whole non-negative number of minor units as a string of digits ("30"). */
export const FEE_FIXED_PATTERN = /^(0|[1-9][0-9]{0,11})$/;

/** What a donor who covers the fees is charged: T, A and the cover T − A, in ISO minor units. */
export interface FeeCover {
  /** T: the amount charged. */
  readonly total: number;
  /** A: what the donor meant to give, and what the charity keeps once the fees are taken. */
  readonly intended: number;
  /** T − A. */
  readonly cover: number;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** percent/100 as an exact fraction: numerator / denominator. */
function rate(fees: Fees): { numerator: bigint; denominator: bigint } {
  const match = FEE_PERCENT_PATTERN.exec(fees.percent);
  if (!match) throw new RangeError(`A fee percentage is 0 ≤ p < 100 with at most four decimals, got ${fees.percent}`);
  const decimals = (match[2] ?? '.').slice(1);
  return {
    numerator: BigInt(`${match[1]}${decimals}`),
    denominator: 100n * 10n ** BigInt(decimals.length),
  };
}

function fixedOf(fees: Fees): bigint {
  if (!FEE_FIXED_PATTERN.test(fees.fixed)) throw new RangeError(`A fixed fee is whole minor units, got ${fees.fixed}`);
  return BigInt(fees.fixed);
}

function wholeMinor(value: number, what: string): bigint {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} needs whole minor units, got ${value}`);
  return BigInt(value);
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

/** The fee of a charge of `total`: ceil(total · percent/100) + fixed. */
export function feeOf(total: number, fees: Fees): number {
  const { numerator, denominator } = rate(fees);
  return Number(ceilDiv(wholeMinor(total, 'A total') * numerator, denominator) + fixedOf(fees));
}

/**
 * T = ceil((A + fixed) / (1 − percent/100)): the smallest total whose fee leaves `intended`.
 * Throws RangeError past the safe integers (a percentage near 100 on a large gift).
 */
export function feeCoverTotal(intended: number, fees: Fees): number {
  const { numerator, denominator } = rate(fees);
  const kept = wholeMinor(intended, 'An intended amount') + fixedOf(fees);
  const total = ceilDiv(kept * denominator, denominator - numerator);
  if (total > MAX_SAFE) throw new RangeError(`Covering ${fees.percent} % + ${fees.fixed} of ${intended} is too large`);
  return Number(total);
}

/**
 * What a provider charges a donor who covers `fees` on `intended`: T, rounded UP to the next
 * amount the provider's minor units can hold where T is finer than it counts (Stripe's KWD in tens
 * of fils, its MGA in whole ariary, Adyen's IDR in whole rupiah: @svc/core currencies.ts). Rounding
 * up keeps T − fee(T) ≥ A, since a larger total never leaves less; it is the smallest total that
 * both leaves A and can be charged there. Without fees, nothing is covered: T = A.
 */
export function feeCoverAt(provider: string, currency: string, intended: number, fees: Fees | undefined): FeeCover {
  if (!fees) return { total: intended, intended, cover: 0 };
  const total = providerAmountAtLeast(provider, currency, feeCoverTotal(intended, fees));
  return { total, intended, cover: total - intended };
}
