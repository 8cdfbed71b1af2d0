import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decimalToMinor, KNOWN_CURRENCIES, minorDigits, minorToDecimal } from './money';

const byExponent = {
  0: ['JPY', 'KRW', 'CLP'],
  2: ['CHF', 'EUR', 'USD', 'GBP'],
  3: ['BHD', 'KWD', 'JOD', 'OMR', 'TND'],
  4: ['CLF'],
};

describe('currency exponents', () => {
  it.each(
    Object.entries(byExponent).flatMap(([digits, codes]) => codes.map((code) => [code, Number(digits)] as const)),
  )('%s has %i minor digits', (code, digits) => expect(minorDigits(code)).toBe(digits));

  it.each(['XAU', 'XDR', 'XTS', 'XXX', 'HRK', 'chf', 'CH', 'CHFF', ''])('%j is not a known currency', (code) => {
    expect(minorDigits(code)).toBeUndefined();
    expect(decimalToMinor('1', code)).toMatchObject({ ok: false, code: 'unknown_currency' });
  });

  it('lists only upper-case three-letter codes, each once', () => {
    expect(KNOWN_CURRENCIES.every((code) => /^[A-Z]{3}$/.test(code))).toBe(true);
    expect(new Set(KNOWN_CURRENCIES).size).toBe(KNOWN_CURRENCIES.length);
    expect(KNOWN_CURRENCIES.length).toBeGreaterThan(150);
  });
});

describe('decimalToMinor', () => {
  it.each([
    ['1234.50', 'CHF', 123450],
    ['1234.5', 'CHF', 123450],
    ['1234', 'CHF', 123400],
    ['0.05', 'EUR', 5],
    ['0', 'CHF', 0],
    ['007.10', 'CHF', 710],
    ['1500', 'JPY', 1500],
    ['1.234', 'KWD', 1234],
    ['0.5', 'BHD', 500],
    ['1.2345', 'CLF', 12345],
    ['90071992547409.91', 'CHF', Number.MAX_SAFE_INTEGER],
  ])('accepts %s %s as %i minor units', (text, currency, minor) => {
    expect(decimalToMinor(text, currency)).toEqual({ ok: true, minor });
  });

  it.each([
    ['1.505', 'CHF', 'too_many_minor_digits'],
    ['1.500', 'CHF', 'too_many_minor_digits'],
    ['100.0', 'JPY', 'too_many_minor_digits'],
    ['1.2345', 'KWD', 'too_many_minor_digits'],
    ['', 'CHF', 'invalid_amount'],
    ['.5', 'CHF', 'invalid_amount'],
    ['5.', 'CHF', 'invalid_amount'],
    ['-1.00', 'CHF', 'invalid_amount'],
    ['+1.00', 'CHF', 'invalid_amount'],
    ['1e3', 'CHF', 'invalid_amount'],
    ['1,50', 'CHF', 'invalid_amount'],
    [' 1.50', 'CHF', 'invalid_amount'],
    ["1'000.00", 'CHF', 'invalid_amount'],
    ['1.2.3', 'CHF', 'invalid_amount'],
    ['١٢', 'CHF', 'invalid_amount'],
    ['90071992547409.92', 'CHF', 'amount_too_large'],
    ['1', 'ABC', 'unknown_currency'],
  ])('refuses %j %s: %s', (text, currency, code) => {
    expect(decimalToMinor(text, currency)).toMatchObject({ ok: false, code });
  });
});

describe('minorToDecimal', () => {
  it.each([
    [123450, 'CHF', '1234.50'],
    [5, 'CHF', '0.05'],
    [0, 'CHF', '0.00'],
    [1500, 'JPY', '1500'],
    [1, 'KWD', '0.001'],
    [12345, 'CLF', '1.2345'],
  ])('writes %i %s as %s', (minor, currency, text) => expect(minorToDecimal(minor, currency)).toBe(text));

  it('refuses what is not money', () => {
    expect(() => minorToDecimal(1.5, 'CHF')).toThrow(RangeError);
    expect(() => minorToDecimal(-1, 'CHF')).toThrow(RangeError);
    expect(() => minorToDecimal(1, 'XAU')).toThrow(RangeError);
  });
});

describe('round trips, for every exponent', () => {
  const currency = fc.constantFrom(...KNOWN_CURRENCIES);

  it('minor units → decimal → the same minor units', () => {
    fc.assert(
      fc.property(currency, fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (code, minor) => {
        const text = minorToDecimal(minor, code);
        expect(decimalToMinor(text, code)).toEqual({ ok: true, minor });
      }),
    );
  });

  it('a decimal with at most the currency digits → minor units → the same amount, padded', () => {
    const fraction = fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: 4 });
    fc.assert(
      fc.property(currency, fc.bigInt({ min: 0n, max: 10n ** 11n }), fraction, (code, whole, rawFraction) => {
        const digits = minorDigits(code) ?? 0;
        const places = rawFraction.slice(0, digits);
        const text = places === '' ? String(whole) : `${whole}.${places}`;
        const expected = whole * 10n ** BigInt(digits) + BigInt(places.padEnd(digits, '0') || '0');
        expect(decimalToMinor(text, code)).toEqual({ ok: true, minor: Number(expected) });
        const canonical = digits === 0 ? String(whole) : `${whole}.${places.padEnd(digits, '0')}`;
        expect(minorToDecimal(Number(expected), code)).toBe(canonical);
      }),
    );
  });

  it('one decimal place more than the currency has is refused', () => {
    fc.assert(
      fc.property(currency, fc.nat(), fc.integer({ min: 1, max: 9 }), (code, minor, extra) => {
        const text = `${minorToDecimal(minor, code)}${(minorDigits(code) ?? 0) === 0 ? '.' : ''}${extra}`;
        expect(decimalToMinor(text, code)).toMatchObject({ ok: false, code: 'too_many_minor_digits' });
      }),
    );
  });
});
