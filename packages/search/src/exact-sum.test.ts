import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExactSum } from './exact-sum';

function sumOf(values: readonly unknown[]): number | string {
  const sum = new ExactSum();
  for (const value of values) sum.add(value);
  return sum.value();
}

describe('ExactSum', () => {
  it('sums integer minor units exactly, whatever their size and form', () => {
    const minor = fc.oneof(
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
      fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
      fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }).map(String),
    );
    fc.assert(
      fc.property(fc.array(minor, { maxLength: 40 }), (values) => {
        const exact = values.reduce<bigint>((total, value) => total + BigInt(value), 0n);
        const result = sumOf(values);
        // What a client reads (JSON prints numbers as String does) is exactly the total's digits;
        // a string only where a number would print otherwise.
        expect(String(result)).toBe(exact.toString());
        if (typeof result === 'string') expect(String(Number(result))).not.toBe(result);
      }),
    );
  });

  it('answers a number while the total is a safe integer', () => {
    expect(sumOf([Number.MAX_SAFE_INTEGER - 1, 1])).toBe(Number.MAX_SAFE_INTEGER);
    expect(sumOf([Number.MAX_SAFE_INTEGER, 2])).toBe('9007199254740993');
    expect(sumOf([Number.MAX_SAFE_INTEGER, 2, -2])).toBe(Number.MAX_SAFE_INTEGER);
    expect(sumOf([])).toBe(0);
    // Held by the double 1152921504606846976, which prints (and serialises) as these digits.
    expect(JSON.stringify(sumOf(['1152921504606847000']))).toBe('1152921504606847000');
    expect(JSON.stringify(sumOf(['5910974510923743', '4503599627370495']))).toBe('10414574138294238');
    expect(sumOf(['9007199254740993'])).toBe('9007199254740993');
  });

  it('adds decimals as decimals, not as binary fractions', () => {
    expect(sumOf([0.1, 0.2])).toBe(0.3);
    expect(sumOf(['12.50', '0.25', -1])).toBe(11.75);
    expect(sumOf(['0.1', '0.2', '-0.3'])).toBe(0);
    expect(sumOf([1e21, 1])).toBe('1000000000000000000001');
  });

  it('ignores what is not a number or numeric string', () => {
    expect(sumOf(['1e3', ' 5', '', 'abc', null, true, {}, [], Number.NaN, Number.POSITIVE_INFINITY, '7'])).toBe(7);
  });
});
