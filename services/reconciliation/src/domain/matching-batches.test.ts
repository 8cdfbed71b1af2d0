import { describe, expect, it } from 'vitest';
import { collect } from '../testing/chunks';
import {
  matchAgainst as match,
  ORG,
  paymentFacts as payment,
  paymentStore,
  parsedRow as row,
} from '../testing/payments';
import { matchRows } from './matching';
import { rowError } from './rows';

describe('errors and batching', () => {
  it('passes parse errors through as error results, in order', async () => {
    const results = await match([rowError(1, 'invalid_date', 'bad date'), row({ row: 2 })]);
    expect(results).toEqual([
      { row: 1, outcome: 'error', reason: 'invalid_date', message: 'bad date' },
      expect.objectContaining({ row: 2, outcome: 'matched' }),
    ]);
  });

  it('looks payments up at most batchSize at a time, in file order, with lower-case hyphenated uuids', async () => {
    const uuid = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
    const payments = Array.from({ length: 250 }, (_, i) => payment({ uuid: uuid(i) }));
    const items = payments.flatMap((p, i) => [
      row({ row: 2 * i + 1, references: [p.uuid.toUpperCase().replaceAll('-', '')] }),
      row({ row: 2 * i + 2, references: ['no uuid here'] }),
    ]);
    const { calls, lookup } = paymentStore(payments);
    const results = await collect(matchRows(items, lookup, { organisationUuid: ORG }));
    expect(results.map((r) => r.row)).toEqual(items.map((item) => item.row));
    expect(results.filter((r) => r.outcome === 'matched')).toHaveLength(250);
    expect(calls.map((call) => call.length)).toEqual([100, 100, 50]);
    expect(calls.flat()).toEqual(payments.map((p) => p.uuid));
  });

  it('reads rows from an async iterable lazily (a batch at a time)', async () => {
    let read = 0;
    async function* rows() {
      for (let i = 1; i <= 5000; i++) {
        read++;
        yield row({ row: i, references: [] });
      }
    }
    const results = matchRows(rows(), paymentStore([]).lookup, { organisationUuid: ORG });
    await results.next();
    expect(read).toBeLessThanOrEqual(1000);
  });
});
