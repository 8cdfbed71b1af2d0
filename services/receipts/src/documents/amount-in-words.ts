import { toCardinal } from 'n2words/de-DE';
import { exponentOf, splitMinor } from './money-text';

/**
 * The German receipt states its total "in Buchstaben" as well as in figures. n2words spells the
 * whole numbers; the unit names and the cents are ours, from the integer's digits (n2words'
 * own currency form takes a JavaScript number, which we never build from money).
 *
 * Choices, each acceptable because the BMF letter of 7 Nov 2013 asks only that the words name
 * the amount (even digit by digit, "eins – zwei – vier – sechs"):
 * - exactly one unit is "ein Euro" / "ein Cent" (the article form before a noun); larger
 *   numbers keep n2words' cardinal, so 101 € is "einhunderteins Euro";
 * - no cents: the words end with the unit ("einhundert Euro"), no "null Cent";
 * - under one euro: "null Euro fünfzig Cent", so the euros are never missing from the sentence;
 * - a currency without German unit names here: its code, and the fraction in figures as on a
 *   cheque ("einhundert USD 56/100").
 */

const UNITS: Readonly<Record<string, readonly [major: string, minor: string]>> = {
  EUR: ['Euro', 'Cent'],
  CHF: ['Franken', 'Rappen'],
};

/** A whole number in German words: 1 → "eins", 21 → "einundzwanzig", 1000000 → "eine Million". */
export function germanCardinal(value: bigint): string {
  if (value < 0n) throw new RangeError('No negative amounts in words');
  return toCardinal(value);
}

/** A count before a noun: "ein" for exactly one, the cardinal otherwise. */
function countBeforeNoun(value: bigint): string {
  return value === 1n ? 'ein' : germanCardinal(value);
}

/** "eintausendzweihundertvierunddreißig Euro sechsundfünfzig Cent" for 123456 EUR minor units. */
export function germanAmountInWords(minor: number | bigint, currency: string): string {
  const exponent = exponentOf(currency);
  const { major, fraction } = splitMinor(minor, exponent);
  const units = UNITS[currency];
  const words = `${countBeforeNoun(BigInt(major))} ${units?.[0] ?? currency}`;
  if (!fraction || BigInt(fraction) === 0n) return words;
  if (!units) return `${words} ${fraction}/${10n ** BigInt(exponent)}`;
  return `${words} ${countBeforeNoun(BigInt(fraction))} ${units[1]}`;
}
