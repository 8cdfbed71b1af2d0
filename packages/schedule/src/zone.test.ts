import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AWKWARD_ZONES } from './awkward-zones';
import { addDays } from './local-date';
import { localDateOf, localMidnight, resolveTimezone } from './zone';

const ZONES = AWKWARD_ZONES;

/** Samoa crossed the date line in 2011: in Pacific/Apia the 29th was followed by the 31st. */
const SKIPPED = { zone: 'Pacific/Apia', date: '2011-12-30' };

function isSkipped(date: string, zone: string): boolean {
  return zone === SKIPPED.zone && date === SKIPPED.date;
}

const utcSeconds = (iso: string) => Date.parse(iso) / 1000;

describe('resolveTimezone', () => {
  it('keeps valid IANA zones as given and falls back to UTC otherwise', () => {
    expect(resolveTimezone('Europe/Zurich')).toBe('Europe/Zurich');
    expect(resolveTimezone('America/Argentina/Buenos_Aires')).toBe('America/Argentina/Buenos_Aires');
    expect(resolveTimezone('UTC')).toBe('UTC');
    expect(resolveTimezone('Mars/Base')).toBe('UTC');
    expect(resolveTimezone('+01:00')).toBe('UTC');
    expect(resolveTimezone('')).toBe('UTC');
    expect(resolveTimezone(undefined)).toBe('UTC');
  });
});

describe('localMidnight', () => {
  it('is local 00:00 on ordinary days, whatever the offset', () => {
    expect(localMidnight('2026-01-15', 'UTC')).toBe(utcSeconds('2026-01-15T00:00:00Z'));
    expect(localMidnight('2026-01-15', 'Europe/Zurich')).toBe(utcSeconds('2026-01-14T23:00:00Z'));
    expect(localMidnight('2026-07-15', 'Europe/Zurich')).toBe(utcSeconds('2026-07-14T22:00:00Z'));
    expect(localMidnight('2026-01-01', 'Asia/Kathmandu')).toBe(utcSeconds('2025-12-31T18:15:00Z'));
    expect(localMidnight('2026-01-01', 'Pacific/Chatham')).toBe(utcSeconds('2025-12-31T10:15:00Z'));
  });

  it('is the first instant that exists when DST skips midnight (Santiago jumps 00:00 → 01:00)', () => {
    expect(localMidnight('2026-09-06', 'America/Santiago')).toBe(utcSeconds('2026-09-06T04:00:00Z'));
    expect(localMidnight('2026-09-07', 'America/Santiago') - localMidnight('2026-09-06', 'America/Santiago')).toBe(
      23 * 3600,
    );
  });

  it('is the first of two midnights when clocks go back over midnight (Havana 01:00 → 00:00)', () => {
    expect(localMidnight('2023-11-05', 'America/Havana')).toBe(utcSeconds('2023-11-05T04:00:00Z'));
    expect(localDateOf(utcSeconds('2023-11-05T04:00:00Z') - 1, 'America/Havana')).toBe('2023-11-04');
  });

  it('starts a skipped day where the next day starts', () => {
    expect(localMidnight('2011-12-29', 'Pacific/Apia')).toBe(utcSeconds('2011-12-29T10:00:00Z'));
    expect(localMidnight('2011-12-30', 'Pacific/Apia')).toBe(utcSeconds('2011-12-30T10:00:00Z'));
    expect(localMidnight('2011-12-31', 'Pacific/Apia')).toBe(utcSeconds('2011-12-30T10:00:00Z'));
  });

  it('makes the DST day 30 minutes short in Lord Howe', () => {
    const zone = 'Australia/Lord_Howe';
    expect(localMidnight('2026-10-04', zone) - localMidnight('2026-10-03', zone)).toBe(86_400);
    expect(localMidnight('2026-10-05', zone) - localMidnight('2026-10-04', zone)).toBe(86_400 - 1800);
  });

  it('refuses unknown zones rather than returning NaN', () => {
    expect(() => localMidnight('2026-01-01', 'Mars/Base')).toThrow(RangeError);
    expect(() => localDateOf(0, 'Mars/Base')).toThrow(RangeError);
  });

  it('starts every day of 2026–2027 in every listed zone exactly at its first second', () => {
    for (const zone of ZONES) {
      let previous = localMidnight('2025-12-31', zone);
      for (let date = '2026-01-01'; date < '2028-01-01'; date = addDays(date, 1)) {
        const start = localMidnight(date, zone);
        expect(localDateOf(start, zone)).toBe(date);
        expect(localDateOf(start - 1, zone)).toBe(addDays(date, -1));
        expect(start).toBeGreaterThan(previous);
        previous = start;
      }
    }
  });
});

const dayIn1990To2090 = fc.integer({ min: 0, max: 36_889 }).map((n) => addDays('1990-01-01', n));
const date = fc.oneof({ weight: 9, arbitrary: dayIn1990To2090 }, { weight: 1, arbitrary: fc.constant(SKIPPED.date) });
const zone = fc.constantFrom(...ZONES);

describe('localMidnight and localDateOf (properties)', () => {
  it('localMidnight is the first second of the day: its day is d, the second before is an earlier day', () => {
    fc.assert(
      fc.property(date, zone, (d, z) => {
        const start = localMidnight(d, z);
        expect(localDateOf(start, z)).toBe(isSkipped(d, z) ? addDays(d, 1) : d);
        expect(localDateOf(start - 1, z) < d).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('localMidnight strictly increases with the day (a skipped day shares the next day’s start)', () => {
    fc.assert(
      fc.property(date, fc.integer({ min: 1, max: 800 }), zone, (d, days, z) => {
        const later = addDays(d, days);
        if (isSkipped(d, z) && days === 1) expect(localMidnight(later, z)).toBe(localMidnight(d, z));
        else expect(localMidnight(later, z)).toBeGreaterThan(localMidnight(d, z));
      }),
      { numRuns: 400 },
    );
  });

  it('localDateOf is the day whose start is the latest one not after the instant', () => {
    fc.assert(
      fc.property(date, fc.integer({ min: 0, max: 86_399 }), zone, (d, offset, z) => {
        const instant = localMidnight(d, z) + offset;
        const day = localDateOf(instant, z);
        expect(localMidnight(day, z)).toBeLessThanOrEqual(instant);
        expect(localMidnight(addDays(day, 1), z)).toBeGreaterThan(instant);
      }),
      { numRuns: 400 },
    );
  });
});
