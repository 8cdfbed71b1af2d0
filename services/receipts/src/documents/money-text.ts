import { isoExponent } from '@svc/core';

/**
 * Amounts as receipts print them, built from the integer's own digits: no floating point ever
 * touches a receipt's figure, so 2^53 − 1 minor units print as exactly as 1.
 */

/** How one receipt style writes numbers and where the currency goes. */
export type MoneyStyle = 'de-DE' | 'de-CH' | 'en-GB';

interface StyleRule {
  group: string;
  decimal: string;
  /** Symbols this style writes instead of the ISO code. */
  symbols: Readonly<Record<string, string>>;
  place: (amount: string, currency: string) => string;
}

const STYLES: Readonly<Record<MoneyStyle, StyleRule>> = {
  // Germany: 1.234,56 € (DIN 5008 groups by points and writes the decimal comma).
  'de-DE': { group: '.', decimal: ',', symbols: { EUR: '€' }, place: (amount, currency) => `${amount} ${currency}` },
  // Switzerland, in every language: CHF 1’234.56 (the apostrophe groups, the point is decimal).
  'de-CH': { group: '’', decimal: '.', symbols: {}, place: (amount, currency) => `${currency} ${amount}` },
  // United Kingdom: £1,234.56.
  'en-GB': {
    group: ',',
    decimal: '.',
    symbols: { GBP: '£', EUR: '€' },
    place: (amount, currency) => (currency.length === 1 ? `${currency}${amount}` : `${currency} ${amount}`),
  },
};

/** The ISO 4217 exponent of a currency we take; throws for any other code. */
export function exponentOf(currency: string): number {
  const exponent = isoExponent(currency);
  if (exponent === undefined) throw new RangeError(`No ISO 4217 exponent for ${currency}`);
  return exponent;
}

/** Minor units as a whole number of major units and the fraction's digits: 123456, 2 → ["1234", "56"]. */
export function splitMinor(minor: number | bigint, exponent: number): { major: string; fraction: string } {
  if (typeof minor === 'number' && !Number.isSafeInteger(minor)) {
    throw new RangeError(`Minor units must be a safe integer, got ${minor}`);
  }
  if (!Number.isInteger(exponent) || exponent < 0) throw new RangeError(`Bad exponent ${exponent}`);
  const value = BigInt(minor);
  if (value < 0n) throw new RangeError('Receipts print no negative amounts');
  const digits = value.toString().padStart(exponent + 1, '0');
  return { major: digits.slice(0, digits.length - exponent), fraction: digits.slice(digits.length - exponent) };
}

/** "1234.56" for 123456 minor units at exponent 2; "500" at exponent 0. */
export function decimalString(minor: number | bigint, exponent: number): string {
  const { major, fraction } = splitMinor(minor, exponent);
  return fraction ? `${major}.${fraction}` : major;
}

/** Thousands grouped from the right: "1234567" → "1.234.567". */
function groupThousands(major: string, separator: string): string {
  const head = major.length % 3 || 3;
  const groups = [major.slice(0, head)];
  for (let at = head; at < major.length; at += 3) groups.push(major.slice(at, at + 3));
  return groups.join(separator);
}

/** The number alone in a style: "1.234,56" (de-DE), "1’234.56" (de-CH), "1,234.56" (en-GB). */
export function formatNumber(minor: number | bigint, exponent: number, style: MoneyStyle): string {
  const rule = STYLES[style];
  const { major, fraction } = splitMinor(minor, exponent);
  const grouped = groupThousands(major, rule.group);
  return fraction ? `${grouped}${rule.decimal}${fraction}` : grouped;
}

/** An amount with its currency as the style writes it: "1.234,56 €", "CHF 1’234.56", "£1,234.56". */
export function formatMoney(minor: number | bigint, currency: string, style: MoneyStyle): string {
  const rule = STYLES[style];
  const amount = formatNumber(minor, exponentOf(currency), style);
  return rule.place(amount, rule.symbols[currency] ?? currency);
}
