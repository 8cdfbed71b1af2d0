import { describe, expect, it } from 'vitest';
import { collect, utf8 } from '../testing/chunks';
import { csvSample } from '../testing/csv-sample';
import { parseCsv } from './csv';
import type { ParseItem } from './rows';

const parse = (text: string | Uint8Array): Promise<ParseItem[]> =>
  collect(parseCsv([typeof text === 'string' ? utf8(text) : text]));

const HEADER = 'date,amount,currency,reference\n';
const one = async (line: string, header = HEADER) => {
  const items = await parse(`${header}${line}\n`);
  expect(items).toHaveLength(1);
  return items[0];
};
const uuid = '0b5c1e4e-3c1f-4f5e-9a53-2d0e7b6f8a10';

describe('the sample file', () => {
  it('gives one row per record, numbered by the line the record starts on', async () => {
    const text = csvSample({
      first: { uuid, amount_minor: 125_000 },
      second: { uuid: uuid.replace('0b', '1b'), amount_minor: 2550 },
      third: { uuid: uuid.replace('0b', '2b'), amount_minor: 10_000, currency: 'EUR' },
      bookingDate: '2025-03-31',
    });
    const items = await parse(text);
    expect(items.map((item) => item.row)).toEqual([2, 3, 4, 5, 7]);
    expect(items[0]).toEqual({
      row: 2,
      amount_minor: 125_000,
      currency: 'CHF',
      credit: true,
      booking_date: '2025-03-31',
      value_date: '2025-03-31',
      reference: uuid.replaceAll('-', ''),
      description: 'Gutschrift Anna Muster',
      references: [uuid.replaceAll('-', ''), 'Gutschrift Anna Muster'],
      entry_reference: 'ZV20250331/000001',
    });
    expect(items[2]).toMatchObject({ row: 4, amount_minor: 1250, credit: false, references: ['Kontoführungsgebühr'] });
    expect(items[2]).not.toHaveProperty('reference');
    expect(items[3]).toMatchObject({ currency: 'EUR', description: 'Spende "Winter"; danke\r\nvielmals' });
  });
});

describe('header', () => {
  it('names columns in any order and case, with spaces or hyphens for _, ignoring unknown ones', async () => {
    const header = ' Reference ;Saldo;CURRENCY;Amount;Value-Date;date;Entry Reference;DESCRIPTION\n';
    expect(await one('r1;9;chf;5.00;01.04.2025;31.03.2025;E1;Text', header)).toEqual({
      row: 2,
      amount_minor: 500,
      currency: 'CHF',
      credit: true,
      booking_date: '2025-03-31',
      value_date: '2025-04-01',
      reference: 'r1',
      description: 'Text',
      entry_reference: 'E1',
      references: ['r1', 'Text'],
    });
  });

  it('detects the delimiter from the header line: semicolon when it has more semicolons than commas', async () => {
    expect(await one('2025-03-31;1,50;CHF;x', 'date;amount;currency;reference;"a,b,c,d"\n')).toMatchObject({
      error: { code: 'invalid_amount' },
    });
    expect(await one('2025-03-31,"1.50",CHF,"a;b"', 'date,amount,currency,reference\n')).toMatchObject({
      amount_minor: 150,
      reference: 'a;b',
    });
  });

  it('takes the first of two columns with the same name', async () => {
    expect(await one('2025-03-31,1,CHF,first,second', 'date,amount,currency,reference,Reference\n')).toMatchObject({
      reference: 'first',
    });
  });

  it.each([
    ['date,currency,reference', 'amount'],
    ['datum,betrag,währung,referenz', 'date, amount, currency, reference'],
    ['date;amount;currency', 'reference'],
  ])('refuses the whole file when required columns are missing (%s)', async (header, missing) => {
    const items = await parse(`${header}\n2025-03-31,1.00,CHF,x\n`);
    expect(items).toEqual([
      { row: 1, error: { scope: 'file', code: 'missing_columns', message: expect.stringContaining(missing) } },
    ]);
  });

  it.each([
    ['an empty file', ''],
    ['a BOM alone', '\ufeff'],
    ['blank lines', '\r\n\n \n'],
  ])('reports %s as empty', async (_, text) => {
    expect(await parse(text)).toEqual([
      { row: 1, error: expect.objectContaining({ scope: 'file', code: 'empty_file' }) },
    ]);
  });
});

describe('values', () => {
  it.each([
    ['1234.50', 123_450, true],
    ['1234.5', 123_450, true],
    ['1234', 123_400, true],
    ["1'234.50", 123_450, true],
    ['1’234.50', 123_450, true],
    ['"1 234 567.00"', 123_456_700, true],
    ['1\u00a0234.00', 123_400, true],
    ["-1'234.50", 123_450, false],
    ['-0.05', 5, false],
    ['+5', 500, true],
    ['  7.25 ', 725, true],
  ])('reads the amount %s', async (amount, minor, credit) => {
    expect(await one(`2025-03-31,${amount},CHF,r`)).toMatchObject({ amount_minor: minor, credit });
  });

  it.each([
    ["12'34.50", 'invalid_amount'],
    ["1'234 567.00", 'invalid_amount'],
    ["1'2345.00", 'invalid_amount'],
    ['"1,50"', 'invalid_amount'],
    ['1.5e3', 'invalid_amount'],
    ['CHF 5.00', 'invalid_amount'],
    ['--5', 'invalid_amount'],
    ['- 5', 'invalid_amount'],
    ['1.505', 'too_many_minor_digits'],
    ['"1,000,000.00"', 'invalid_amount'],
  ])('refuses the amount %s (%s)', async (amount, code) => {
    expect(await one(`2025-03-31,${amount},CHF,r`)).toMatchObject({ row: 2, error: { scope: 'row', code } });
  });

  it('applies the currency exponent and accepts lower-case codes', async () => {
    expect(await one('2025-03-31,1500,jpy,r')).toMatchObject({ amount_minor: 1500, currency: 'JPY' });
    expect(await one('2025-03-31,1500.00,JPY,r')).toMatchObject({ error: { code: 'too_many_minor_digits' } });
    expect(await one('2025-03-31,1.234,KWD,r')).toMatchObject({ amount_minor: 1234 });
    expect(await one('2025-03-31,1.00,CHX,r')).toMatchObject({ error: { code: 'unknown_currency' } });
    expect(await one('2025-03-31,1.00,€,r')).toMatchObject({ error: { code: 'unknown_currency' } });
  });

  it.each([
    ['2025-02-30', 'date'],
    ['31.04.2025', 'date'],
    ['2025/03/31', 'date'],
    ['31-03-2025', 'date'],
  ])('refuses the date %s', async (date) => {
    expect(await one(`${date},1.00,CHF,r`)).toMatchObject({ error: { scope: 'row', code: 'invalid_date' } });
  });

  it('refuses a bad value_date and accepts an empty one', async () => {
    const header = 'date,value_date,amount,currency,reference\n';
    expect(await one('2025-03-31,2025-02-30,1,CHF,r', header)).toMatchObject({ error: { code: 'invalid_date' } });
    expect(await one('2025-03-31,,1,CHF,r', header)).not.toHaveProperty('value_date');
  });

  it.each([
    [',1.00,CHF,r', 'date'],
    ['2025-03-31, ,CHF,r', 'amount'],
    ['2025-03-31,1.00,,r', 'currency'],
    ['2025-03-31', 'amount'],
  ])('reports a missing value (%s)', async (line, column) => {
    expect(await one(line)).toMatchObject({ error: { code: 'missing_value', message: `The ${column} is empty` } });
  });

  it('ignores empty fields beyond the header (a trailing delimiter)', async () => {
    expect(await one('2025-03-31,1.00,CHF,r,,')).toMatchObject({ amount_minor: 100, reference: 'r' });
  });

  it('accepts an empty reference (matching then reports it as unmatched)', async () => {
    expect(await one('2025-03-31,1.00,CHF,')).toMatchObject({ references: [] });
  });
});

describe('records', () => {
  it('reports bad rows one by one and reads on', async () => {
    const items = await parse(
      `${HEADER}2025-03-31,1,CHF,a\n2025-13-01,2,CHF,b\n2025-03-31,3,CHF,c,extra\n"x"y,4,CHF,d\n2025-03-31,5,CHF,e\n`,
    );
    expect(items.map((item) => ('error' in item ? `${item.row}:${item.error.code}` : `${item.row}:ok`))).toEqual([
      '2:ok',
      '3:invalid_date',
      '4:too_many_fields',
      '5:malformed_quotes',
      '6:ok',
    ]);
  });

  it('numbers rows by line with CRLF, LF and CR endings, blank lines and multi-line fields', async () => {
    const text = `\n${HEADER}\r\n2025-03-31,1,CHF,"a\r\nb\nc"\r2025-03-31,2,CHF,x\r\n\r\n2025-03-31,3,CHF,y`;
    const items = await parse(text);
    expect(items.map((item) => item.row)).toEqual([4, 7, 9]);
    expect(items[0]).toMatchObject({ reference: 'a\r\nb\nc' });
  });

  it('keeps "" as a quote and quoted delimiters and line breaks as text', async () => {
    expect(await one('2025-03-31,1,CHF,"say ""hi"", then\nleave"')).toMatchObject({
      reference: 'say "hi", then\nleave',
    });
    expect(await one('2025-03-31,1,CHF,a"b')).toMatchObject({ reference: 'a"b' });
  });

  it('ends with a file error when a quote is never closed, after the rows before it', async () => {
    const items = await parse(`${HEADER}2025-03-31,1,CHF,a\n2025-03-31,2,CHF,"b\n2025-03-31,3,CHF,c\n`);
    expect(items).toEqual([
      expect.objectContaining({ row: 2, reference: 'a' }),
      { row: 3, error: { scope: 'file', code: 'unterminated_quote', message: expect.stringContaining('line 3') } },
    ]);
  });

  it('ends with a file error when a record is longer than 65,536 characters', async () => {
    const items = await parse(`${HEADER}2025-03-31,1,CHF,a\n2025-03-31,2,CHF,${'x'.repeat(70_000)}\n`);
    expect(items).toEqual([
      expect.objectContaining({ row: 2 }),
      expect.objectContaining({ row: 3, error: expect.objectContaining({ code: 'record_too_large' }) }),
    ]);
    expect(await parse(`date,${'x'.repeat(70_000)}`)).toMatchObject([{ error: { code: 'record_too_large' } }]);
  });

  it('refuses a file that is not UTF-8, after the rows before it', async () => {
    const bytes = Buffer.concat([Buffer.from(`${HEADER}2025-03-31,1,CHF,a\n`), Buffer.from([0x47, 0xfc, 0x6e, 0x0a])]);
    const items = await collect(parseCsv([bytes.subarray(0, 40), bytes.subarray(40)]));
    expect(items.at(-1)).toMatchObject({ error: { scope: 'file', code: 'invalid_encoding' } });
  });

  it('passes the errors of the source stream through (the file is retried, not reported)', async () => {
    async function* broken() {
      yield Buffer.from(HEADER);
      throw new Error('connection reset');
    }
    await expect(collect(parseCsv(broken()))).rejects.toThrow('connection reset');
  });
});
