import { DateTime } from 'luxon';

/**
 * A calendar day without a time or a zone, written `YYYY-MM-DD`. Due days are calendar days in the subscription's
 * zone; only `localMidnight` turns one into an instant. Strings of this shape sort chronologically, so plain string
 * comparison orders them.
 */
export type LocalDate = string;

/** A calendar day split into numbers (month 1–12, day 1–31). */
export interface DateParts {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

const LOCAL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * Calendar arithmetic runs in UTC: the UTC zone has no DST, so "plus one day" is always one calendar day and the
 * result never depends on the machine's zone.
 */
function calendarDay(parts: DateParts): DateTime {
  return DateTime.utc(parts.year, parts.month, parts.day);
}

/** Formats a luxon day as a LocalDate, refusing anything outside the four-digit years a LocalDate can spell. */
function toLocalDate(day: DateTime): LocalDate {
  const iso = day.isValid ? day.toISODate() : null;
  if (iso === null || !LOCAL_DATE.test(iso)) throw new RangeError(`Not a calendar day in years 0000–9999: ${iso}`);
  return iso;
}

/** Strict `YYYY-MM-DD` that names a real calendar day (`2023-02-29` is refused), else undefined. */
export function parseLocalDate(text: string): LocalDate | undefined {
  const match = LOCAL_DATE.exec(text);
  if (match === null) return undefined;
  const parts = { year: Number(match[1]), month: Number(match[2]), day: Number(match[3]) };
  return calendarDay(parts).isValid ? text : undefined;
}

/**
 * Splits a LocalDate into numbers. Throws a RangeError for anything `parseLocalDate` would refuse: the schedule
 * functions take dates that were validated at the edge, so a bad one here is a programming error, not user input.
 */
export function dateParts(date: LocalDate): DateParts {
  const parsed = parseLocalDate(date);
  const match = parsed === undefined ? null : LOCAL_DATE.exec(parsed);
  if (match === null) throw new RangeError(`Not a YYYY-MM-DD calendar day: ${JSON.stringify(date)}`);
  return { year: Number(match[1]), month: Number(match[2]), day: Number(match[3]) };
}

export function formatLocalDate(parts: DateParts): LocalDate {
  return toLocalDate(calendarDay(parts));
}

/** The day `days` calendar days after (or, negative, before) `date`. */
export function addDays(date: LocalDate, days: number): LocalDate {
  return toLocalDate(calendarDay(dateParts(date)).plus({ days }));
}

/**
 * `date` plus whole months, clamped to the last day of the target month (Jan 31 + 1 month = Feb 28/29). Always
 * counted from the given date, never chained, so a Jan 31 anchor comes back to Mar 31 after Feb 28.
 */
export function addMonthsClamped(date: LocalDate, months: number): LocalDate {
  return toLocalDate(calendarDay(dateParts(date)).plus({ months }));
}

/** Whole calendar days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: LocalDate, to: LocalDate): number {
  return Math.round(calendarDay(dateParts(to)).diff(calendarDay(dateParts(from)), 'days').days);
}

export function daysInMonth(year: number, month: number): number {
  const days = calendarDay({ year, month, day: 1 }).daysInMonth;
  if (days === undefined) throw new RangeError(`Not a month: ${year}-${month}`);
  return days;
}

/** Day of the week in cron numbering: 0 = Sunday … 6 = Saturday (luxon counts 1 = Monday … 7 = Sunday). */
export function cronWeekday(parts: DateParts): number {
  return calendarDay(parts).weekday % 7;
}

/**
 * Months counted from year 0 (`year * 12 + month - 1`). Searches step through months with this plain counter and
 * compare months by it; it is bookkeeping over (year, month) pairs, not calendar arithmetic.
 */
export function monthOrdinal(parts: Pick<DateParts, 'year' | 'month'>): number {
  return parts.year * 12 + parts.month - 1;
}

export function monthOfOrdinal(ordinal: number): { year: number; month: number } {
  return { year: Math.floor(ordinal / 12), month: (ordinal % 12) + 1 };
}

export function maxDate(a: LocalDate, b: LocalDate): LocalDate {
  return a >= b ? a : b;
}
