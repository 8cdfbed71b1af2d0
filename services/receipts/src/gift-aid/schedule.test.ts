import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CoveringDeclaration, coveredPayments } from './coverage';
import { type DonorRecord, donorColumns, scheduleName, scheduleTitle, ukPostcode } from './donor-fields';
import {
  AGGREGATE_DESCRIPTION,
  AGGREGATE_DONATION_MAX_MINOR,
  AGGREGATE_LINE_MAX_MINOR,
  type ClaimGift,
  ClaimSchedule,
  SCHEDULE_COLUMNS,
  scheduleAmount,
} from './schedule';
import { isDay, nextDay, scheduleDate, ukDay, ukDayStart, yearsBefore } from './uk-dates';

const seconds = (iso: string) => Date.parse(iso) / 1000;
const ms = (iso: string) => Date.parse(iso);

const ADA: DonorRecord = {
  honorific_prefix: 'Mrs.',
  first_name: 'Ada',
  last_name: 'Lovelace-Byron',
  house_number: '12',
  street: 'St James’s Square',
  postal_code: 'sw1y 4jh',
  city: 'London',
  country: 'GB',
};

const future = (declaredIso: string, extra: Partial<CoveringDeclaration> = {}): CoveringDeclaration => ({
  scope: 'future',
  channel: 'online',
  declared_at: seconds(declaredIso),
  ...extra,
});

let paymentCount = 0;
function gift(iso: string, pence: number, fields: Partial<ClaimGift> = {}): ClaimGift {
  paymentCount += 1;
  return {
    payment_uuid: `p${paymentCount}`,
    supporter_uuid: 's1',
    currency: 'GBP',
    succeeded_at: seconds(iso),
    amount_minor: pence,
    net_minor: pence,
    ...fields,
  };
}

/** The CSV's rows as fields (no field in these tests holds a quote). */
function rows(csv: string): string[][] {
  return csv
    .split('\r\n')
    .filter(Boolean)
    .map(
      (line) => line.match(/("([^"]|"")*"|[^,]*)(,|$)/g)?.map((f) => f.replace(/,$/, '').replace(/^"|"$/g, '')) ?? [],
    )
    .map((fields) => fields.slice(0, SCHEDULE_COLUMNS.length));
}

function build(
  donors: Array<{ donor: typeof ADA | undefined; gifts: ClaimGift[]; declarations: CoveringDeclaration[] }>,
) {
  const schedule = new ClaimSchedule();
  let csv = schedule.header();
  for (const { donor, gifts, declarations } of donors) csv += schedule.addDonor(donor, gifts, declarations).join('');
  csv += schedule.finish().join('');
  return { csv, totals: schedule.totals };
}

describe('UK days', () => {
  it('start at midnight in London, in winter and in summer, across both clock changes', () => {
    expect(new Date(ukDayStart('2025-01-15')).toISOString()).toBe('2025-01-15T00:00:00.000Z');
    expect(new Date(ukDayStart('2025-07-15')).toISOString()).toBe('2025-07-14T23:00:00.000Z');
    expect(new Date(ukDayStart('2025-03-30')).toISOString()).toBe('2025-03-30T00:00:00.000Z');
    expect(new Date(ukDayStart('2025-03-31')).toISOString()).toBe('2025-03-30T23:00:00.000Z');
    expect(new Date(ukDayStart('2025-10-26')).toISOString()).toBe('2025-10-25T23:00:00.000Z');
    expect(new Date(ukDayStart('2025-10-27')).toISOString()).toBe('2025-10-27T00:00:00.000Z');
    expect(ukDay(ms('2025-07-14T23:30:00Z'))).toBe('2025-07-15');
    expect(ukDay(ms('2025-01-14T23:30:00Z'))).toBe('2025-01-14');
  });

  it('are written DD/MM/YY and checked as real dates', () => {
    expect(scheduleDate('2025-04-06')).toBe('06/04/25');
    expect(nextDay('2024-02-28')).toBe('2024-02-29');
    expect(nextDay('2025-12-31')).toBe('2026-01-01');
    expect(yearsBefore('2025-04-06', 4)).toBe('2021-04-06');
    expect(isDay('2025-02-29')).toBe(false);
    expect(isDay('2024-02-29')).toBe(true);
    expect(isDay('2024-2-9')).toBe(false);
  });
});

describe('donor columns', () => {
  it('follow HMRC: title of 4 letters, names of 35 without hyphens, postcode in capitals with its space', () => {
    expect(donorColumns(ADA)).toEqual({
      title: 'Mrs',
      first_name: 'Ada',
      last_name: 'Lovelace Byron',
      house: '12',
      postcode: 'SW1Y 4JH',
    });
    expect(scheduleTitle('Professor')).toBe('Prof');
    expect(scheduleTitle('Reverend')).toBe('Rev');
    expect(scheduleTitle('Master')).toBe('');
    expect(scheduleName('Zoë  Brontë-O’Neil')).toBe("Zoe Bronte O'Neil");
    expect(scheduleName("Siobhán O'Brien")).toBe("Siobhan O'Brien");
    expect(scheduleName('=cmd|x')).toBe('cmd x');
    expect(scheduleName('A'.repeat(50))).toHaveLength(35);
    expect(ukPostcode('EC1A1BB')).toBe('EC1A 1BB');
    expect(ukPostcode('12345')).toBeUndefined();
  });

  it('write an overseas donor’s address in the house box and X as the postcode', () => {
    const columns = donorColumns({ ...ADA, country: 'Switzerland', postal_code: '8001', city: 'Zürich' });
    expect(columns?.postcode).toBe('X');
    expect(columns?.house).toBe("12, St James's Square, 8001, Zurich, Swi");
    expect(columns?.house.length).toBeLessThanOrEqual(40);
  });

  it('are missing without a last name, or for a UK donor without a valid postcode or any house', () => {
    expect(donorColumns({ ...ADA, last_name: ' ' })).toBeUndefined();
    expect(donorColumns({ ...ADA, postal_code: 'nowhere' })).toBeUndefined();
    expect(donorColumns({ ...ADA, house_number: undefined, street: undefined })).toBeUndefined();
    expect(donorColumns({ ...ADA, house_number: undefined })?.house).toBe("St James's Square");
    expect(donorColumns({ ...ADA, country: undefined })?.postcode).toBe('SW1Y 4JH');
  });
});

describe('declaration coverage', () => {
  const gifts = [
    { payment_uuid: 'before', succeeded_at: seconds('2025-03-01T10:00:00Z') },
    { payment_uuid: 'same-day-early', succeeded_at: seconds('2025-05-01T07:00:00Z') },
    { payment_uuid: 'same-day-late', succeeded_at: seconds('2025-05-01T18:00:00Z') },
    { payment_uuid: 'after', succeeded_at: seconds('2025-06-01T10:00:00Z') },
  ];

  it('future: from the day of the declaration on', () => {
    expect([...coveredPayments(gifts, [future('2025-05-01T12:00:00Z')])].sort()).toEqual([
      'after',
      'same-day-early',
      'same-day-late',
    ]);
  });

  it('past_and_future: also the four years before', () => {
    const declaration = future('2025-05-01T12:00:00Z', { scope: 'past_and_future' });
    const old = [...gifts, { payment_uuid: 'five-years', succeeded_at: seconds('2020-04-30T10:00:00Z') }];
    expect(coveredPayments(old, [declaration]).has('before')).toBe(true);
    expect(coveredPayments(old, [declaration]).has('five-years')).toBe(false);
  });

  it('single: the one donation of that day nearest to the declaration', () => {
    const single = future('2025-05-01T16:00:00Z', { scope: 'single' });
    expect([...coveredPayments(gifts, [single])]).toEqual(['same-day-late']);
    const none = future('2025-05-02T16:00:00Z', { scope: 'single' });
    expect(coveredPayments(gifts, [none]).size).toBe(0);
  });

  it('a cancellation ends it from the UK day it was made, earlier donations stay covered', () => {
    const cancelled = future('2025-01-01T12:00:00Z', { cancelled_at: seconds('2025-05-01T12:00:00Z') });
    expect([...coveredPayments(gifts, [cancelled])]).toEqual(['before']);
  });

  it('an oral declaration cancelled within 30 days never covered anything', () => {
    const oral = future('2025-02-20T12:00:00Z', { channel: 'oral', cancelled_at: seconds('2025-03-10T12:00:00Z') });
    expect(coveredPayments(gifts, [oral]).size).toBe(0);
    const written = { ...oral, channel: 'written' as const };
    expect([...coveredPayments(gifts, [written])]).toEqual(['before']);
  });
});

describe('the claim schedule', () => {
  it('has HMRC’s header, a donor’s own lines, aggregated small ones and leaves out what does not qualify', () => {
    const declarations = [future('2025-01-01T12:00:00Z')];
    const { csv, totals } = build([
      {
        donor: ADA,
        gifts: [
          gift('2025-04-06T10:00:00Z', 2500),
          gift('2025-04-07T10:00:00Z', 123_456),
          gift('2025-04-08T10:00:00Z', 1500),
          gift('2025-04-09T10:00:00Z', 5000, { currency: 'EUR' }),
          gift('2025-04-10T10:00:00Z', 5000, { net_minor: 0 }),
          gift('2025-04-11T10:00:00Z', 5000, { net_minor: 3000 }),
          gift('2024-12-31T10:00:00Z', 5000),
        ],
        declarations,
      },
      {
        donor: { ...ADA, postal_code: undefined },
        gifts: [gift('2025-04-12T10:00:00Z', 900), gift('2025-04-13T10:00:00Z', 9000)],
        declarations,
      },
      { donor: ADA, gifts: [gift('2025-04-14T10:00:00Z', 9000)], declarations: [] },
    ]);
    expect(rows(csv)).toEqual([
      [...SCHEDULE_COLUMNS],
      ['Mrs', 'Ada', 'Lovelace Byron', '12', 'SW1Y 4JH', '', '', '06/04/25', '25.00'],
      ['Mrs', 'Ada', 'Lovelace Byron', '12', 'SW1Y 4JH', '', '', '07/04/25', '1234.56'],
      ['Mrs', 'Ada', 'Lovelace Byron', '12', 'SW1Y 4JH', '', '', '11/04/25', '30.00'],
      ['', '', '', '', '', AGGREGATE_DESCRIPTION, '', '12/04/25', '24.00'],
    ]);
    expect(totals).toEqual({
      donations: 5,
      aggregated: 2,
      lines: 4,
      left_out: 1,
      total_minor: 2500 + 123_456 + 3000 + 1500 + 900,
    });
    expect(csv.endsWith('\r\n')).toBe(true);
  });

  it('formats amounts in pounds with two decimals and no separators', () => {
    expect(scheduleAmount(5)).toBe('0.05');
    expect(scheduleAmount(100_000)).toBe('1000.00');
    expect(scheduleAmount(123_456_789)).toBe('1234567.89');
  });

  it('keeps every qualifying donation, aggregates the small ones in lines of at most £1,000, and adds up to the penny', () => {
    const donation = fc.record({
      pence: fc.oneof(fc.integer({ min: 1, max: AGGREGATE_DONATION_MAX_MINOR }), fc.integer({ min: 1, max: 500_000 })),
      at: fc.integer({ min: ms('2024-04-06T00:00:00Z'), max: ms('2025-04-05T23:59:59Z') }),
      refunded: fc.nat({ max: 3 }),
    });
    const donorGifts = fc.array(donation, { maxLength: 12 });
    fc.assert(
      fc.property(fc.array(fc.record({ gifts: donorGifts, complete: fc.boolean() }), { maxLength: 30 }), (donors) => {
        let expectedTotal = 0;
        let expectedSmall = 0;
        let expectedLeftOut = 0;
        const schedule = new ClaimSchedule();
        let csv = schedule.header();
        donors.forEach((d, index) => {
          const gifts = d.gifts.map((g, n) => {
            // A quarter of the gifts are partly refunded.
            const net = g.refunded === 0 ? Math.floor(g.pence / 2) : g.pence;
            return {
              ...gift(new Date(g.at).toISOString(), g.pence, { net_minor: net }),
              supporter_uuid: `s${index}`,
              payment_uuid: `d${index}-${n}`,
            };
          });
          for (const g of gifts) {
            if (g.net_minor <= 0) continue;
            if (g.net_minor <= AGGREGATE_DONATION_MAX_MINOR) expectedSmall += 1;
            if (g.net_minor <= AGGREGATE_DONATION_MAX_MINOR || d.complete) expectedTotal += g.net_minor;
            else expectedLeftOut += 1;
          }
          const donor = d.complete ? ADA : { ...ADA, postal_code: undefined };
          csv += schedule.addDonor(donor, gifts, [future('2024-01-01T00:00:00Z')]).join('');
        });
        csv += schedule.finish().join('');
        const lines = rows(csv).slice(1);
        const pence = (amount: string) => Math.round(Number(amount) * 100);
        const aggregated = lines.filter((line) => line[5] === AGGREGATE_DESCRIPTION);
        const own = lines.filter((line) => line[5] === '');
        // Totals to the penny, every small donation aggregated, none of the donors' lines small.
        expect(lines.reduce((sum, line) => sum + pence(line[8] ?? ''), 0)).toBe(expectedTotal);
        expect(schedule.totals.aggregated).toBe(expectedSmall);
        expect(schedule.totals.left_out).toBe(expectedLeftOut);
        for (const line of aggregated) {
          expect(pence(line[8] ?? '')).toBeLessThanOrEqual(AGGREGATE_LINE_MAX_MINOR);
          expect(line.slice(0, 5)).toEqual(['', '', '', '', '']);
        }
        for (const line of own) expect(pence(line[8] ?? '')).toBeGreaterThan(AGGREGATE_DONATION_MAX_MINOR);
        // Lines full but for the last: greedy packing never leaves room for a donation that went to the next.
        for (const line of aggregated.slice(0, -1)) {
          expect(pence(line[8] ?? '')).toBeGreaterThan(AGGREGATE_LINE_MAX_MINOR - AGGREGATE_DONATION_MAX_MINOR);
        }
        for (const line of lines) {
          expect(line[7]).toMatch(/^\d{2}\/\d{2}\/\d{2}$/);
          expect(line[8]).toMatch(/^\d+\.\d{2}$/);
        }
      }),
      { numRuns: 200 },
    );
  });
});
