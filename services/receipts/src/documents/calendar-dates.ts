/**
 * Dates as receipts print them. Gift dates and periods are calendar dates already (the day the
 * money arrived, decided by the domain); only the issue time is an instant, and it is read on
 * the organisation's own calendar, so a receipt issued at 00:30 in Zurich on 1 January says
 * 1 January even though it was still 31 December in UTC.
 */

export type DateStyle = 'dotted' | 'slashed';

const ZONES = { CH: 'Europe/Zurich', DE: 'Europe/Berlin', GB: 'Europe/London' } as const;

/** "2025-03-07" → "07.03.2025" (dotted: DE, CH) or "07/03/2025" (slashed: GB). */
export function formatIsoDate(isoDate: string, style: DateStyle): string {
  const [year, month, day] = isoDate.split('-');
  return style === 'dotted' ? `${day}.${month}.${year}` : `${day}/${month}/${year}`;
}

/** The calendar date (YYYY-MM-DD) of an issue time in the organisation's country. */
export function issueDate(issuedAt: number | string, country: keyof typeof ZONES): string {
  if (typeof issuedAt === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(issuedAt)) return issuedAt;
  const instant = new Date(issuedAt);
  if (Number.isNaN(instant.getTime())) throw new RangeError(`Not a time: ${issuedAt}`);
  // en-CA writes YYYY-MM-DD; the parts are read by type, not by position, all the same.
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: ZONES[country],
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(instant);
  const part = (type: 'year' | 'month' | 'day') => parts.find((entry) => entry.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/** The instant a receipt's PDF records as its creation date (deterministic: the issue time). */
export function issueInstant(issuedAt: number | string): Date {
  if (typeof issuedAt === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(issuedAt)) return new Date(`${issuedAt}T00:00:00Z`);
  return new Date(issuedAt);
}
