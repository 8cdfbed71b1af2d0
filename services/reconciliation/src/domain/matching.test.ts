import { describe, expect, it } from 'vitest';
import { matchAgainst as match, OTHER_ORG, PAY, paymentFacts as payment, parsedRow as row } from '../testing/payments';
import { findPaymentUuids, type MatchOptions, type MatchResult, type PaymentFacts } from './matching';
import type { ParseItem } from './rows';

const one = async (item: ParseItem, payments: PaymentFacts[] = [payment()], options: Partial<MatchOptions> = {}) =>
  (await match([item], payments, options))[0] as MatchResult;

describe('a matched row', () => {
  it('names the payment, the reference it was found in, the amount and the booking date', async () => {
    expect(await one(row())).toEqual({
      row: 1,
      outcome: 'matched',
      payment_uuid: PAY,
      reference: PAY,
      amount: { value: '5000', currency: 'CHF' },
      credit: true,
      booking_date: '2025-03-12',
    });
  });
});

describe('rule 1: a payment uuid in the references', () => {
  it.each([
    ['hyphenated', PAY],
    ['32 hex digits', PAY.replaceAll('-', '')],
    ['upper case', PAY.toUpperCase()],
    ['inside text', `Spende/${PAY.replaceAll('-', '').toUpperCase()}: danke`],
    ['wrapped across lines', `Spende ${PAY.slice(0, 20)}\n${PAY.slice(20)}`],
    [
      'wrapped twice, in hex form',
      `Ref:${PAY.replaceAll('-', '').slice(0, 12)} ${PAY.replaceAll('-', '').slice(12, 24)} ${PAY.replaceAll('-', '').slice(24)}`,
    ],
    ['as Ustrd lines of 35 characters', `Spende fuer das Projekt Sonne ${PAY.slice(0, 5)} ${PAY.slice(5)} Danke`],
  ])('is found %s', async (_, text) => {
    expect(await one(row({ references: [text], reference: text }))).toMatchObject({
      outcome: 'matched',
      payment_uuid: PAY,
    });
  });

  it('is searched in every reference text, in order', async () => {
    const result = await one(row({ references: ['210000000003139471430009017', `Spende ${PAY}`] }));
    expect(result).toMatchObject({ outcome: 'matched', reference: `Spende ${PAY}` });
  });

  it.each([
    ['no references', []],
    ['a QR reference', ['210000000003139471430009017']],
    ['31 hex digits', [PAY.replaceAll('-', '').slice(1)]],
    ['33 hex digits', [`${PAY.replaceAll('-', '')}a`]],
    ['a hex prefix', [`f${PAY}`]],
    ['a broken group', [PAY.replace('-3c1f-', '-3c1-')]],
    ['a 40-hex hash', ['3f786850e387550fdab836ed7e6dc881de23001b']],
  ])('is not found in %s: no_reference', async (_, references) => {
    expect(await one(row({ references }))).toMatchObject({ outcome: 'unmatched', reason: 'no_reference' });
  });

  it('lists candidates once, lower case and hyphenated', () => {
    expect(findPaymentUuids([`${PAY.toUpperCase()} ${PAY.replaceAll('-', '')}`, 'x'])).toEqual([
      { uuid: PAY, text: `${PAY.toUpperCase()} ${PAY.replaceAll('-', '')}` },
    ]);
  });
});

describe('rule 2: a payment of the organisation', () => {
  it('refuses an unknown uuid and one of another organisation alike, revealing nothing', async () => {
    const unknown = await one(row(), []);
    const foreign = await one(row(), [payment({ organisation_uuid: OTHER_ORG })]);
    expect(unknown).toMatchObject({ outcome: 'unmatched', reason: 'payment_not_found' });
    expect(foreign).toEqual(unknown);
    expect(foreign).not.toHaveProperty('payment_uuid');
    expect(foreign).not.toHaveProperty('expected');
  });

  it('takes the first uuid that is a payment of the organisation', async () => {
    const other = '1b5c1e4e-3c1f-4f5e-9a53-2d0e7b6f8a10';
    const text = `${OTHER_ORG} ${other} ${PAY}`;
    const result = await one(row({ references: [text] }), [
      payment({ uuid: other, organisation_uuid: OTHER_ORG }),
      payment(),
    ]);
    expect(result).toMatchObject({ outcome: 'matched', payment_uuid: PAY });
  });
});

describe('rules 3 to 7: the row fits the payment', () => {
  it.each([
    ['a debit', row({ credit: false }), payment(), 'debit_entry', undefined],
    [
      'another currency',
      row({ currency: 'EUR' }),
      payment(),
      'currency_mismatch',
      { amount: { value: '5000', currency: 'CHF' } },
    ],
    [
      'a smaller amount',
      row({ amount_minor: 4999 }),
      payment(),
      'amount_mismatch',
      { amount: { value: '5000', currency: 'CHF' } },
    ],
    [
      'a larger amount',
      row({ amount_minor: 5001 }),
      payment(),
      'amount_mismatch',
      { amount: { value: '5000', currency: 'CHF' } },
    ],
    [
      'a booking the day before creation',
      row({ booking_date: '2025-03-09' }),
      payment(),
      'date_out_of_range',
      { booking_date_from: '2025-03-10', booking_date_to: '2025-04-09' },
    ],
    [
      'a booking 31 days after',
      row({ booking_date: '2025-04-10' }),
      payment(),
      'date_out_of_range',
      { booking_date_from: '2025-03-10', booking_date_to: '2025-04-09' },
    ],
    ['a pending payment', row(), payment({ status: 'pending' }), 'payment_not_settled', { status: 'succeeded' }],
    ['a failed payment', row(), payment({ status: 'failed' }), 'payment_not_settled', { status: 'succeeded' }],
  ])('refuses %s', async (_, item, facts, reason, expected) => {
    const result = await one(item, [facts]);
    expect(result).toMatchObject({ outcome: 'unmatched', reason, payment_uuid: PAY });
    expect(result.expected).toEqual(expected);
  });

  it('checks in order: debit before currency before amount before date before status', async () => {
    const all = row({ credit: false, currency: 'EUR', amount_minor: 1, booking_date: '2020-01-01' });
    expect(await one(all, [payment({ status: 'failed' })])).toMatchObject({ reason: 'debit_entry' });
    expect(await one({ ...all, credit: true }, [payment({ status: 'failed' })])).toMatchObject({
      reason: 'currency_mismatch',
    });
    expect(
      await one(row({ amount_minor: 1, booking_date: '2020-01-01' }), [payment({ status: 'failed' })]),
    ).toMatchObject({
      reason: 'amount_mismatch',
    });
    expect(await one(row({ booking_date: '2020-01-01' }), [payment({ status: 'failed' })])).toMatchObject({
      reason: 'date_out_of_range',
    });
  });

  it.each([
    ['the creation day (UTC)', '2025-03-10', {}],
    ['30 days after', '2025-04-09', {}],
    ['the day itself with 0 days allowed', '2025-03-10', { maxSettlementDays: 0 }],
    ['90 days after when allowed', '2025-06-08', { maxSettlementDays: 90 }],
  ])('accepts a booking on %s', async (_, booking_date, options) => {
    expect(await one(row({ booking_date }), [payment()], options)).toMatchObject({ outcome: 'matched' });
  });

  it('refuses the next day with 0 days allowed', async () => {
    expect(await one(row({ booking_date: '2025-03-11' }), [payment()], { maxSettlementDays: 0 })).toMatchObject({
      reason: 'date_out_of_range',
      expected: { booking_date_from: '2025-03-10', booking_date_to: '2025-03-10' },
    });
  });

  it('refuses bad options', async () => {
    await expect(match([row()], [], { maxSettlementDays: -1 })).rejects.toThrow(RangeError);
    await expect(match([row()], [], { batchSize: 0 })).rejects.toThrow(RangeError);
  });
});

describe('rule 8: one row per payment', () => {
  it('reports later rows for a matched payment as duplicates, also across lookup batches', async () => {
    const results = await match(
      [row({ row: 2 }), row({ row: 3, amount_minor: 1 }), row({ row: 5 }), row({ row: 9 })],
      [payment()],
      {
        batchSize: 1,
      },
    );
    expect(results.map((r) => [r.row, r.outcome, r.reason, r.duplicate_of_row])).toEqual([
      [2, 'matched', undefined, undefined],
      [3, 'unmatched', 'amount_mismatch', undefined],
      [5, 'unmatched', 'duplicate_entry', 2],
      [9, 'unmatched', 'duplicate_entry', 2],
    ]);
  });

  it('lets a later row match when the earlier one for the payment did not', async () => {
    const results = await match([row({ row: 1, amount_minor: 1 }), row({ row: 2 })]);
    expect(results.map((r) => r.outcome)).toEqual(['unmatched', 'matched']);
  });
});
