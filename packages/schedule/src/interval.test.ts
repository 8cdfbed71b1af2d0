import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CronInterval, KEYWORDS, parseInterval } from './interval';

function parseCron(text: string): CronInterval {
  const result = parseInterval(text);
  if (!result.ok) throw new Error(`${text}: ${result.message} at ${result.position}`);
  if (result.interval.kind !== 'cron') throw new Error(`${text} parsed as a keyword`);
  return result.interval;
}

const everyDay = Array.from({ length: 31 }, (_, i) => i + 1);
const everyMonth = Array.from({ length: 12 }, (_, i) => i + 1);
const everyWeekday = [0, 1, 2, 3, 4, 5, 6];

describe('parseInterval: keywords', () => {
  it('accepts the five keywords exactly as written', () => {
    for (const keyword of KEYWORDS) {
      expect(parseInterval(keyword)).toEqual({ ok: true, interval: { kind: 'keyword', keyword, text: keyword } });
    }
  });

  it('reads anything else as cron, pointing out a mis-cased or padded keyword', () => {
    expect(parseInterval('Monthly')).toMatchObject({
      ok: false,
      position: 0,
      message: expect.stringContaining("'monthly'"),
    });
    expect(parseInterval('  weekly ')).toMatchObject({ ok: false, position: 2 });
    expect(parseInterval('daily')).toMatchObject({ ok: false, message: expect.stringContaining('keyword') });
  });
});

describe('parseInterval: cron', () => {
  it('expands each field to the days, months and weekdays it names', () => {
    expect(parseCron('1 * *')).toEqual({
      kind: 'cron',
      text: '1 * *',
      daysOfMonth: [1],
      lastDayOfMonth: false,
      months: everyMonth,
      daysOfWeek: everyWeekday,
      dayOfMonthRestricted: true,
      dayOfWeekRestricted: false,
    });
    expect(parseCron('15 3,6,9,12 *')).toMatchObject({ daysOfMonth: [15], months: [3, 6, 9, 12] });
    expect(parseCron('L * *')).toMatchObject({ daysOfMonth: [], lastDayOfMonth: true, dayOfMonthRestricted: true });
    expect(parseCron('15,l * *')).toMatchObject({ daysOfMonth: [15], lastDayOfMonth: true });
    expect(parseCron('* * 1')).toMatchObject({ daysOfMonth: everyDay, daysOfWeek: [1], dayOfMonthRestricted: false });
    expect(parseCron('1-7 * 1')).toMatchObject({
      daysOfMonth: [1, 2, 3, 4, 5, 6, 7],
      daysOfWeek: [1],
      dayOfMonthRestricted: true,
      dayOfWeekRestricted: true,
    });
    expect(parseCron('? ? ?')).toMatchObject({ dayOfMonthRestricted: false, dayOfWeekRestricted: false });
  });

  it('supports steps over *, ranges and open ranges', () => {
    expect(parseCron('*/10 * *').daysOfMonth).toEqual([1, 11, 21, 31]);
    expect(parseCron('5-20/5 * *').daysOfMonth).toEqual([5, 10, 15, 20]);
    expect(parseCron('25/2 * *').daysOfMonth).toEqual([25, 27, 29, 31]);
    expect(parseCron('1 */4 *').months).toEqual([1, 5, 9]);
    expect(parseCron('1 FEB/3 *').months).toEqual([2, 5, 8, 11]);
    expect(parseCron('* * */2').daysOfWeek).toEqual([0, 2, 4, 6]);
    expect(parseCron('* * 1/2').daysOfWeek).toEqual([1, 3, 5]);
    expect(parseCron('*/1 * *')).toMatchObject({ daysOfMonth: everyDay, dayOfMonthRestricted: true });
  });

  it('reads month and weekday names in any case, and 0 and 7 both as Sunday', () => {
    expect(parseCron('* JAN-MAR MON-FRI')).toMatchObject({ months: [1, 2, 3], daysOfWeek: [1, 2, 3, 4, 5] });
    expect(parseCron('* jan-Mar mon-fri')).toMatchObject({ months: [1, 2, 3], daysOfWeek: [1, 2, 3, 4, 5] });
    expect(parseCron('* dec,Jan sat,SUN').daysOfWeek).toEqual([0, 6]);
    expect(parseCron('* * 7').daysOfWeek).toEqual([0]);
    expect(parseCron('* * 5-7').daysOfWeek).toEqual([0, 5, 6]);
    expect(parseCron('* * 0-7').daysOfWeek).toEqual(everyWeekday);
  });

  it('splits fields on runs of spaces and tabs and ignores surrounding whitespace, keeping the text as given', () => {
    const text = ' \t1\t\t* \t MON \n';
    expect(parseCron(text)).toMatchObject({ text, daysOfMonth: [1], daysOfWeek: [1] });
  });

  it('accepts February 29, which is due in leap years only', () => {
    expect(parseCron('29 2 *')).toMatchObject({ daysOfMonth: [29], months: [2] });
    expect(parseCron('30,31 1-2 *')).toMatchObject({ daysOfMonth: [30, 31], months: [1, 2] });
  });
});

describe('parseInterval: errors point at the offending character', () => {
  const cases: [input: string, position: number, message: RegExp][] = [
    ['', 0, /empty/],
    ['   ', 0, /empty/],
    ['1 *', 3, /found 2 fields/],
    ['  15', 4, /found 1 field/],
    ['0 0 1 * *', 6, /found 5 fields.*minute and hour/],
    ['1 * * *', 6, /found 4 fields/],
    ['X * *', 0, /Unknown day-of-month token 'X'/],
    ['1 * FUNDAY', 4, /Unknown day-of-week token 'FUNDAY'/],
    ['1 JUNE *', 2, /Unknown month token 'JUNE'/],
    ['15W * *', 0, /Unknown day-of-month token '15W'/],
    ['1 * 5#3', 4, /Unknown day-of-week token '5#3'/],
    ['1 L *', 2, /Unknown month token 'L'/],
    ['1-2-3 * *', 2, /Unknown day-of-month token '2-3'/],
    ['32 * *', 0, /Day-of-month value 32 is out of range \(1–31\)/],
    ['0 * *', 0, /Day-of-month value 0 is out of range/],
    ['1 13 *', 2, /Month value 13 is out of range \(1–12\)/],
    ['1 0 *', 2, /Month value 0 is out of range/],
    ['* * 8', 4, /Day-of-week value 8 is out of range \(0–7\)/],
    ['1,40 * *', 2, /value 40 is out of range/],
    ['5-1 * *', 0, /range 5-1 is reversed/],
    ['1 * FRI-MON', 4, /range FRI-MON is reversed/],
    ['1 12-1 *', 2, /range 12-1 is reversed/],
    ['*/0 * *', 2, /step must be at least 1/],
    ['1 1-12/0 *', 7, /step must be at least 1/],
    ['*/ * *', 2, /step after '\/' must be a whole number/],
    ['*/x * *', 2, /step after '\/' must be a whole number/],
    ['1,,2 * *', 2, /Empty element in the day-of-month list/],
    [',1 * *', 0, /Empty element/],
    ['1, * *', 2, /Empty element/],
    ['1 * MON,', 8, /Empty element in the day-of-week list/],
    ['L/2 * *', 0, /'L' cannot take a step/],
    ['L-5 * *', 0, /'L' cannot be part of a range/],
    ['? ?,1 *', 2, /'\?' must stand alone/],
    ['30 2 *', 0, /never due/],
    ['31 4,6,9,11 *', 0, /never due/],
    ['  30,31 FEB ?', 2, /never due/],
  ];

  it.each(cases)('%j fails at %i', (input, position, message) => {
    const result = parseInterval(input);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.position).toBe(position);
    expect(result.message).toMatch(message);
  });
});

describe('parseInterval (properties)', () => {
  const cronAlphabet = fc.constantFrom(...'0123456789*?/,-LlJANFEBMONSUW \t'.split(''));
  const inputs = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.string({ unit: cronAlphabet, maxLength: 24 }),
    fc.constantFrom(...KEYWORDS),
  );

  it('never throws, keeps the text exactly and reports positions inside the input', () => {
    fc.assert(
      fc.property(inputs, (text) => {
        const result = parseInterval(text);
        if (result.ok) {
          expect(result.interval.text).toBe(text);
        } else {
          expect(result.message.length).toBeGreaterThan(0);
          expect(result.position).toBeGreaterThanOrEqual(0);
          expect(result.position).toBeLessThanOrEqual(text.length);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
