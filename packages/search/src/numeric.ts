/**
 * One definition of "numeric" for ranges, numeric sorts, numeric term keys and sums: a finite
 * number, or a string of decimal digits with an optional sign and fraction (`"1000"`, `"-3.50"`) as
 * `Money.value` is written. Exponents, blanks and `+` are not numeric strings, so `"1e3"` stays text.
 */
const NUMERIC_STRING = /^-?[0-9]+(\.[0-9]+)?$/;

export function isNumericString(value: string): boolean {
  return NUMERIC_STRING.test(value) && Number.isFinite(Number(value));
}

/** The value as a number, or undefined when it is not numeric. `-0` becomes `0` so keys compare and serialise alike. */
export function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : undefined;
  if (typeof value === 'string' && NUMERIC_STRING.test(value)) {
    const parsed = Number(value);
    return Number.isFinite(parsed) ? parsed + 0 : undefined;
  }
  return undefined;
}
