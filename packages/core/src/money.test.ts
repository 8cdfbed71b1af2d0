import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from './errors';
import { addMoney, compareMoney, money, parseMinorUnits, subtractMoney, toMoneyJson } from './money';

const minor = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
const currency = fc.constantFrom('CHF', 'EUR', 'USD', 'JPY');

describe('money', () => {
  it('round-trips minor units through the API string form', () => {
    fc.assert(
      fc.property(minor, currency, (value, code) => {
        const json = toMoneyJson(money(value, code));
        expect(json).toEqual({ value: String(value), currency: code });
        expect(parseMinorUnits(json.value)).toBe(value);
        expect(parseMinorUnits(value)).toBe(value);
      }),
    );
  });

  it('refuses anything that is not a whole non-negative number of minor units', () => {
    const bad = fc.oneof(
      fc.double({ noInteger: true }),
      fc.integer({ max: -1 }),
      fc.string().filter((s) => !/^(0|[1-9][0-9]*)$/.test(s)),
      fc.constantFrom('1.5', '01', ' 1', '1e3', '-0', '', '9007199254740993'),
    );
    fc.assert(
      fc.property(bad, (value) => {
        expect(() => parseMinorUnits(value)).toThrow(ValidationError);
      }),
    );
  });

  it('adds and subtracts exactly, and never goes below zero', () => {
    const pair = fc.tuple(fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 0, max: 2 ** 40 }));
    fc.assert(
      fc.property(pair, currency, ([a, b], code) => {
        const sum = addMoney(money(a, code), money(b, code));
        expect(sum.minor).toBe(a + b);
        expect(subtractMoney(sum, money(b, code)).minor).toBe(a);
        expect(compareMoney(money(a, code), money(b, code))).toBe(Math.sign(a - b));
        if (a < b) expect(() => subtractMoney(money(a, code), money(b, code))).toThrow(RangeError);
      }),
    );
  });

  it('refuses to mix currencies and lower-case codes', () => {
    expect(() => addMoney(money(1, 'CHF'), money(1, 'EUR'))).toThrow(RangeError);
    expect(() => money(1, 'chf')).toThrow(RangeError);
  });
});
