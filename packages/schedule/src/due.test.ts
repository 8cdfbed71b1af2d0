import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { dueAfter, dueOnOrAfter, latestDueBetween } from './due';
import { type Interval, parseInterval } from './interval';
import { localMidnight } from './zone';

function interval(text: string): Interval {
  const result = parseInterval(text);
  if (!result.ok) throw new Error(`${text}: ${result.message}`);
  return result.interval;
}

/** The first `count` due days on or after `from`, following dueAfter. */
function dueDays(text: string, anchor: string, from: string, count: number): string[] {
  const parsed = interval(text);
  const days: string[] = [];
  let day = dueOnOrAfter(parsed, anchor, from);
  while (day !== undefined && days.length < count) {
    days.push(day);
    day = dueAfter(parsed, anchor, day);
  }
  return days;
}

/** Seconds between consecutive instants. */
function gaps(instants: readonly number[]): number[] {
  return instants.slice(1).map((instant, index) => instant - (instants[index] ?? Number.NaN));
}

const HOUR = 3600;
const DAY = 24 * HOUR;
const ZURICH = 'Europe/Zurich';

describe('a year of billing in Europe/Zurich', () => {
  it('bills monthly from 2026-01-15 at local midnight, one hour earlier in UTC during summer time', () => {
    const days = dueDays('monthly', '2026-01-15', '2026-01-15', 12);
    expect(days).toEqual([
      '2026-01-15',
      '2026-02-15',
      '2026-03-15',
      '2026-04-15',
      '2026-05-15',
      '2026-06-15',
      '2026-07-15',
      '2026-08-15',
      '2026-09-15',
      '2026-10-15',
      '2026-11-15',
      '2026-12-15',
    ]);
    // CET is UTC+1 (midnight = 23:00Z the day before); CEST (Mar 29 – Oct 25 2026) is UTC+2 (22:00Z).
    const expected = days.map((day) => {
      const month = Number(day.slice(5, 7));
      const summer = month >= 4 && month <= 10;
      return Date.parse(`${day}T00:00:00Z`) / 1000 - (summer ? 2 : 1) * HOUR;
    });
    const instants = days.map((day) => localMidnight(day, ZURICH));
    expect(instants).toEqual(expected);
    for (const instant of instants) {
      expect(DateTime.fromSeconds(instant, { zone: ZURICH }).toFormat('HH:mm:ss')).toBe('00:00:00');
    }
    const dayCounts = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30]; // Jan 15 → Feb 15, …, Nov 15 → Dec 15
    const shifts = [0, 0, -HOUR, 0, 0, 0, 0, 0, 0, +HOUR, 0]; // Mar 15 → Apr 15 and Oct 15 → Nov 15 cross a change
    expect(gaps(instants)).toEqual(dayCounts.map((days, index) => days * DAY + (shifts[index] ?? Number.NaN)));
  });

  it('bills weekly 7×24h − 1h apart across the March change and 7×24h + 1h across the October change', () => {
    const march = dueDays('weekly', '2026-03-26', '2026-03-26', 3).map((day) => localMidnight(day, ZURICH));
    // Thu 26 Mar → Thu 2 Apr crosses Sun 29 Mar 02:00 → 03:00; the next week does not.
    expect(gaps(march)).toEqual([7 * DAY - HOUR, 7 * DAY]);
    const october = dueDays('weekly', '2026-10-22', '2026-10-22', 3).map((day) => localMidnight(day, ZURICH));
    // Thu 22 Oct → Thu 29 Oct crosses Sun 25 Oct 03:00 → 02:00; the next week does not.
    expect(gaps(october)).toEqual([7 * DAY + HOUR, 7 * DAY]);
    for (const instant of [...march, ...october]) {
      expect(DateTime.fromSeconds(instant, { zone: ZURICH }).toFormat('HH:mm')).toBe('00:00');
    }
  });

  it('keeps a weekly anchor on the DST Sunday itself at local midnight', () => {
    const days = dueDays('weekly', '2026-03-22', '2026-03-22', 3);
    expect(days).toEqual(['2026-03-22', '2026-03-29', '2026-04-05']);
    // Midnight of Sun 29 Mar is still winter time; the change at 02:00 falls into the following week.
    expect(gaps(days.map((day) => localMidnight(day, ZURICH)))).toEqual([7 * DAY, 7 * DAY - HOUR]);
  });
});

describe('month ends', () => {
  it('L is the last day of February in leap and common years', () => {
    expect(dueDays('L * *', '2028-01-01', '2028-02-01', 3)).toEqual(['2028-02-29', '2028-03-31', '2028-04-30']);
    expect(dueDays('L * *', '2027-01-01', '2027-02-01', 3)).toEqual(['2027-02-28', '2027-03-31', '2027-04-30']);
    expect(dueDays('L 2 *', '2027-01-01', '2027-01-01', 3)).toEqual(['2027-02-28', '2028-02-29', '2029-02-28']);
  });

  it('31 skips months without a 31st, February included', () => {
    expect(dueOnOrAfter(interval('31 * *'), '2028-01-01', '2028-02-01')).toBe('2028-03-31');
    expect(dueOnOrAfter(interval('31 * *'), '2027-01-01', '2027-02-01')).toBe('2027-03-31');
    expect(dueDays('31 * *', '2027-01-01', '2027-01-01', 4)).toEqual([
      '2027-01-31',
      '2027-03-31',
      '2027-05-31',
      '2027-07-31',
    ]);
  });

  it('monthly from January 31 clamps to the month end and returns to the 31st', () => {
    expect(dueDays('monthly', '2028-01-31', '2028-01-01', 4)).toEqual([
      '2028-01-31',
      '2028-02-29',
      '2028-03-31',
      '2028-04-30',
    ]);
    expect(dueDays('monthly', '2027-01-31', '2027-01-01', 4)).toEqual([
      '2027-01-31',
      '2027-02-28',
      '2027-03-31',
      '2027-04-30',
    ]);
  });
});

describe('keywords', () => {
  const anchor = '2024-02-29';

  it('quarterly, semestral and yearly count months from the anchor, clamping each occurrence', () => {
    expect(dueDays('quarterly', anchor, anchor, 6)).toEqual([
      '2024-02-29',
      '2024-05-29',
      '2024-08-29',
      '2024-11-29',
      '2025-02-28',
      '2025-05-29',
    ]);
    expect(dueDays('semestral', anchor, anchor, 5)).toEqual([
      '2024-02-29',
      '2024-08-29',
      '2025-02-28',
      '2025-08-29',
      '2026-02-28',
    ]);
    expect(dueDays('yearly', anchor, anchor, 5)).toEqual([
      '2024-02-29',
      '2025-02-28',
      '2026-02-28',
      '2027-02-28',
      '2028-02-29',
    ]);
  });

  it('weekly steps 7 days from the anchor', () => {
    expect(dueDays('weekly', anchor, '2024-03-01', 3)).toEqual(['2024-03-07', '2024-03-14', '2024-03-21']);
    expect(dueOnOrAfter(interval('weekly'), anchor, '2024-03-07')).toBe('2024-03-07');
    expect(dueAfter(interval('weekly'), anchor, '2024-03-07')).toBe('2024-03-14');
  });

  it('a due day is its own dueOnOrAfter', () => {
    expect(dueOnOrAfter(interval('monthly'), '2026-01-31', '2026-02-28')).toBe('2026-02-28');
    expect(dueOnOrAfter(interval('quarterly'), anchor, '2025-02-28')).toBe('2025-02-28');
    expect(dueOnOrAfter(interval('yearly'), anchor, '2025-03-01')).toBe('2026-02-28');
  });

  it('the anchor is the first due day, however early `from` is', () => {
    for (const keyword of ['weekly', 'monthly', 'quarterly', 'semestral', 'yearly']) {
      expect(dueOnOrAfter(interval(keyword), anchor, '2020-01-01')).toBe(anchor);
      expect(dueAfter(interval(keyword), anchor, '2024-02-28')).toBe(anchor);
    }
  });

  it('finds occurrences of a century-old anchor directly', () => {
    expect(dueOnOrAfter(interval('monthly'), '1990-01-31', '2090-02-10')).toBe('2090-02-28');
    expect(dueOnOrAfter(interval('yearly'), '1992-02-29', '2100-01-01')).toBe('2100-02-28');
    expect(dueOnOrAfter(interval('weekly'), '1990-01-01', '2090-01-01')).toBe('2090-01-02');
  });
});

describe('cron', () => {
  it('1 * * is the first of every month', () => {
    expect(dueDays('1 * *', '2026-01-01', '2026-01-02', 3)).toEqual(['2026-02-01', '2026-03-01', '2026-04-01']);
  });

  it('15 3,6,9,12 * is the 15th of each quarter’s last month', () => {
    expect(dueDays('15 3,6,9,12 *', '2026-01-01', '2026-01-01', 5)).toEqual([
      '2026-03-15',
      '2026-06-15',
      '2026-09-15',
      '2026-12-15',
      '2027-03-15',
    ]);
  });

  it('* * 1 is every Monday', () => {
    expect(dueDays('* * 1', '2026-01-01', '2026-01-01', 5)).toEqual([
      '2026-01-05',
      '2026-01-12',
      '2026-01-19',
      '2026-01-26',
      '2026-02-02',
    ]);
    expect(dueDays('* * MON', '2026-01-01', '2026-01-01', 1)).toEqual(['2026-01-05']);
  });

  it('1-7 * 1 is days 1–7 OR any Monday (both day fields restricted)', () => {
    expect(dueDays('1-7 * 1', '2026-01-01', '2026-01-01', 19)).toEqual([
      '2026-01-01',
      '2026-01-02',
      '2026-01-03',
      '2026-01-04',
      '2026-01-05',
      '2026-01-06',
      '2026-01-07',
      '2026-01-12',
      '2026-01-19',
      '2026-01-26',
      '2026-02-01',
      '2026-02-02',
      '2026-02-03',
      '2026-02-04',
      '2026-02-05',
      '2026-02-06',
      '2026-02-07',
      '2026-02-09',
      '2026-02-16',
    ]);
  });

  it('*/10 * * is the 1st, 11th, 21st and 31st', () => {
    expect(dueDays('*/10 * *', '2026-01-01', '2026-01-01', 8)).toEqual([
      '2026-01-01',
      '2026-01-11',
      '2026-01-21',
      '2026-01-31',
      '2026-02-01',
      '2026-02-11',
      '2026-02-21',
      '2026-03-01',
    ]);
  });

  it('* JAN-MAR MON-FRI is weekdays of the first quarter', () => {
    expect(dueDays('* JAN-MAR MON-FRI', '2026-01-01', '2026-03-27', 4)).toEqual([
      '2026-03-27',
      '2026-03-30',
      '2026-03-31',
      '2027-01-01',
    ]);
    expect(dueDays('* jan-mar mon-fri', '2026-01-01', '2027-01-01', 2)).toEqual(['2027-01-01', '2027-01-04']);
  });

  it('29 2 * is due in leap years only, and 2100 is not one', () => {
    expect(dueDays('29 2 *', '2090-01-01', '2090-01-01', 4)).toEqual([
      '2092-02-29',
      '2096-02-29',
      '2104-02-29',
      '2108-02-29',
    ]);
  });

  it('is never due before the anchor', () => {
    expect(dueOnOrAfter(interval('1 * *'), '2026-03-02', '2026-01-01')).toBe('2026-04-01');
    expect(dueAfter(interval('1 * *'), '2026-03-01', '2025-06-15')).toBe('2026-03-01');
  });
});

describe('latestDueBetween', () => {
  it('is the last due day in the inclusive window', () => {
    const monthly = interval('monthly');
    expect(latestDueBetween(monthly, '2026-01-15', '2026-02-01', '2026-05-20')).toBe('2026-05-15');
    expect(latestDueBetween(monthly, '2026-01-15', '2026-02-01', '2026-05-15')).toBe('2026-05-15');
    expect(latestDueBetween(monthly, '2026-01-15', '2026-05-15', '2026-05-15')).toBe('2026-05-15');
    expect(latestDueBetween(monthly, '2026-01-15', '2026-05-16', '2026-06-14')).toBeUndefined();
    expect(latestDueBetween(monthly, '2026-01-31', '2026-01-01', '2026-03-30')).toBe('2026-02-28');
    expect(latestDueBetween(interval('1 * *'), '2020-01-01', '2026-01-02', '2026-03-31')).toBe('2026-03-01');
    expect(latestDueBetween(interval('L * *'), '2020-01-01', '2028-02-01', '2028-03-30')).toBe('2028-02-29');
  });

  it('ignores the part of the window before the anchor', () => {
    expect(latestDueBetween(interval('1 * *'), '2026-03-02', '2026-01-01', '2026-03-31')).toBeUndefined();
    expect(latestDueBetween(interval('monthly'), '2026-03-02', '2026-01-01', '2026-03-01')).toBeUndefined();
    expect(latestDueBetween(interval('monthly'), '2026-03-02', '2026-01-01', '2026-03-02')).toBe('2026-03-02');
  });

  it('is undefined for an empty window', () => {
    expect(latestDueBetween(interval('1 * *'), '2020-01-01', '2026-03-02', '2026-03-01')).toBeUndefined();
  });

  it('reaches back over long missed stretches', () => {
    expect(latestDueBetween(interval('29 2 *'), '1990-01-01', '1990-01-01', '2103-12-31')).toBe('2096-02-29');
    expect(latestDueBetween(interval('yearly'), '1990-06-30', '1990-01-01', '2090-06-29')).toBe('2089-06-30');
  });
});
