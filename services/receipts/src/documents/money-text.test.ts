import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { germanAmountInWords, germanCardinal } from './amount-in-words';
import { decimalString, formatMoney, formatNumber, type MoneyStyle } from './money-text';

const exponent = fc.constantFrom(0, 2, 3);
/** Any whole number of minor units: the safe integers a receipt holds, and far beyond as bigints. */
const minorUnits = fc.oneof(
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  fc.bigInt({ min: 0n, max: 10n ** 40n }),
);

/** The value a decimal string names, read back with integers only. */
function readDecimal(decimal: string, scale: number): bigint {
  const [major = '', fraction = ''] = decimal.split('.');
  expect(fraction).toHaveLength(scale);
  return BigInt(major) * 10n ** BigInt(scale) + BigInt(fraction || '0');
}

const SEPARATORS: Record<MoneyStyle, { group: string; decimal: string }> = {
  'de-DE': { group: '.', decimal: ',' },
  'de-CH': { group: '’', decimal: '.' },
  'en-GB': { group: ',', decimal: '.' },
};

describe('amounts from minor units', () => {
  it('print exactly the integer they are given, at exponent 0, 2 and 3', () => {
    fc.assert(
      fc.property(minorUnits, exponent, (minor, scale) => {
        const decimal = decimalString(minor, scale);
        expect(readDecimal(decimal, scale)).toBe(BigInt(minor));
        expect(decimal).toMatch(/^(0|[1-9]\d*)(\.\d+)?$/);
      }),
      { numRuns: 2000 },
    );
  });

  it('keep every digit in every style, grouped by threes from the right', () => {
    const style = fc.constantFrom<MoneyStyle>('de-DE', 'de-CH', 'en-GB');
    fc.assert(
      fc.property(minorUnits, exponent, style, (minor, scale, chosen) => {
        const { group, decimal } = SEPARATORS[chosen];
        const printed = formatNumber(minor, scale, chosen);
        const [major = '', fraction] = printed.split(decimal);
        expect(major.split(group).every((part, index) => (index === 0 ? /^\d{1,3}$/ : /^\d{3}$/).test(part))).toBe(
          true,
        );
        expect(
          readDecimal(`${major.split(group).join('')}${fraction === undefined ? '' : `.${fraction}`}`, scale),
        ).toBe(BigInt(minor));
      }),
      { numRuns: 2000 },
    );
  });

  it('match the platform’s own German number format where floating point is still exact', () => {
    // Below 2^53 / 100 a division by 100 is correctly rounded to two places by Intl.
    const german = new Intl.NumberFormat('de-DE', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 13 }), (minor) => {
        expect(formatNumber(minor, 2, 'de-DE')).toBe(german.format(minor / 100));
      }),
      { numRuns: 1000 },
    );
  });

  it('carry each currency as its receipt writes it, with the currency’s own exponent', () => {
    expect(formatMoney(123456, 'EUR', 'de-DE')).toBe('1.234,56 €');
    expect(formatMoney(123456, 'CHF', 'de-CH')).toBe('CHF 1’234.56');
    expect(formatMoney(123456, 'GBP', 'en-GB')).toBe('£1,234.56');
    expect(formatMoney(123456, 'JPY', 'en-GB')).toBe('JPY 123,456');
    expect(formatMoney(123456, 'KWD', 'de-CH')).toBe('KWD 123.456');
    expect(formatMoney(5, 'EUR', 'de-DE')).toBe('0,05 €');
    expect(formatMoney(Number.MAX_SAFE_INTEGER, 'EUR', 'de-DE')).toBe('90.071.992.547.409,91 €');
    expect(() => formatMoney(100, 'XAU', 'de-DE')).toThrow(RangeError);
    expect(() => formatMoney(-1, 'EUR', 'de-DE')).toThrow(RangeError);
    expect(() => formatMoney(0.5, 'EUR', 'de-DE')).toThrow(RangeError);
  });
});

/**
 * German number words read back into numbers, by rules written here (not n2words'): units,
 * teens, tens, "<unit>und<tens>", hundreds, thousands, then Millionen and Milliarden as words of
 * their own. Enough to prove that the words state the figure.
 */
const UNITS = ['', 'ein', 'zwei', 'drei', 'vier', 'fünf', 'sechs', 'sieben', 'acht', 'neun'];
const TEENS = [
  'zehn',
  'elf',
  'zwölf',
  'dreizehn',
  'vierzehn',
  'fünfzehn',
  'sechzehn',
  'siebzehn',
  'achtzehn',
  'neunzehn',
];
const TENS = ['', '', 'zwanzig', 'dreißig', 'vierzig', 'fünfzig', 'sechzig', 'siebzig', 'achtzig', 'neunzig'];

const BELOW_HUNDRED = new Map<string, number>([
  ['', 0],
  ['eins', 1],
  ['ein', 1],
  ['eine', 1],
]);
for (let n = 2; n < 10; n += 1) BELOW_HUNDRED.set(UNITS[n] ?? '', n);
TEENS.forEach((word, index) => {
  BELOW_HUNDRED.set(word, 10 + index);
});
for (let tens = 2; tens < 10; tens += 1) {
  BELOW_HUNDRED.set(TENS[tens] ?? '', tens * 10);
  for (let unit = 1; unit < 10; unit += 1) BELOW_HUNDRED.set(`${UNITS[unit]}und${TENS[tens]}`, tens * 10 + unit);
}

function belowThousand(words: string): number {
  const match = /^(?:(ein|zwei|drei|vier|fünf|sechs|sieben|acht|neun)hundert)?(.*)$/.exec(words);
  const hundreds = match?.[1] ? UNITS.indexOf(match[1]) : 0;
  const rest = BELOW_HUNDRED.get(match?.[2] ?? 'x');
  if (rest === undefined) throw new Error(`Not a German number below 1000: ${words}`);
  return hundreds * 100 + rest;
}

function belowMillion(words: string): number {
  const at = words.indexOf('tausend');
  if (at < 0) return belowThousand(words);
  return belowThousand(words.slice(0, at)) * 1000 + belowThousand(words.slice(at + 'tausend'.length));
}

function readGermanNumber(words: string): bigint {
  const scales: Record<string, bigint> = {
    Million: 10n ** 6n,
    Millionen: 10n ** 6n,
    Milliarde: 10n ** 9n,
    Milliarden: 10n ** 9n,
  };
  const tokens = words.split(' ');
  let total = 0n;
  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index] ?? '';
    const scale = scales[tokens[index + 1] ?? ''];
    if (scale) {
      total += BigInt(belowMillion(token)) * scale;
      index += 1;
    } else {
      total += BigInt(belowMillion(token));
    }
  }
  return total;
}

describe('the German amount in words', () => {
  it('spells known numbers as German writes them', () => {
    expect(germanCardinal(1n)).toBe('eins');
    expect(germanCardinal(21n)).toBe('einundzwanzig');
    expect(germanCardinal(1000n)).toBe('eintausend');
    expect(germanCardinal(1_000_000n)).toBe('eine Million');
    expect(germanAmountInWords(123456, 'EUR')).toBe('eintausendzweihundertvierunddreißig Euro sechsundfünfzig Cent');
    // Exactly one before a noun is "ein"; larger numbers keep the cardinal.
    expect(germanAmountInWords(100, 'EUR')).toBe('ein Euro');
    expect(germanAmountInWords(101, 'EUR')).toBe('ein Euro ein Cent');
    expect(germanAmountInWords(10100, 'EUR')).toBe('einhunderteins Euro');
    expect(germanAmountInWords(2100, 'EUR')).toBe('einundzwanzig Euro');
    expect(germanAmountInWords(100_000_000, 'EUR')).toBe('eine Million Euro');
    expect(germanAmountInWords(5, 'EUR')).toBe('null Euro fünf Cent');
    expect(germanAmountInWords(0, 'EUR')).toBe('null Euro');
    expect(germanAmountInWords(250, 'CHF')).toBe('zwei Franken fünfzig Rappen');
    expect(germanAmountInWords(1056, 'USD')).toBe('zehn USD 56/100');
  });

  it('reads back as the figure it states, euros and cents, up to a hundred billion euros', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 11n - 1n }), fc.integer({ min: 0, max: 99 }), (euros, cents) => {
        const words = germanAmountInWords(euros * 100n + BigInt(cents), 'EUR');
        const match = /^(.+) Euro(?: (.+) Cent)?$/.exec(words);
        expect(match).not.toBeNull();
        expect(readGermanNumber(match?.[1] ?? '')).toBe(euros);
        expect(match?.[2] === undefined ? 0 : belowThousand(match[2])).toBe(cents);
        expect(words).not.toMatch(/\d/);
      }),
      { numRuns: 2000 },
    );
  });
});
