/**
 * Calendar days in the United Kingdom (Europe/London: GMT in winter, BST in summer). Gift Aid
 * counts by the day a donation was received, as a UK charity's books show it: the schedule's
 * "Donation date" is that day, declarations start and end on days, and a claim's window is a
 * range of days. Days are `YYYY-MM-DD` strings here, so they compare as text.
 */
const LONDON = 'Europe/London';

const dayParts = new Intl.DateTimeFormat('en-GB', {
  timeZone: LONDON,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallTime(epochMs: number): WallTime {
  const parts = Object.fromEntries(dayParts.formatToParts(new Date(epochMs)).map((p) => [p.type, p.value]));
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
  };
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

/** The UK day (`YYYY-MM-DD`) of an instant in epoch milliseconds. */
export function ukDay(epochMs: number): string {
  const { year, month, day } = wallTime(epochMs);
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
}

/** The UK day of an instant in Unix seconds (the service clock's and the API's unit). */
export function ukDayOfSeconds(unixSeconds: number): string {
  return ukDay(unixSeconds * 1000);
}

/** How far UK wall time is ahead of UTC at an instant, in milliseconds (0 or 3,600,000). */
function offsetAt(epochMs: number): number {
  const w = wallTime(epochMs);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(epochMs / 1000) * 1000;
}

/** The instant (epoch ms) a UK day starts: its midnight in Europe/London. */
export function ukDayStart(day: string): number {
  const [year, month, date] = day.split('-').map(Number);
  const utcMidnight = Date.UTC(year ?? 0, (month ?? 1) - 1, date ?? 1);
  // The clocks change at 01:00 UTC, never at UK midnight, so the offset at UK midnight is the
  // offset an hour either side of it: one correction settles it.
  const guess = utcMidnight - offsetAt(utcMidnight);
  return utcMidnight - offsetAt(guess);
}

/** The day after a UK day. */
export function nextDay(day: string): string {
  const [year, month, date] = day.split('-').map(Number);
  const next = new Date(Date.UTC(year ?? 0, (month ?? 1) - 1, (date ?? 1) + 1));
  return `${pad(next.getUTCFullYear(), 4)}-${pad(next.getUTCMonth() + 1)}-${pad(next.getUTCDate())}`;
}

/**
 * The same calendar date `years` earlier, as text (29 February stays 29 February: days compare
 * as text, so a day that does not exist still orders correctly between its neighbours).
 */
export function yearsBefore(day: string, years: number): string {
  return `${pad(Number(day.slice(0, 4)) - years, 4)}${day.slice(4)}`;
}

/** Whether text is a real calendar day written `YYYY-MM-DD`. */
export function isDay(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const [year, month, date] = text.split('-').map(Number);
  const parsed = new Date(Date.UTC(year ?? 0, (month ?? 1) - 1, date ?? 1));
  return parsed.getUTCFullYear() === year && parsed.getUTCMonth() + 1 === month && parsed.getUTCDate() === date;
}

/** A day as HMRC's schedule writes it: DD/MM/YY. */
export function scheduleDate(day: string): string {
  return `${day.slice(8, 10)}/${day.slice(5, 7)}/${day.slice(2, 4)}`;
}
