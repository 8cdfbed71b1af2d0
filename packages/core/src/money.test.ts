import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { money } from './money';

const currency = fc.constantFrom('CHF', 'EUR', 'USD', 'JPY');

describe('money', () => {
  it('holds any whole non-negative number of minor units in an ISO 4217 currency', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), currency, (minor, code) => {
        expect(money(minor, code)).toEqual({ minor, currency: code });
      }),
    );
  });

  it('refuses fractions, negatives, unsafe integers and codes that are not three capitals', () => {
    const bad = fc.oneof(
      fc.double({ noInteger: true }),
      fc.integer({ max: -1 }),
      fc.constantFrom(Number.MAX_SAFE_INTEGER + 1, Number.NaN, Number.POSITIVE_INFINITY),
    );
    fc.assert(
      fc.property(bad, currency, (minor, code) => {
        expect(() => money(minor, code)).toThrow(RangeError);
      }),
    );
    for (const code of ['chf', 'CH', 'CHFF', '', 'C1F']) expect(() => money(100, code)).toThrow(RangeError);
  });
});
