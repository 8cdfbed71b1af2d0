import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { AWKWARD_ZONES } from './awkward-zones';
import { dueAfter, dueOnOrAfter, latestDueBetween } from './due';
import { type Interval, KEYWORDS, type Keyword, parseInterval } from './interval';
import { addDays, maxDate } from './local-date';
import { localMidnight } from './zone';

/*
 * Property tests against a deliberately naive reference: a day-by-day predicate that knows nothing about the
 * implementation's month-by-month search or its arithmetic for keyword occurrences. Cron expressions are generated
 * from the field grammar together with the sets of values they mean, so the reference does not rely on the parser.
 */

// ---------------------------------------------------------------------------------------------------------------
// Generated cron fields and what they mean

interface FieldModel {
  readonly text: string;
  readonly values: ReadonlySet<number>;
  /** `L`: the last day of the month. */
  readonly last: boolean;
  /** Anything but a lone `*` or `?`. */
  readonly restricted: boolean;
}

interface CronModel {
  readonly dayOfMonth: FieldModel;
  readonly month: FieldModel;
  readonly dayOfWeek: FieldModel;
}

interface FieldGrammar {
  readonly min: number;
  readonly max: number;
  /** Where `*` and `a/n` end (day-of-week: 6, its 7 is only a Sunday alias). */
  readonly openMax: number;
  readonly names: readonly string[];
  readonly nameOffset: number;
  readonly allowsLast: boolean;
}

const DAY_OF_MONTH: FieldGrammar = { min: 1, max: 31, openMax: 31, names: [], nameOffset: 0, allowsLast: true };
const MONTH: FieldGrammar = {
  min: 1,
  max: 12,
  openMax: 12,
  names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
  nameOffset: 1,
  allowsLast: false,
};
const DAY_OF_WEEK: FieldGrammar = {
  min: 0,
  max: 7,
  openMax: 6,
  names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'],
  nameOffset: 0,
  allowsLast: false,
};

interface ElementModel {
  readonly text: string;
  readonly values: readonly number[];
  readonly last: boolean;
}

function stepped(start: number, end: number, step: number): number[] {
  const values: number[] = [];
  for (let value = start; value <= end; value += step) values.push(value);
  return values;
}

/** A value written as a number (sometimes zero-padded) or, where the field has names, as a name in random case. */
function valueText(grammar: FieldGrammar, value: number): fc.Arbitrary<string> {
  const spellings: fc.Arbitrary<string>[] = [fc.constant(String(value)), fc.constant(String(value).padStart(2, '0'))];
  const name = grammar.names[value - grammar.nameOffset];
  if (name !== undefined) {
    spellings.push(
      fc
        .array(fc.boolean(), { minLength: 3, maxLength: 3 })
        .map((upper) => [...name].map((char, i) => (upper[i] ? char : char.toLowerCase())).join('')),
    );
  }
  return fc.oneof(...spellings);
}

function elementModel(grammar: FieldGrammar): fc.Arbitrary<ElementModel> {
  const value = fc.integer({ min: grammar.min, max: grammar.max });
  const step = fc.integer({ min: 1, max: grammar.openMax + 2 });
  const bounds = fc.tuple(value, value).map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const);
  const element = (text: fc.Arbitrary<string>, values: readonly number[]) =>
    text.map((t) => ({ text: t, values, last: false }));
  const options: fc.Arbitrary<ElementModel>[] = [
    value.chain((v) => element(valueText(grammar, v), [v])),
    bounds.chain(([a, b]) =>
      element(
        fc.tuple(valueText(grammar, a), valueText(grammar, b)).map(([x, y]) => `${x}-${y}`),
        stepped(a, b, 1),
      ),
    ),
    fc.tuple(bounds, step).chain(([[a, b], n]) =>
      element(
        fc.tuple(valueText(grammar, a), valueText(grammar, b)).map(([x, y]) => `${x}-${y}/${n}`),
        stepped(a, b, n),
      ),
    ),
    fc.tuple(value, step).chain(([a, n]) =>
      element(
        valueText(grammar, a).map((x) => `${x}/${n}`),
        stepped(a, Math.max(a, grammar.openMax), n),
      ),
    ),
    step.map((n) => ({ text: `*/${n}`, values: stepped(grammar.min, grammar.openMax, n), last: false })),
  ];
  if (grammar.allowsLast) options.push(fc.constantFrom('L', 'l').map((text) => ({ text, values: [], last: true })));
  return fc.oneof(...options);
}

function fieldModel(grammar: FieldGrammar): fc.Arbitrary<FieldModel> {
  const everything = new Set(stepped(grammar.min, grammar.openMax, 1));
  const unrestricted = fc
    .constantFrom('*', '?')
    .map((text): FieldModel => ({ text, values: everything, last: false, restricted: false }));
  const list = fc.array(elementModel(grammar), { minLength: 1, maxLength: 3 }).map(
    (elements): FieldModel => ({
      text: elements.map((e) => e.text).join(','),
      values: new Set(elements.flatMap((e) => e.values)),
      last: elements.some((e) => e.last),
      restricted: true,
    }),
  );
  return fc.oneof(unrestricted, list);
}

const separator = fc.constantFrom(' ', '  ', '\t', ' \t ');
const cronModel: fc.Arbitrary<{ text: string; model: CronModel }> = fc
  .record({
    dayOfMonth: fieldModel(DAY_OF_MONTH),
    month: fieldModel(MONTH),
    dayOfWeek: fieldModel(DAY_OF_WEEK),
    gaps: fc.tuple(separator, separator),
  })
  .map(({ gaps, ...model }) => ({
    text: `${model.dayOfMonth.text}${gaps[0]}${model.month.text}${gaps[1]}${model.dayOfWeek.text}`,
    model,
  }));

/**
 * Late days of short months, where "never due" lives (`30 2 *`, `31 4,6,9,11 *`) next to leap-day-only and valid
 * expressions; the general generator almost never produces one.
 */
const lateDaysOfShortMonths: fc.Arbitrary<{ text: string; model: CronModel }> = fc
  .record({
    days: fc.subarray([29, 30, 31], { minLength: 1 }),
    months: fc.subarray([2, 4, 6, 9, 11], { minLength: 1 }),
    dayOfWeek: fc.constantFrom('*', '?'),
  })
  .map(({ days, months, dayOfWeek }) => ({
    text: `${days.join(',')} ${months.join(',')} ${dayOfWeek}`,
    model: {
      dayOfMonth: { text: days.join(','), values: new Set(days), last: false, restricted: true },
      month: { text: months.join(','), values: new Set(months), last: false, restricted: true },
      dayOfWeek: { text: dayOfWeek, values: new Set(stepped(0, 6, 1)), last: false, restricted: false },
    },
  }));

// ---------------------------------------------------------------------------------------------------------------
// The reference: does `date` match, looking at that day alone?

type Schedule = { kind: 'keyword'; keyword: Keyword } | { kind: 'cron'; model: CronModel };

function day(date: string): DateTime {
  return DateTime.fromISO(date, { zone: 'utc' });
}

function cronMatchesDay(model: CronModel, date: DateTime): boolean {
  if (!model.month.values.has(date.month)) return false;
  const byDayOfMonth =
    model.dayOfMonth.values.has(date.day) || (model.dayOfMonth.last && date.day === date.daysInMonth);
  const byDayOfWeek =
    model.dayOfWeek.values.has(date.weekday % 7) || (date.weekday === 7 && model.dayOfWeek.values.has(7));
  return model.dayOfMonth.restricted && model.dayOfWeek.restricted
    ? byDayOfMonth || byDayOfWeek
    : byDayOfMonth && byDayOfWeek;
}

const MONTHS_PER_PERIOD = { monthly: 1, quarterly: 3, semestral: 6, yearly: 12 } as const;

/** Occurrence k is the anchor + 7k days, or + k periods of months with the anchor's day clamped to the month. */
function keywordMatchesDay(keyword: Keyword, anchor: DateTime, date: DateTime): boolean {
  if (keyword === 'weekly') return date.diff(anchor, 'days').days % 7 === 0;
  const months = (date.year - anchor.year) * 12 + date.month - anchor.month;
  if (months % MONTHS_PER_PERIOD[keyword] !== 0) return false;
  return date.day === Math.min(anchor.day, date.daysInMonth ?? 0);
}

function matchesDay(schedule: Schedule, anchor: DateTime, date: DateTime): boolean {
  if (date < anchor) return false;
  return schedule.kind === 'cron'
    ? cronMatchesDay(schedule.model, date)
    : keywordMatchesDay(schedule.keyword, anchor, date);
}

function matches(schedule: Schedule, anchor: string, date: string): boolean {
  return matchesDay(schedule, day(anchor), day(date));
}

/** The reference's days in [from, to], looking at no more than `limit` days at each end of a long range. */
function matchingDaysBetween(schedule: Schedule, anchor: string, from: string, to: string, limit: number): string[] {
  const anchorDay = day(anchor);
  const last = day(to);
  const found: string[] = [];
  const scan = (first: DateTime, end: DateTime) => {
    for (let date = first; date <= end; date = date.plus({ days: 1 })) {
      if (matchesDay(schedule, anchorDay, date)) found.push(date.toISODate() ?? '');
    }
  };
  const headEnd = DateTime.min(day(from).plus({ days: limit - 1 }), last);
  scan(day(from), headEnd);
  scan(DateTime.max(last.minus({ days: limit - 1 }), headEnd.plus({ days: 1 })), last);
  return found;
}

/** Whether the expression matches any day at all: four years starting with a leap year meet every (month, day). */
function canEverMatch(model: CronModel): boolean {
  for (let date = day('2000-01-01'); date.year < 2004; date = date.plus({ days: 1 })) {
    if (cronMatchesDay(model, date)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------------------
// Inputs

const validCron = cronModel.filter(({ text }) => parseInterval(text).ok);
const schedules: fc.Arbitrary<{ interval: Interval; schedule: Schedule }> = fc.oneof(
  fc.constantFrom(...KEYWORDS).map((keyword) => ({
    interval: { kind: 'keyword', keyword, text: keyword } as const,
    schedule: { kind: 'keyword', keyword } as const,
  })),
  validCron.map(({ text, model }) => {
    const parsed = parseInterval(text);
    if (!parsed.ok) throw new Error('filtered out above');
    return { interval: parsed.interval, schedule: { kind: 'cron', model } as const };
  }),
);

const anyDay = fc.integer({ min: 0, max: 36_889 }).map((n) => addDays('1990-01-01', n)); // 1990-01-01 … 2090-12-31
/** Month ends and leap days are where month arithmetic goes wrong, so they are anchors often. */
const monthEnd = fc
  .tuple(fc.integer({ min: 1990, max: 2090 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 3 }))
  .map(([year, month, back]) => addDays(DateTime.utc(year, month, 1).endOf('month').toISODate() ?? '', -back));
const anchor = fc.oneof(anyDay, monthEnd);
const offset = fc.oneof(fc.integer({ min: -40, max: 40 }), fc.integer({ min: -400, max: 4000 }));

const ZONES = AWKWARD_ZONES;
const zone = fc.constantFrom(...ZONES);

/** Pacific/Apia has no 2011-12-30: it starts where 2011-12-31 starts, the one place instants may tie. */
function startsStrictlyBefore(earlier: string, later: string, z: string): boolean {
  const tie = z === 'Pacific/Apia' && earlier === '2011-12-30' && later === '2011-12-31';
  return tie
    ? localMidnight(earlier, z) === localMidnight(later, z)
    : localMidnight(earlier, z) < localMidnight(later, z);
}

const RUNS = { numRuns: 200 };
/** Days checked with the reference at each end of a gap between results. */
const SCAN = 200;

// ---------------------------------------------------------------------------------------------------------------

describe('due days against the day-by-day reference', () => {
  it('parses exactly the generated expressions that can ever match, into the sets they spell', () => {
    fc.assert(
      fc.property(fc.oneof(cronModel, lateDaysOfShortMonths), ({ text, model }) => {
        const result = parseInterval(text);
        expect(result.ok).toBe(canEverMatch(model));
        if (!result.ok) {
          expect(result.message).toMatch(/never due/);
          expect(result.position).toBe(0);
          return;
        }
        const sorted = (values: Iterable<number>) => [...new Set(values)].sort((a, b) => a - b);
        expect(result.interval).toEqual({
          kind: 'cron',
          text,
          daysOfMonth: sorted(model.dayOfMonth.values),
          lastDayOfMonth: model.dayOfMonth.last,
          months: sorted(model.month.values),
          daysOfWeek: sorted([...model.dayOfWeek.values].map((weekday) => weekday % 7)),
          dayOfMonthRestricted: model.dayOfMonth.restricted,
          dayOfWeekRestricted: model.dayOfWeek.restricted,
        });
      }),
      { numRuns: 300 },
    );
  });

  it('dueAfter walks strictly increasing matching days without skipping one, each its own dueOnOrAfter', () => {
    fc.assert(
      fc.property(schedules, anchor, offset, zone, ({ interval, schedule }, a, shift, z) => {
        const from = addDays(a, shift);
        const first = dueOnOrAfter(interval, a, from);
        if (first === undefined) throw new Error('a parsed interval is always due again');
        const start = maxDate(from, a);
        expect(first >= start).toBe(true);
        expect(matchingDaysBetween(schedule, a, start, addDays(first, -1), SCAN)).toEqual([]);

        let previous = first;
        for (let step = 0; step < 6; step++) {
          expect(matches(schedule, a, previous)).toBe(true);
          expect(dueOnOrAfter(interval, a, previous)).toBe(previous);
          expect(latestDueBetween(interval, a, previous, previous)).toBe(previous);
          const next = dueAfter(interval, a, previous);
          if (next === undefined) throw new Error('a parsed interval is always due again');
          expect(next > previous).toBe(true);
          expect(startsStrictlyBefore(previous, next, z)).toBe(true);
          expect(matchingDaysBetween(schedule, a, addDays(previous, 1), addDays(next, -1), SCAN)).toEqual([]);
          previous = next;
        }
      }),
      RUNS,
    );
  });

  it('dueOnOrAfter is on or after both `from` and the anchor; dueAfter is after its day; both match', () => {
    fc.assert(
      fc.property(schedules, anchor, offset, ({ interval, schedule }, a, shift) => {
        const from = addDays(a, shift);
        const onOrAfter = dueOnOrAfter(interval, a, from);
        const after = dueAfter(interval, a, from);
        if (onOrAfter === undefined || after === undefined) throw new Error('a parsed interval is always due again');
        expect(onOrAfter >= from && onOrAfter >= a).toBe(true);
        expect(after > from && after >= a).toBe(true);
        expect(matches(schedule, a, onOrAfter)).toBe(true);
        expect(matches(schedule, a, after)).toBe(true);
        expect(after).toBe(matches(schedule, a, from) ? dueOnOrAfter(interval, a, addDays(from, 1)) : onOrAfter);
      }),
      RUNS,
    );
  });

  it('latestDueBetween is the last reference day in [max(from, anchor), until]', () => {
    fc.assert(
      fc.property(
        schedules,
        anchor,
        offset,
        fc.integer({ min: -3, max: 2 * SCAN }),
        ({ interval, schedule }, a, shift, length) => {
          const from = addDays(a, shift);
          const until = addDays(from, length);
          const lower = maxDate(from, a);
          const expected = matchingDaysBetween(schedule, a, lower, until, SCAN).at(-1);
          expect(latestDueBetween(interval, a, from, until)).toBe(expected);
        },
      ),
      RUNS,
    );
  });

  it('latestDueBetween over long windows is a due day with nothing due after it up to `until`', () => {
    fc.assert(
      fc.property(
        schedules,
        anchor,
        offset,
        fc.integer({ min: 0, max: 30 * 366 }),
        ({ interval, schedule }, a, shift, length) => {
          const from = addDays(a, shift);
          const until = addDays(from, length);
          const lower = maxDate(from, a);
          const latest = latestDueBetween(interval, a, from, until);
          if (latest === undefined) {
            expect((dueOnOrAfter(interval, a, lower) ?? '') > until).toBe(true);
            return;
          }
          expect(latest >= lower && latest <= until).toBe(true);
          expect(matches(schedule, a, latest)).toBe(true);
          expect((dueAfter(interval, a, latest) ?? '') > until).toBe(true);
        },
      ),
      RUNS,
    );
  });
});
