import type { Keyword } from './interval';
import { addDays, addMonthsClamped, dateParts, daysBetween, type LocalDate, monthOrdinal } from './local-date';

/** Months between occurrences of the month-based keywords. */
const MONTHS_PER_PERIOD: Readonly<Record<Exclude<Keyword, 'weekly'>, number>> = {
  monthly: 1,
  quarterly: 3,
  semestral: 6,
  yearly: 12,
};

/**
 * Occurrence k (k = 0, 1, …) of a keyword: the anchor plus k weeks, or plus k periods of months counted from the
 * anchor and clamped to the month's end (so a Jan 31 anchor gives Feb 28, then Mar 31 again).
 */
export function keywordOccurrence(keyword: Keyword, anchor: LocalDate, k: number): LocalDate {
  if (keyword === 'weekly') return addDays(anchor, 7 * k);
  return addMonthsClamped(anchor, MONTHS_PER_PERIOD[keyword] * k);
}

/**
 * The smallest k whose occurrence is on or after `from`, computed rather than counted so an old anchor costs the same
 * as a new one.
 *
 * Weekly: k = ⌈days / 7⌉. Month-based: occurrence k always lies in the month `anchor month + k × period` (clamping
 * stays inside the target month). With k = ⌊months from anchor to from / period⌋, occurrence k is in from's month or
 * earlier and occurrence k + 1 in a later month, so the answer is k when occurrence k is not before `from`, else k + 1.
 */
export function firstKeywordIndexOnOrAfter(keyword: Keyword, anchor: LocalDate, from: LocalDate): number {
  if (from <= anchor) return 0;
  if (keyword === 'weekly') return Math.ceil(daysBetween(anchor, from) / 7);
  const period = MONTHS_PER_PERIOD[keyword];
  const k = Math.floor((monthOrdinal(dateParts(from)) - monthOrdinal(dateParts(anchor))) / period);
  return keywordOccurrence(keyword, anchor, k) >= from ? k : k + 1;
}
