import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AMOUNT_PROVIDERS,
  amountRefusal,
  fromProviderAmount,
  ISO_CURRENCIES,
  isoExponent,
  providerAmount,
  providerAmountAtMost,
  providerExponent,
  UnrepresentableAmountError,
} from './currencies';

const currency = fc.constantFrom(...ISO_CURRENCIES);
const provider = fc.constantFrom(...AMOUNT_PROVIDERS);
/** Small amounts (where the rules bite) and large ones (where a safe integer may overflow). */
const isoMinor = fc.oneof(
  fc.integer({ min: 0, max: 100_000 }),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  fc.integer({ min: 0, max: 10_000 }).map((units) => units * 100),
);

/** `a / 10^ea === b / 10^eb`, in exact arithmetic. */
const sameMoney = (a: number, ea: number, b: number, eb: number) =>
  BigInt(a) * 10n ** BigInt(eb) === BigInt(b) * 10n ** BigInt(ea);

const exponents = (p: string, code: string) => {
  const iso = isoExponent(code);
  const own = providerExponent(p, code);
  if (iso === undefined || own === undefined) throw new Error(`${code} has no exponent`);
  return { iso, own };
};

describe('amounts in each provider’s minor units', () => {
  it('converts to a provider and back to the very same amount, in every currency, wherever the provider can take it', () => {
    fc.assert(
      fc.property(isoMinor, (amount) => {
        for (const code of ISO_CURRENCIES) {
          for (const p of AMOUNT_PROVIDERS) {
            if (amountRefusal(p, code, amount) !== undefined) continue;
            const theirs = providerAmount(p, code, amount);
            expect(Number.isSafeInteger(theirs)).toBe(true);
            expect(fromProviderAmount(p, code, theirs)).toBe(amount);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('is the same money at every provider a routed donation may reach (value / 10^exponent is equal), in every currency', () => {
    fc.assert(
      fc.property(isoMinor, (amount) => {
        for (const code of ISO_CURRENCIES) {
          const iso = isoExponent(code) as number;
          for (const p of AMOUNT_PROVIDERS) {
            if (amountRefusal(p, code, amount) !== undefined) continue;
            expect(sameMoney(amount, iso, providerAmount(p, code, amount), exponents(p, code).own)).toBe(true);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses exactly the amounts with no whole provider amount of the same value, and never rounds one', () => {
    fc.assert(
      fc.property(provider, currency, isoMinor, (p, code, amount) => {
        const { iso, own } = exponents(p, code);
        // Independently: the provider's amount of the same value is whole, and a multiple of its step.
        const scaled = BigInt(amount) * 10n ** BigInt(Math.max(0, own - iso));
        const divisor = 10n ** BigInt(Math.max(0, iso - own));
        const whole = scaled % divisor === 0n;
        const step = p === 'stripe' && ['ISK', 'UGX'].includes(code) ? 100n : p === 'stripe' && own === 3 ? 10n : 1n;
        // Stripe's largest amount: eight digits, twelve for IDR (docs.stripe.com/currencies).
        const max =
          p === 'stripe' ? (code === 'IDR' ? 999_999_999_999n : 99_999_999n) : BigInt(Number.MAX_SAFE_INTEGER);
        const fits = whole && (scaled / divisor) % step === 0n && scaled / divisor <= max;
        expect(amountRefusal(p, code, amount) === undefined).toBe(fits);
        if (fits) return;
        expect(() => providerAmount(p, code, amount)).toThrow(UnrepresentableAmountError);
      }),
      { numRuns: 2000 },
    );
  });

  it('never takes an amount that differs from the one asked for: the largest amount at most it is at most it', () => {
    fc.assert(
      fc.property(provider, currency, fc.integer({ min: 0, max: 1_000_000 }), (p, code, amount) => {
        const { iso, own } = exponents(p, code);
        const below = providerAmountAtMost(p, code, amount);
        expect(BigInt(below) * 10n ** BigInt(iso) <= BigInt(amount) * 10n ** BigInt(own)).toBe(true);
        if (amountRefusal(p, code, amount) === undefined) expect(below).toBe(providerAmount(p, code, amount));
      }),
    );
  });

  it('reads back only whole ISO amounts: a fraction of a unit ISO does not divide is refused', () => {
    fc.assert(
      fc.property(provider, currency, fc.integer({ min: 0, max: 10_000_000 }), (p, code, theirs) => {
        const { iso, own } = exponents(p, code);
        const exact = own <= iso || theirs % 10 ** (own - iso) === 0;
        if (exact) expect(sameMoney(fromProviderAmount(p, code, theirs), iso, theirs, own)).toBe(true);
        else expect(() => fromProviderAmount(p, code, theirs)).toThrow(UnrepresentableAmountError);
      }),
    );
  });
});

describe('the documented exceptions', () => {
  it.each([
    // https://docs.stripe.com/currencies#zero-decimal: "to charge ¥500, provide an amount value of 500".
    ['stripe', 'JPY', 500, 500],
    // #special-cases: "to charge 5 ISK, provide an amount value of 500"; the same for UGX.
    ['stripe', 'ISK', 5, 500],
    ['stripe', 'UGX', 5, 500],
    // MGA is zero-decimal at Stripe, two-decimal in ISO 4217.
    ['stripe', 'MGA', 1000, 10],
    // #three-decimal: 5.120 KWD is 5120.
    ['stripe', 'KWD', 5120, 5120],
    // HUF and TWD are zero-decimal for payouts only: charges are two-decimal.
    ['stripe', 'HUF', 1045, 1045],
    ['stripe', 'TWD', 80045, 80045],
    ['stripe', 'CHF', 2500, 2500],
    // https://docs.adyen.com/development-resources/currency-codes/: CLP and ISK 2, CVE and IDR 0.
    ['adyen', 'ISK', 5, 500],
    ['adyen', 'CLP', 1500, 150000],
    ['adyen', 'IDR', 100000, 1000],
    ['adyen', 'CVE', 2500, 25],
    ['adyen', 'JPY', 500, 500],
    ['adyen', 'KWD', 5124, 5124],
    ['adyen', 'CHF', 2500, 2500],
    ['simulated', 'ISK', 5, 5],
    ['simulated', 'IDR', 12345, 12345],
  ] as const)('%s takes %s %i (ISO minor units) as %i', (p, code, ours, theirs) => {
    expect(providerAmount(p, code, ours)).toBe(theirs);
    expect(fromProviderAmount(p, code, theirs)).toBe(ours);
  });

  it.each([
    // "5.124 KWD must be rounded to 5120 or 5130": we refuse rather than round a donor's amount.
    ['stripe', 'KWD', 5124, /multiples of 10/],
    ['stripe', 'MGA', 1050, /not a whole number/],
    ['adyen', 'IDR', 12345, /not a whole number/],
    ['adyen', 'CVE', 2550, /not a whole number/],
    ['stripe', 'XXX', 100, /no ISO 4217 currency/],
    ['adyen', 'ISK', Number.MAX_SAFE_INTEGER, /too large/],
  ] as const)('refuses %s %s %i', (p, code, ours, why) => {
    expect(amountRefusal(p, code, ours)).toMatch(why);
    expect(() => providerAmount(p, code, ours)).toThrow(why);
  });

  it('refuses a Stripe ISK amount in fractions of a króna when it is read back', () => {
    expect(() => fromProviderAmount('stripe', 'ISK', 150)).toThrow(UnrepresentableAmountError);
    expect(fromProviderAmount('stripe', 'ISK', 100)).toBe(1);
  });

  it('knows every active ISO 4217 code once, with the exponents of List One', () => {
    expect(new Set(ISO_CURRENCIES).size).toBe(ISO_CURRENCIES.length);
    expect(ISO_CURRENCIES.length).toBeGreaterThan(150);
    expect([isoExponent('CHF'), isoExponent('JPY'), isoExponent('KWD'), isoExponent('CLF')]).toEqual([2, 0, 3, 4]);
    for (const code of ['XAU', 'XDR', 'XTS', 'XXX', 'HRK', 'chf']) expect(isoExponent(code)).toBeUndefined();
  });

  it('takes at most eight digits of Stripe’s minor units (twelve in IDR), and no bound but ours at Adyen', () => {
    expect(providerAmount('stripe', 'USD', 99_999_999)).toBe(99_999_999);
    expect(amountRefusal('stripe', 'USD', 100_000_000)).toMatch(/at most 99999999/);
    expect(amountRefusal('stripe', 'CHF', 100_000_000)).toMatch(/at most/);
    expect(amountRefusal('adyen', 'CHF', 100_000_000)).toBeUndefined();
    expect(amountRefusal('simulated', 'CHF', 100_000_000)).toBeUndefined();
    // Read back, a larger amount Stripe reports is still read (it is Stripe's to bound).
    expect(fromProviderAmount('stripe', 'USD', 100_000_000)).toBe(100_000_000);
  });

  it('has no rules for a provider nobody wrote them for', () => {
    expect(() => providerAmount('worldpay', 'CHF', 100)).toThrow(/No amount rules/);
  });
});
