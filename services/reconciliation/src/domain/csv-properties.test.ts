import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collect, splitAt, utf8 } from '../testing/chunks';
import { groupThousands } from '../testing/csv-sample';
import { csvLine } from '../testing/csv-writer';
import { parseCsv } from './csv';
import { minorToDecimal } from './money';
import type { ParsedRow, ParseItem } from './rows';

const text = fc.string({
  unit: fc.constantFrom('a', 'Z', '7', ' ', ',', ';', '"', "'", '\n', '\r', 'ä', '€', '-', '\t'),
  maxLength: 12,
});
const day = fc
  .date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
  .map((date) => date.toISOString().slice(0, 10));

const record = fc.record({
  date: day,
  swissDate: fc.boolean(),
  valueDate: fc.option(day, { nil: undefined }),
  minor: fc.integer({ min: 0, max: 10 ** 12 }),
  currency: fc.constantFrom('CHF', 'EUR', 'JPY', 'KWD', 'CLF'),
  credit: fc.boolean(),
  plus: fc.boolean(),
  grouping: fc.constantFrom(undefined, "'", '’', ' '),
  reference: text,
  description: text,
  entryReference: text,
  notes: text,
});
type Generated = typeof record extends fc.Arbitrary<infer T> ? T : never;

const COLUMNS = ['date', 'value_date', 'amount', 'currency', 'reference', 'description', 'entry_reference', 'notes'];
const swiss = (date: string) => date.split('-').reverse().join('.');

function fieldsOf(r: Generated): Record<string, string> {
  const decimal = minorToDecimal(r.minor, r.currency);
  const amount = r.grouping ? groupThousands(decimal, r.grouping) : decimal;
  return {
    date: r.swissDate ? swiss(r.date) : r.date,
    value_date: r.valueDate ?? '',
    amount: `${r.credit ? (r.plus ? '+' : '') : '-'}${amount}`,
    currency: r.currency,
    reference: r.reference,
    description: r.description,
    entry_reference: r.entryReference,
    notes: r.notes,
  };
}

function expected(r: Generated, row: number): ParsedRow {
  const reference = r.reference.trim();
  const description = r.description.trim();
  const entryReference = r.entryReference.trim();
  return {
    row,
    amount_minor: r.minor,
    currency: r.currency,
    credit: r.credit,
    booking_date: r.date,
    references: [reference, description].filter((value) => value !== ''),
    ...(r.valueDate ? { value_date: r.valueDate } : {}),
    ...(reference ? { reference } : {}),
    ...(description ? { description } : {}),
    ...(entryReference ? { entry_reference: entryReference } : {}),
  };
}

const file = fc.record({
  records: fc.array(record, { maxLength: 25 }),
  columns: fc.shuffledSubarray(COLUMNS, { minLength: COLUMNS.length }),
  upper: fc.boolean(),
  delimiter: fc.constantFrom(',' as const, ';' as const),
  lineEnding: fc.constantFrom('\r\n' as const, '\n' as const),
  bom: fc.boolean(),
  cuts: fc.array(fc.nat(), { maxLength: 8 }),
});

function serialise(f: typeof file extends fc.Arbitrary<infer T> ? T : never) {
  const options = { delimiter: f.delimiter, lineEnding: f.lineEnding };
  let csv = `${f.bom ? '\ufeff' : ''}${csvLine(
    f.columns.map((c) => (f.upper ? c.toUpperCase() : c)),
    options,
  )}`;
  let line = 2;
  const rows: ParseItem[] = [];
  for (const r of f.records) {
    const fields = fieldsOf(r);
    const written = csvLine(
      f.columns.map((c) => fields[c] ?? ''),
      options,
    );
    rows.push(expected(r, line));
    line += written.match(/\r\n|\r|\n/g)?.length ?? 0;
    csv += written;
  }
  return { csv, rows };
}

describe('CSV round trip', () => {
  it('random records (quotes, delimiters, line breaks in texts) written then read give the same rows', async () => {
    await fc.assert(
      fc.asyncProperty(file, async (f) => {
        const { csv, rows } = serialise(f);
        expect(await collect(parseCsv(splitAt(utf8(csv), f.cuts)))).toEqual(rows);
      }),
      { numRuns: 300 },
    );
  });

  it('reads the same items however the bytes are cut, also for malformed files', async () => {
    const piece = fc.constantFrom(
      'date',
      'amount',
      'currency',
      'reference',
      ',',
      ';',
      '"',
      '\r\n',
      '\n',
      '\r',
      '1.00',
      'CHF',
      '2025-03-31',
      "1'0",
      'ü',
      ' ',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { maxLength: 60 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        async (pieces, cuts) => {
          const bytes = utf8(`date,amount,currency,reference\n${pieces.join('')}`);
          const whole = await collect(parseCsv([bytes]));
          expect(await collect(parseCsv(splitAt(bytes, cuts)))).toEqual(whole);
        },
      ),
      { numRuns: 300 },
    );
  });
});
