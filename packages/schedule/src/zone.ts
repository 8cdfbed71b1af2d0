import { DateTime, IANAZone } from 'luxon';
import { dateParts, type LocalDate } from './local-date';

/** Subscriptions without a (valid) zone bill in UTC rather than failing: the zone only moves the due instant. */
export const DEFAULT_ZONE = 'UTC';

/** A valid IANA zone name (including `UTC`) as given; anything missing or unknown becomes `UTC`. */
export function resolveTimezone(name: string | undefined): string {
  return name !== undefined && name !== '' && IANAZone.isValidZone(name) ? name : DEFAULT_ZONE;
}

/**
 * The zone as a luxon zone, refusing unknown names (luxon would otherwise return invalid dates and NaN instants).
 * `IANAZone.create` caches per name, so this costs one map lookup after the first call.
 */
function ianaZone(zone: string): IANAZone {
  const iana = IANAZone.create(zone);
  if (!iana.isValid) throw new RangeError(`Unknown time zone ${JSON.stringify(zone)}`);
  return iana;
}

/** The calendar day an instant falls on in `zone`. */
export function localDateOf(unixSeconds: number, zone: string): LocalDate {
  return dateAt(unixSeconds, ianaZone(zone));
}

function dateAt(unixSeconds: number, zone: IANAZone): LocalDate {
  const iso = DateTime.fromSeconds(unixSeconds, { zone }).toISODate();
  if (iso === null) throw new RangeError(`Not a representable instant: ${unixSeconds}`);
  return iso;
}

/** Luxon's answer for local 00:00, rounded up to a whole second (offsets before 1972 can carry seconds). */
function luxonMidnight(date: LocalDate, zone: IANAZone): number {
  const { year, month, day } = dateParts(date);
  const start = DateTime.fromObject({ year, month, day }, { zone }).startOf('day');
  return Math.ceil(start.toMillis() / 1000);
}

/** True when `instant` is the first second whose local day is `date` or later. */
function isFirstSecondOf(instant: number, date: LocalDate, zone: IANAZone): boolean {
  return dateAt(instant, zone) >= date && dateAt(instant - 1, zone) < date;
}

/** Two days either way brackets the day boundary for any real offset change (they are all under a day). */
const SEARCH_WINDOW_SECONDS = 2 * 86_400;

/**
 * Unix seconds of the first instant of `date` in `zone`.
 *
 * Usually that is local 00:00. When DST skips midnight, it is the first instant that exists (01:00 on a day that
 * starts at 01:00); on a day that does not exist at all (Pacific/Apia skipped 2011-12-30) it is the start of the next
 * day. When clocks are turned back over midnight (America/Havana, 01:00 → 00:00) local 00:00 happens twice and the
 * day starts at the first one.
 *
 * Luxon resolves the ambiguous and skipped cases by its own rules (it picks the later 00:00 in Havana), so its answer
 * is only a guess: it is kept when the second before it belongs to an earlier day, and otherwise the boundary is found
 * by bisecting instants, asking luxon only which local day an instant falls on. That relies on the local date never
 * running backwards, which holds wherever clocks are turned back at or after midnight.
 */
export function localMidnight(date: LocalDate, zoneName: string): number {
  const zone = ianaZone(zoneName);
  const guess = luxonMidnight(date, zone);
  if (isFirstSecondOf(guess, date, zone)) return guess;
  let before = guess - SEARCH_WINDOW_SECONDS;
  let onOrAfter = guess + SEARCH_WINDOW_SECONDS;
  while (onOrAfter - before > 1) {
    const middle = before + Math.floor((onOrAfter - before) / 2);
    if (dateAt(middle, zone) >= date) onOrAfter = middle;
    else before = middle;
  }
  return onOrAfter;
}
