import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { addDays, addMonthsClamped, daysBetween, parseLocalDate } from './local-date';

describe('parseLocalDate', () => {
  it('accepts real calendar days written YYYY-MM-DD', () => {
    for (const text of ['2024-02-29', '2026-01-01', '1990-12-31', '2000-02-29', '9999-12-31']) {
      expect(parseLocalDate(text)).toBe(text);
    }
  });

  it('refuses days that do not exist and anything that is not strictly YYYY-MM-DD', () => {
    const refused = [
      '2023-02-29',
      '2100-02-29',
      '2026-04-31',
      '2026-13-01',
      '2026-00-10',
      '2026-01-00',
      '2026-1-01',
      '26-01-01',
      '2026-01-01T00:00',
      ' 2026-01-01',
      '2026-01-01 ',
      '20260101',
      '2026-W01-1',
      '+002026-01-01',
      '',
    ];
    for (const text of refused) expect(parseLocalDate(text), text).toBeUndefined();
  });

  it('accepts exactly the strings that luxon reads as the same YYYY-MM-DD day', () => {
    const digits = (length: number) =>
      fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: length, maxLength: length });
    fc.assert(
      fc.property(digits(4), digits(2), digits(2), (year, month, day) => {
        const text = `${year}-${month}-${day}`;
        const luxon = DateTime.fromObject({ year: Number(year), month: Number(month), day: Number(day) });
        expect(parseLocalDate(text)).toBe(luxon.isValid ? text : undefined);
      }),
      { numRuns: 300 },
    );
  });
});

describe('calendar arithmetic', () => {
  it('adds days across month, year and leap-day boundaries', () => {
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2023-02-28', 1)).toBe('2023-03-01');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('2026-03-29', 7)).toBe('2026-04-05');
    expect(addDays('2026-01-15', 0)).toBe('2026-01-15');
  });

  it('adds months from the given day, clamping to the end of shorter months', () => {
    expect(addMonthsClamped('2026-01-31', 1)).toBe('2026-02-28');
    expect(addMonthsClamped('2028-01-31', 1)).toBe('2028-02-29');
    expect(addMonthsClamped('2026-01-31', 2)).toBe('2026-03-31');
    expect(addMonthsClamped('2024-02-29', 12)).toBe('2025-02-28');
    expect(addMonthsClamped('2024-02-29', 48)).toBe('2028-02-29');
  });

  it('addDays and daysBetween are inverse', () => {
    const day = fc.integer({ min: 0, max: 40_000 }).map((n) => addDays('1950-01-01', n));
    fc.assert(
      fc.property(day, fc.integer({ min: -5000, max: 5000 }), (date, days) => {
        const moved = addDays(date, days);
        expect(daysBetween(date, moved)).toBe(days);
        expect(moved > date).toBe(days > 0);
        expect(addDays(moved, -days)).toBe(date);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses malformed dates instead of computing with them', () => {
    expect(() => addDays('2023-02-29', 1)).toThrow(RangeError);
    expect(() => addDays('tomorrow', 1)).toThrow(RangeError);
  });
});
