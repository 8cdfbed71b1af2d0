import { dueAfter, dueOnOrAfter } from './due';
import type { Interval, Keyword } from './interval';
import { addMonthsClamped, type LocalDate } from './local-date';

/** Months between occurrences of each keyword (weekly: less than one). */
const KEYWORD_MONTHS: Readonly<Record<Keyword, number>> = {
  weekly: 0,
  monthly: 1,
  quarterly: 3,
  semestral: 6,
  yearly: 12,
};

/**
 * The years a cron expression is checked over. Without a day-of-week field, a year's due days
 * depend only on whether it is a leap year (February 29, and `L` in February), so every kind of
 * step from one year into the next (common to common, common to leap, leap to common) is among
 * these; a step across more years (`29 2 *`) is only longer. 2100 is a common year like any other.
 */
const CHECK_FROM: LocalDate = '2001-01-01';
const CHECK_UNTIL: LocalDate = '2009-12-31';

/**
 * Whether every due day of the interval is at least `months` calendar months after the one before
 * it (the next due day on or after the previous one plus `months`, clamped to the month's end as
 * keywords are: Aug 31 + 6 months is Feb 28). `semestral` and `yearly` are 6 months apart or more,
 * and so are cron expressions such as `1 1,7 *`, `L 2,8 *` or `29 2 *`; `1 1,6 *` (5 months, then
 * 7) is not. `months` is at least 1: a restricted day of the week matches at least four times in
 * every month it is allowed in.
 */
export function dueAtLeastMonthsApart(interval: Interval, months: number): boolean {
  if (!Number.isInteger(months) || months < 1) throw new RangeError('months must be a whole number of at least 1');
  if (interval.kind === 'keyword') return KEYWORD_MONTHS[interval.keyword] >= months;
  if (interval.dayOfWeekRestricted) return false;
  let day = dueOnOrAfter(interval, CHECK_FROM, CHECK_FROM);
  while (day !== undefined && day <= CHECK_UNTIL) {
    const next = dueAfter(interval, CHECK_FROM, day);
    if (next !== undefined && next < addMonthsClamped(day, months)) return false;
    day = next;
  }
  return true;
}
