import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AMOUNT_PROVIDERS, amountRefusal, isoExponent, providerAmountAtLeast } from './currencies';
import { FEE_FIXED_PATTERN, FEE_PERCENT_PATTERN, type Fees, feeCoverAt, feeCoverTotal, feeOf } from './fee-cover';

/** A percentage as a profile writes it: 0 ≤ p < 100, up to four decimals, trailing zeros allowed ("2.90"). */
const percent = fc
  .tuple(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 9999 }))
  .map(([whole, decimals, fraction]) =>
    decimals === 0 ? String(whole) : `${whole}.${String(fraction % 10 ** decimals).padStart(decimals, '0')}`,
  );
/** Fixed fees: none, the usual tens of minor units, and large ones (a fixed 1,000 JPY or 5.000 KWD). */
const fixed = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 500 }), fc.integer({ min: 0, max: 10_000_000 }));
const fees = fc.record({ percent, fixed: fixed.map(String) });
/** Small gifts (where rounding bites) and large ones, kept so that T stays a safe integer. */
const intended = fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 1_000_000_000_000 }));
/** One currency per ISO exponent (0, 2, 3), and those a provider counts differently (MGA, IDR, ISK, UGX, CLP). */
const currency = fc.constantFrom('JPY', 'CHF', 'EUR', 'KWD', 'BHD', 'MGA', 'IDR', 'ISK', 'UGX', 'CLP', 'HUF');

/**
 * The contract's formula on its own terms, in exact rationals: (A + fixed) · 100 · 10^d / (100 · 10^d − P)
 * rounded up, P the digits of the percentage and d its decimals.
 */
function contractTotal(a: number, f: Fees): bigint {
  const [whole, fraction = ''] = f.percent.split('.');
  const scale = 10n ** BigInt(fraction.length);
  const numerator = (BigInt(a) + BigInt(f.fixed)) * 100n * scale;
  const denominator = 100n * scale - BigInt(`${whole}${fraction}`);
  const quotient = numerator / denominator;
  return numerator % denominator === 0n ? quotient : quotient + 1n;
}
/** A total the service can count (safe integers), leaving room for a provider's rounding up. */
const countable = (a: number, f: Fees) => contractTotal(a, f) < BigInt(Number.MAX_SAFE_INTEGER) - 1000n;

const exactlyLeaves = (total: number, f: Fees, kept: number) => total - feeOf(total, f) >= kept;

describe('the total a donor who covers the fees is charged', () => {
  it('is the smallest total whose fee (rounded up) leaves the intended amount, for any amount, percentage and fixed fee', () => {
    fc.assert(
      fc.property(intended, fees, (a, f) => {
        fc.pre(countable(a, f));
        const t = feeCoverTotal(a, f);
        expect(exactlyLeaves(t, f, a)).toBe(true);
        expect(exactlyLeaves(t - 1, f, a)).toBe(false);
        expect(t).toBeGreaterThanOrEqual(a + Number(f.fixed));
      }),
      { numRuns: 2_000 },
    );
  });

  it('equals the contract’s ceil((A + fixed) / (1 − percent/100)) computed in exact rationals', () => {
    fc.assert(
      fc.property(intended, fees, (a, f) => {
        const exact = contractTotal(a, f);
        // Past the safe integers it is refused, never rounded into another sum.
        if (exact > BigInt(Number.MAX_SAFE_INTEGER)) expect(() => feeCoverTotal(a, f)).toThrow(RangeError);
        else expect(BigInt(feeCoverTotal(a, f))).toBe(exact);
      }),
    );
  });

  it('agrees with a search from the intended amount upwards on small gifts', () => {
    const small = fc.record({
      percent: fc.integer({ min: 0, max: 4000 }).map((basis) => (basis / 100).toFixed(basis % 3 === 0 ? 2 : 1)),
      fixed: fc.integer({ min: 0, max: 300 }).map(String),
    });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3_000 }), small, (a, f) => {
        fc.pre(FEE_PERCENT_PATTERN.test(f.percent));
        let t = a;
        while (!exactlyLeaves(t, f, a)) t += 1;
        expect(feeCoverTotal(a, f)).toBe(t);
      }),
      { numRuns: 500 },
    );
  });

  it('rounds up to what each provider can charge in every currency exponent, and still leaves the intended amount', () => {
    fc.assert(
      fc.property(intended, fees, currency, fc.constantFrom(...AMOUNT_PROVIDERS), (a, f, code, provider) => {
        fc.pre(countable(a, f));
        const exact = feeCoverTotal(a, f);
        const { total, cover } = feeCoverAt(provider, code, a, f);
        expect(total).toBe(a + cover);
        expect(total).toBeGreaterThanOrEqual(exact);
        expect(exactlyLeaves(total, f, a)).toBe(true);
        // Representable (the provider's upper bound aside: a larger total is refused, not rounded).
        const refusal = amountRefusal(provider, code, total);
        expect(refusal === undefined || /at most|too large/.test(refusal)).toBe(true);
        // And the smallest such: the first amount the provider can hold from the exact total on.
        expect(providerAmountAtLeast(provider, code, exact)).toBe(total);
        expect(providerAmountAtLeast(provider, code, total)).toBe(total);
      }),
      { numRuns: 2_000 },
    );
  });

  it('rounds where a provider counts coarser than ISO: 10 fils at Stripe, whole ariary at Stripe, whole rupiah at Adyen', () => {
    const f = { percent: '2.9', fixed: '0' };
    // 1000 fils at 2.9 %: 1029.86… → 1030 exactly; 1001 → 1031 (1030.89 up), at Stripe 1040 (tens of fils).
    expect(feeCoverTotal(1001, f)).toBe(1031);
    expect(feeCoverAt('stripe', 'KWD', 1001, f)).toEqual({ total: 1040, intended: 1001, cover: 39 });
    expect(feeCoverAt('simulated', 'KWD', 1001, f)).toEqual({ total: 1031, intended: 1001, cover: 30 });
    expect(feeCoverAt('stripe', 'MGA', 10_000, f).total).toBe(10_300);
    expect(feeCoverAt('adyen', 'IDR', 10_000, f).total).toBe(10_300);
    expect(isoExponent('JPY')).toBe(0);
    expect(feeCoverAt('stripe', 'JPY', 1_000, { percent: '3.6', fixed: '0' }).total).toBe(1_038);
  });

  it('charges the contract’s example: 2.9 % + 30 on 25.00 CHF is 26.06', () => {
    const f = { percent: '2.9', fixed: '30' };
    expect(feeCoverTotal(2500, f)).toBe(2606);
    expect(feeOf(2606, f)).toBe(106);
    expect(feeOf(2605, f)).toBe(106);
    expect(feeCoverAt('simulated', 'CHF', 2500, f)).toEqual({ total: 2606, intended: 2500, cover: 106 });
    expect(feeCoverAt('simulated', 'CHF', 2500, undefined)).toEqual({ total: 2500, intended: 2500, cover: 0 });
  });

  it('refuses percentages and fixed fees outside the rule', () => {
    for (const bad of ['100', '-1', '2.90001', '02.9', '2,9', '1e1', '', ' 2.9', '2.']) {
      expect(FEE_PERCENT_PATTERN.test(bad), bad).toBe(false);
      expect(() => feeCoverTotal(100, { percent: bad, fixed: '0' }), bad).toThrow(RangeError);
    }
    for (const bad of ['-1', '1.5', '030', '', '1e3']) {
      expect(FEE_FIXED_PATTERN.test(bad), bad).toBe(false);
      expect(() => feeCoverTotal(100, { percent: '1', fixed: bad }), bad).toThrow(RangeError);
    }
    expect(() => feeCoverTotal(Number.MAX_SAFE_INTEGER, { percent: '99.9999', fixed: '0' })).toThrow(RangeError);
  });
});
