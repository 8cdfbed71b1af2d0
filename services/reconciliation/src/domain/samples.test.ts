import { describe, expect, it } from 'vitest';
import { camt054Sample } from '../testing/camt054-sample';
import { collect } from '../testing/chunks';
import { generateCsvStream, syntheticAmountMinor, syntheticPaymentUuid } from '../testing/csv-generator';
import { csvSample } from '../testing/csv-sample';
import { parseCamt054 } from './camt054';
import { parseCsv } from './csv';
import { matchRows, type PaymentFacts, summarise } from './matching';

/** The samples, end to end: bytes → rows → results, against an organisation's payments. */
const ORG = 'aaaaaaaa-0000-4000-8000-000000000001';
const created = Date.parse('2025-03-28T10:00:00Z') / 1000;
const uuid = (n: number) => `${n}e0c7a52-5f0b-4c1e-9d7a-3b2c1d0e9f8a`;
const facts = (n: number, amount_minor: number, currency = 'CHF'): PaymentFacts => ({
  uuid: uuid(n),
  organisation_uuid: ORG,
  amount_minor,
  currency,
  created,
  status: 'succeeded',
});
const lookupIn = (payments: PaymentFacts[]) => {
  const byUuid = new Map(payments.map((p) => [p.uuid, p]));
  return async (uuids: string[]) =>
    new Map(uuids.flatMap((u) => (byUuid.has(u) ? [[u, byUuid.get(u) as PaymentFacts] as const] : [])));
};
const brief = (r: { row: number; outcome: string; reason?: string; payment_uuid?: string }) =>
  [r.row, r.outcome, r.reason ?? r.payment_uuid] as const;

describe('samples matched against seeded payments', () => {
  it('camt.054: all four transactions of the Swiss sample match', async () => {
    const payments = [facts(1, 5000), facts(2, 2550), facts(3, 10_000), facts(4, 123_456)];
    const xml = camt054Sample({
      single: payments[0] as PaymentFacts,
      qrBill: payments[1] as PaymentFacts,
      batch: [payments[2] as PaymentFacts, payments[3] as PaymentFacts],
      bookingDate: '2025-03-31',
    });
    const results = await collect(
      matchRows(parseCamt054([Buffer.from(xml)]), lookupIn(payments), { organisationUuid: ORG }),
    );
    expect(results.map(brief)).toEqual([1, 2, 3, 4].map((n) => [n, 'matched', uuid(n)]));
    expect(summarise(results).result()).toEqual({
      rows: 4,
      matched: 4,
      unmatched: 0,
      errors: 0,
      matched_amounts: [{ value: '141006', currency: 'CHF' }],
    });
  });

  it('CSV: transfers match, the fee has no reference, the repeated transfer is a duplicate', async () => {
    const payments = [facts(1, 125_000), facts(2, 2550), facts(3, 10_000, 'EUR')];
    const text = csvSample({
      first: payments[0] as PaymentFacts,
      second: payments[1] as PaymentFacts,
      third: payments[2] as PaymentFacts,
      bookingDate: '2025-03-31',
    });
    const results = await collect(
      matchRows(parseCsv([Buffer.from(text)]), lookupIn(payments), { organisationUuid: ORG }),
    );
    expect(results.map(brief)).toEqual([
      [2, 'matched', uuid(1)],
      [3, 'matched', uuid(2)],
      [4, 'unmatched', 'no_reference'],
      [5, 'matched', uuid(3)],
      [7, 'unmatched', 'duplicate_entry'],
    ]);
  });

  it('a malformed file is reported row by row', async () => {
    const text =
      'date;amount;currency;reference\n2025-03-31;50.00;CHF;x\n2025-02-30;1.00;CHF;y\n31.03.2025;1.234;CHF;z\n';
    const results = await collect(matchRows(parseCsv([text]), lookupIn([]), { organisationUuid: ORG }));
    expect(results.map(brief)).toEqual([
      [2, 'unmatched', 'no_reference'],
      [3, 'error', 'invalid_date'],
      [4, 'error', 'too_many_minor_digits'],
    ]);
    const missing = await collect(
      matchRows(parseCsv(['date;currency;reference\n2025-03-31;CHF;x\n']), lookupIn([]), { organisationUuid: ORG }),
    );
    expect(missing).toEqual([
      { row: 1, outcome: 'error', reason: 'missing_columns', message: expect.stringContaining('amount') },
    ]);
  });

  it('a generated 10,000-row CSV matches every row', async () => {
    const rows = 10_000;
    const payments = Array.from({ length: rows }, (_, i) => ({
      ...facts(0, syntheticAmountMinor(i)),
      uuid: syntheticPaymentUuid(i),
    }));
    const summary = summarise();
    for await (const result of matchRows(parseCsv(generateCsvStream(rows)), lookupIn(payments), {
      organisationUuid: ORG,
    })) {
      summary.add(result);
    }
    expect(summary.result()).toMatchObject({ rows, matched: rows, unmatched: 0, errors: 0 });
  });
});
