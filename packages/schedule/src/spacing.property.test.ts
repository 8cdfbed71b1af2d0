import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dueAfter, dueOnOrAfter } from './due';
import { type Interval, KEYWORDS, parseInterval } from './interval';
import { addDays, daysBetween, type LocalDate } from './local-date';
import { dueAtLeastMonthsApart } from './spacing';

/*
 * Which intervals are charged every 6 months or less often (a charge reminder goes to those, contract section 12).
 * The properties hold the answer against the due days themselves, counted in days: six calendar months are 181 to
 * 184 days, so an interval that qualifies never has two due days fewer than 181 days apart, and one that does not
 * has, within any ten years, two consecutive due days at most 183 days apart.
 */

const parsed = (text: string): Interval => {
  const result = parseInterval(text);
  if (!result.ok) throw new Error(`${text}: ${result.message}`);
  return result.interval;
};

/** Sparse cron expressions (few days, few months) mostly, where both answers are common. */
const cronText: fc.Arbitrary<string> = fc
  .record({
    days: fc.oneof(
      fc.integer({ min: 1, max: 31 }).map(String),
      fc.constant('L'),
      fc.uniqueArray(fc.integer({ min: 1, max: 31 }), { minLength: 1, maxLength: 2 }).map((d) => d.join(',')),
      fc.constantFrom('L,28', '29', '30,31', '*'),
    ),
    months: fc.oneof(
      fc.uniqueArray(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 3 }).map((m) => m.join(',')),
      fc.integer({ min: 1, max: 12 }).map((n) => `*/${n}`),
      fc.tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 12 })).map(([a, n]) => `${a}/${n}`),
      fc.constant('*'),
    ),
    weekday: fc.oneof({ weight: 5, arbitrary: fc.constantFrom('*', '?') }, fc.integer({ min: 0, max: 7 }).map(String)),
  })
  .map(({ days, months, weekday }) => `${days} ${months} ${weekday}`)
  .filter((text) => parseInterval(text).ok);

const intervalText = fc.oneof(fc.constantFrom(...KEYWORDS), cronText);
const year = fc.integer({ min: 2000, max: 2380 });
const dayOfYear = fc.integer({ min: 0, max: 364 });
const dateIn = (y: number, offset: number): LocalDate => addDays(`${y}-01-01`, offset);

/** The due days from `from` on, `count` of them at most (none before the anchor). */
function dueDays(interval: Interval, anchor: LocalDate, from: LocalDate, until: LocalDate): LocalDate[] {
  const days: LocalDate[] = [];
  let day = dueOnOrAfter(interval, anchor, from);
  while (day !== undefined && day <= until) {
    days.push(day);
    day = dueAfter(interval, anchor, day);
  }
  if (day !== undefined) days.push(day);
  return days;
}

const gaps = (days: readonly LocalDate[]) => days.slice(1).map((day, i) => daysBetween(days[i] as LocalDate, day));

describe('dueAtLeastMonthsApart (property)', () => {
  it('an interval 6 months apart or more never has two due days fewer than 181 days apart', () => {
    fc.assert(
      fc.property(intervalText, year, dayOfYear, dayOfYear, (text, y, anchorOffset, fromOffset) => {
        const interval = parsed(text);
        fc.pre(dueAtLeastMonthsApart(interval, 6));
        const anchor = dateIn(y, anchorOffset);
        const from = dateIn(y, fromOffset);
        const days = dueDays(interval, anchor, from, dateIn(y + 10, 0));
        for (const gap of gaps(days))
          expect(gap, `${text} from ${anchor}: ${days.join(' ')}`).toBeGreaterThanOrEqual(181);
      }),
      { numRuns: 300 },
    );
  });

  it('any other interval has two consecutive due days at most 183 days apart within any ten years', () => {
    fc.assert(
      fc.property(intervalText, year, dayOfYear, (text, y, offset) => {
        const interval = parsed(text);
        fc.pre(!dueAtLeastMonthsApart(interval, 6));
        const anchor = dateIn(y, offset);
        const days = dueDays(interval, anchor, anchor, dateIn(y + 10, offset));
        expect(Math.min(...gaps(days)), `${text} from ${anchor}: ${days.slice(0, 30).join(' ')}`).toBeLessThanOrEqual(
          183,
        );
      }),
      { numRuns: 300 },
    );
  });

  it('a yearly rule is 12 months apart, a six-monthly one not: the answer follows the months asked for', () => {
    fc.assert(
      fc.property(intervalText, fc.integer({ min: 1, max: 12 }), (text, months) => {
        const interval = parsed(text);
        // Further apart is harder to be: an interval n months apart is also apart by anything less.
        if (dueAtLeastMonthsApart(interval, months)) {
          for (let fewer = 1; fewer < months; fewer++) expect(dueAtLeastMonthsApart(interval, fewer)).toBe(true);
        }
      }),
    );
  });
});

describe('dueAtLeastMonthsApart (examples)', () => {
  it.each([
    ['semestral', true],
    ['yearly', true],
    ['quarterly', false],
    ['monthly', false],
    ['weekly', false],
    ['1 1,7 *', true],
    ['15 */6 *', true],
    ['L 2,8 *', true],
    ['31 1,7 *', true],
    ['29 2 *', true],
    ['31 3,9 *', true],
    ['1 1 *', true],
    ['1 1,6 *', false],
    ['L,28 2 *', false],
    ['1,15 1 *', false],
    ['1 1 MON', false],
    ['* 1 *', false],
    ['1 * *', false],
  ])('%s: %s', (text, expected) => {
    expect(dueAtLeastMonthsApart(parsed(text), 6)).toBe(expected);
  });

  it('refuses a number of months below one', () => {
    expect(() => dueAtLeastMonthsApart(parsed('yearly'), 0)).toThrow(RangeError);
  });
});
