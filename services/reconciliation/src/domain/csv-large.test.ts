import { describe, expect, it } from 'vitest';
import { generateCsvStream, syntheticAmountMinor } from '../testing/csv-generator';
import { parseCsv } from './csv';

describe('a 100,000-row CSV', () => {
  it('is read as a stream with bounded heap growth', async () => {
    const rows = 100_000;
    const baseline = process.memoryUsage().heapUsed;
    let peak = baseline;
    let count = 0;
    let errors = 0;
    let last = 0;
    let total = 0;
    for await (const item of parseCsv(generateCsvStream(rows, { delimiter: ';' }))) {
      count++;
      if ('error' in item) errors++;
      else total += item.amount_minor;
      last = item.row;
      if (count % 1000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
    expect({ count, errors, last }).toEqual({ count: rows, errors: 0, last: rows + 1 });
    let expectedTotal = 0;
    for (let index = 0; index < rows; index++) expectedTotal += syntheticAmountMinor(index);
    expect(total).toBe(expectedTotal);
    // The file is about 11 MB; growth is bounded by garbage between collections, not by the file.
    expect(peak - baseline).toBeLessThan(100 * 1024 * 1024);
  });
});
