import { cronFirstOnOrAfter, cronLastBetween } from './cron';
import type { Interval } from './interval';
import { firstKeywordIndexOnOrAfter, keywordOccurrence } from './keyword';
import { addDays, dateParts, type LocalDate, maxDate } from './local-date';

/*
 * Due days are calendar days; turning one into `next_due_date` is `localMidnight(day, zone)`. Keeping the schedule in
 * days means DST never moves a due day, only the instant at which it starts.
 *
 * No due day exists before the anchor (the day billing started), for keywords and cron alike.
 */

/**
 * The first due day on or after `from`. For keywords the anchor is occurrence 0. Undefined only if nothing is due
 * within ten years, which cannot happen for an interval that `parseInterval` accepted.
 */
export function dueOnOrAfter(interval: Interval, anchor: LocalDate, from: LocalDate): LocalDate | undefined {
  const start = maxDate(from, anchor);
  if (interval.kind === 'cron') return cronFirstOnOrAfter(interval, dateParts(start));
  return keywordOccurrence(interval.keyword, anchor, firstKeywordIndexOnOrAfter(interval.keyword, anchor, start));
}

/** The first due day strictly after `after`. */
export function dueAfter(interval: Interval, anchor: LocalDate, after: LocalDate): LocalDate | undefined {
  return dueOnOrAfter(interval, anchor, addDays(after, 1));
}

/**
 * The latest due day d with from <= d <= until (both inclusive), or undefined. Billing catches up on missed periods
 * by charging only this one.
 */
export function latestDueBetween(
  interval: Interval,
  anchor: LocalDate,
  from: LocalDate,
  until: LocalDate,
): LocalDate | undefined {
  const lower = maxDate(from, anchor);
  if (lower > until) return undefined;
  if (interval.kind === 'cron') return cronLastBetween(interval, dateParts(lower), dateParts(until));
  const firstAfterUntil = firstKeywordIndexOnOrAfter(interval.keyword, anchor, addDays(until, 1));
  if (firstAfterUntil === 0) return undefined;
  const latest = keywordOccurrence(interval.keyword, anchor, firstAfterUntil - 1);
  return latest >= lower ? latest : undefined;
}
