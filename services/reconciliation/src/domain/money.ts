import { ISO_CURRENCIES, isoExponent } from '@svc/core';

/**
 * Decimal amounts as banks write them ↔ integer minor units, per ISO 4217 currency exponent.
 *
 * Exact: the digits are moved, never multiplied as floating point. The exponents are the one ISO
 * 4217 table in `@svc/core` (currencies.ts, which also holds each provider's exceptions): the
 * active codes of List One; codes without minor units (gold, SDR, test and "no currency" codes
 * such as XAU, XDR, XTS, XXX) and withdrawn codes are unknown here.
 */

/** Every currency code this module knows, sorted. */
export const KNOWN_CURRENCIES: readonly string[] = ISO_CURRENCIES;

/** The number of minor-unit digits of an ISO 4217 code (2 for CHF, 0 for JPY, 3 for KWD), or undefined. */
export function minorDigits(currency: string): number | undefined {
  return isoExponent(currency);
}

export type AmountErrorCode = 'invalid_amount' | 'too_many_minor_digits' | 'amount_too_large' | 'unknown_currency';

export type AmountResult =
  | { readonly ok: true; readonly minor: number }
  | { readonly ok: false; readonly code: AmountErrorCode; readonly message: string };

const DECIMAL = /^([0-9]+)(?:\.([0-9]+))?$/;

/**
 * Parses an unsigned decimal (`1234.5`, `0.05`, `100`: digits, at most one `.` followed by at least
 * one digit; no sign, no exponent, no separators) into minor units of `currency`. More fraction
 * digits than the currency has is an error, even when they are zeros (`100.00` JPY).
 */
export function decimalToMinor(text: string, currency: string): AmountResult {
  const digits = minorDigits(currency);
  if (digits === undefined) {
    return { ok: false, code: 'unknown_currency', message: `Unknown ISO 4217 currency code "${currency}"` };
  }
  const match = DECIMAL.exec(text);
  if (!match) return { ok: false, code: 'invalid_amount', message: `"${text}" is not a decimal amount` };
  const [, whole = '', fraction = ''] = match;
  if (fraction.length > digits) {
    return {
      ok: false,
      code: 'too_many_minor_digits',
      message: `"${text}" has ${fraction.length} decimal places; ${currency} has ${digits}`,
    };
  }
  const minor = Number(`${whole}${fraction.padEnd(digits, '0')}`);
  if (!Number.isSafeInteger(minor)) {
    return { ok: false, code: 'amount_too_large', message: `"${text}" ${currency} is too large` };
  }
  return { ok: true, minor };
}

/** Writes minor units as the shortest exact decimal with the currency's digits (`123450` CHF → `1234.50`). */
export function minorToDecimal(minor: number, currency: string): string {
  const digits = minorDigits(currency);
  if (digits === undefined) throw new RangeError(`Unknown ISO 4217 currency code "${currency}"`);
  if (!Number.isSafeInteger(minor) || minor < 0) throw new RangeError(`Not a non-negative safe integer: ${minor}`);
  if (digits === 0) return String(minor);
  const text = String(minor).padStart(digits + 1, '0');
  return `${text.slice(0, -digits)}.${text.slice(-digits)}`;
}
