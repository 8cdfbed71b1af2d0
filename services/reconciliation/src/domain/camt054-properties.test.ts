import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCamt054, CAMT054_VERSIONS, type CamtEntry, type CamtTx } from '../testing/camt054-builder';
import { collect, splitAt, utf8 } from '../testing/chunks';
import { parseCamt054 } from './camt054';
import { minorToDecimal } from './money';
import type { ParsedRow, ParseItem } from './rows';

// Text as XML carries it: no control characters, no CR (XML turns CRLF into LF), no edge spaces.
const text = fc
  .string({
    unit: fc.constantFrom('a', 'Z', '0', '9', '-', ' ', '<', '>', '&', '"', "'", 'ü', '€', '😀', ']]>'),
    maxLength: 20,
  })
  .map((value) => value.trim());
const day = fc
  .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
  .map((date) => date.toISOString().slice(0, 10));
const money = fc
  .record({ minor: fc.integer({ min: 0, max: 10 ** 12 }), currency: fc.constantFrom('CHF', 'EUR', 'JPY', 'KWD') })
  .map(({ minor, currency }) => ({ minor, currency, text: minorToDecimal(minor, currency) }));

const transaction = fc.record({
  amount: money,
  amountInDetails: fc.boolean(),
  credit: fc.option(fc.boolean(), { nil: undefined }),
  endToEndId: fc.option(fc.oneof(text, fc.constant('NOTPROVIDED')), { nil: undefined }),
  creditorReference: fc.option(text, { nil: undefined }),
  unstructured: fc.option(fc.array(text, { maxLength: 3 }), { nil: undefined }),
  accountServicerReference: fc.option(text, { nil: undefined }),
});
const entry = fc.record({
  amount: money,
  credit: fc.boolean(),
  bookingDate: day,
  bookingTime: fc.option(fc.constantFrom('00:00:00', '12:30:00+02:00', '23:59:59.999Z'), { nil: undefined }),
  valueDate: fc.option(day, { nil: undefined }),
  status: fc.option(fc.constantFrom('BOOK', 'PDNG', 'INFO'), { nil: undefined }),
  entryReference: fc.option(text, { nil: undefined }),
  accountServicerReference: fc.option(text, { nil: undefined }),
  additionalInfo: fc.option(text, { nil: undefined }),
  transactions: fc.option(fc.array(transaction, { maxLength: 3 }), { nil: undefined }),
});
type GeneratedEntry = typeof entry extends fc.Arbitrary<infer T> ? T : never;
type GeneratedTx = typeof transaction extends fc.Arbitrary<infer T> ? T : never;

const nonEmpty = (values: (string | undefined)[]): string[] =>
  values.filter((value): value is string => value !== undefined && value !== '');

function expectedRow(e: GeneratedEntry, tx: GeneratedTx | undefined, row: number): ParsedRow {
  const amount = tx?.amount ?? e.amount;
  const references = tx
    ? nonEmpty([
        tx.endToEndId === 'NOTPROVIDED' ? undefined : tx.endToEndId,
        tx.creditorReference,
        nonEmpty(tx.unstructured ?? []).join(' '),
        tx.accountServicerReference,
      ])
    : nonEmpty([e.additionalInfo, e.accountServicerReference]);
  const entryReference = nonEmpty([e.entryReference, e.accountServicerReference])[0];
  return {
    row,
    amount_minor: amount.minor,
    currency: amount.currency,
    credit: tx?.credit ?? e.credit,
    booking_date: e.bookingDate,
    references,
    ...(e.valueDate ? { value_date: e.valueDate } : {}),
    ...(references[0] !== undefined ? { reference: references[0] } : {}),
    ...(entryReference !== undefined ? { entry_reference: entryReference } : {}),
    ...(e.status ? { status: e.status } : {}),
  };
}

function expectedRows(entries: GeneratedEntry[], version: string): ParsedRow[] {
  const rows: ParsedRow[] = [];
  for (const e of entries) {
    const txs = e.transactions ?? [];
    if (txs.length === 0) rows.push(expectedRow(e, undefined, rows.length + 1));
    // .02 has no CdtDbtInd in TxDtls: the entry's applies.
    for (const tx of txs) {
      rows.push(expectedRow(e, version === '02' ? { ...tx, credit: undefined } : tx, rows.length + 1));
    }
  }
  return rows;
}

const document = fc.record({
  entries: fc.array(entry, { maxLength: 6 }),
  version: fc.constantFrom(...CAMT054_VERSIONS),
  cuts: fc.array(fc.nat(), { maxLength: 8 }),
});

describe('camt.054 round trip', () => {
  it('generated documents with random entries parse back to the same rows, however the bytes are cut', async () => {
    await fc.assert(
      fc.asyncProperty(document, async ({ entries, version, cuts }) => {
        const xml = buildCamt054(entries as CamtEntry[], version);
        const items = await collect(parseCamt054(splitAt(utf8(xml), cuts)));
        expect(items).toEqual(expectedRows(entries, version));
      }),
      { numRuns: 300 },
    );
  });

  it('a document cut off anywhere yields a prefix of its rows and then one file error, never a throw', async () => {
    const entries = fc.array(entry, { minLength: 1, maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(entries, fc.nat(), async (generated, at) => {
        const bytes = utf8(buildCamt054(generated as CamtEntry[]));
        const full = await collect(parseCamt054([bytes]));
        // Cut inside the document: removing only trailing white space leaves it whole.
        const cut = at % Buffer.from(buildCamt054(generated as CamtEntry[]).trimEnd()).length;
        const items: ParseItem[] = await collect(parseCamt054([bytes.subarray(0, cut)]));
        const last = items.at(-1);
        expect(last && 'error' in last && last.error.scope).toBe('file');
        expect(items.slice(0, -1)).toEqual(full.slice(0, items.length - 1));
      }),
      { numRuns: 200 },
    );
  });

  it('every transaction of a random entry is a row (no TxDtls: the entry is)', async () => {
    const shapes = fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 10 });
    await fc.assert(
      fc.asyncProperty(shapes, async (counts) => {
        const tx: CamtTx = { amount: { text: '1.00', currency: 'CHF' }, credit: true };
        const built = counts.map((count) => ({
          amount: { text: '9.00', currency: 'CHF' },
          credit: true,
          bookingDate: '2025-03-31',
          transactions: Array.from({ length: count }, () => tx),
        }));
        const items = await collect(parseCamt054([buildCamt054(built)]));
        expect(items.map((item) => item.row)).toEqual(
          Array.from({ length: counts.reduce((sum, n) => sum + Math.max(n, 1), 0) }, (_, i) => i + 1),
        );
      }),
    );
  });
});
