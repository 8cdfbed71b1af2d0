import type { CronInterval } from './interval';
import {
  cronWeekday,
  type DateParts,
  daysInMonth,
  formatLocalDate,
  type LocalDate,
  monthOfOrdinal,
  monthOrdinal,
} from './local-date';

/**
 * How far a search looks: the start month plus ten full years. Every parsed expression is due at least every
 * 8 years (February 29 across 2100), so within this horizon a search only comes back empty for impossible input.
 */
export const SEARCH_HORIZON_MONTHS = 10 * 12 + 1;

/** Listed days that this month has, plus its last day for `L`. */
function dayOfMonthMatches(cron: CronInterval, monthLength: number): number[] {
  const days = cron.daysOfMonth.filter((day) => day <= monthLength);
  if (cron.lastDayOfMonth && !days.includes(monthLength)) days.push(monthLength);
  return days;
}

/** Every day of the month that falls on a listed weekday, stepping a week at a time from the first one. */
function dayOfWeekMatches(cron: CronInterval, year: number, month: number, monthLength: number): number[] {
  const weekdayOfFirst = cronWeekday({ year, month, day: 1 });
  const days: number[] = [];
  for (const weekday of cron.daysOfWeek) {
    for (let day = 1 + ((weekday - weekdayOfFirst + 7) % 7); day <= monthLength; day += 7) days.push(day);
  }
  return days;
}

/**
 * The due days of one month, ascending. Vixie rule: with both day fields restricted either may match; otherwise the
 * restricted one decides, and with neither restricted the day-of-month list already holds every day.
 */
export function dueDaysInMonth(cron: CronInterval, year: number, month: number): number[] {
  if (!cron.months.includes(month)) return [];
  const monthLength = daysInMonth(year, month);
  const byDayOfMonth = () => dayOfMonthMatches(cron, monthLength);
  const byDayOfWeek = () => dayOfWeekMatches(cron, year, month, monthLength);
  let days: number[];
  if (cron.dayOfMonthRestricted && cron.dayOfWeekRestricted) days = [...new Set([...byDayOfMonth(), ...byDayOfWeek()])];
  else if (cron.dayOfWeekRestricted) days = byDayOfWeek();
  else days = byDayOfMonth();
  return days.sort((a, b) => a - b);
}

/** The first due day on or after `start`, looking month by month over the search horizon. */
export function cronFirstOnOrAfter(cron: CronInterval, start: DateParts): LocalDate | undefined {
  const first = monthOrdinal(start);
  for (let ordinal = first; ordinal < first + SEARCH_HORIZON_MONTHS; ordinal++) {
    const { year, month } = monthOfOrdinal(ordinal);
    const earliest = ordinal === first ? start.day : 1;
    const day = dueDaysInMonth(cron, year, month).find((candidate) => candidate >= earliest);
    if (day !== undefined) return formatLocalDate({ year, month, day });
  }
  return undefined;
}

/**
 * The last due day in [lower, upper], looking month by month backwards from `upper`. It never needs more than the
 * search horizon: a longer range is sure to hold a due day within its last ten years.
 */
export function cronLastBetween(cron: CronInterval, lower: DateParts, upper: DateParts): LocalDate | undefined {
  const last = monthOrdinal(upper);
  const stop = Math.max(monthOrdinal(lower), last - SEARCH_HORIZON_MONTHS + 1);
  for (let ordinal = last; ordinal >= stop; ordinal--) {
    const { year, month } = monthOfOrdinal(ordinal);
    const latest = ordinal === last ? upper.day : 31;
    const earliest = ordinal === monthOrdinal(lower) ? lower.day : 1;
    const day = dueDaysInMonth(cron, year, month).findLast((candidate) => candidate >= earliest && candidate <= latest);
    if (day !== undefined) return formatLocalDate({ year, month, day });
  }
  return undefined;
}
