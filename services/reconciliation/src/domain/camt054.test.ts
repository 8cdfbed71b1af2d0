import { describe, expect, it } from 'vitest';
import { buildCamt054, CAMT054_VERSIONS, type CamtEntry, type CamtTx } from '../testing/camt054-builder';
import { camt054Sample } from '../testing/camt054-sample';
import { collect, utf8 } from '../testing/chunks';
import { parseCamt054 } from './camt054';
import type { ParseItem } from './rows';

const parse = (xml: string | Uint8Array): Promise<ParseItem[]> =>
  collect(parseCamt054([typeof xml === 'string' ? utf8(xml) : xml]));

const base: CamtEntry = {
  amount: { text: '25.00', currency: 'CHF' },
  credit: true,
  bookingDate: '2025-03-31',
  status: 'BOOK',
};
const tx = (overrides: CamtTx = {}): CamtTx => ({
  amount: { text: '25.00', currency: 'CHF' },
  credit: true,
  ...overrides,
});
const entryRows = (entry: Partial<CamtEntry>, version = CAMT054_VERSIONS[6]) =>
  parse(buildCamt054([{ ...base, ...entry }], version));

const uuids = ['0b5c1e4e-3c1f-4f5e-9a53-2d0e7b6f8a10', '1b5c1e4e-3c1f-4f5e-9a53-2d0e7b6f8a10'];
const uuids2 = ['2b5c1e4e-3c1f-4f5e-9a53-2d0e7b6f8a10', '3b5c1e4e-3c1f-4f5e-9a53-2d0e7b6f8a10'];

describe('the Swiss sample (camt.054.001.08)', () => {
  const xml = camt054Sample({
    single: { uuid: uuids[0] as string, amount_minor: 5000 },
    qrBill: { uuid: uuids[1] as string, amount_minor: 2550 },
    batch: [
      { uuid: uuids2[0] as string, amount_minor: 10_000 },
      { uuid: uuids2[1] as string, amount_minor: 123_456 },
    ],
    bookingDate: '2025-03-31',
  });

  it('gives one row per transaction: 1 + 1 + 2', async () => {
    const rows = await parse(xml);
    expect(rows).toHaveLength(4);
    expect(rows[0]).toEqual({
      row: 1,
      amount_minor: 5000,
      currency: 'CHF',
      credit: true,
      booking_date: '2025-03-31',
      value_date: '2025-03-31',
      reference: uuids[0]?.replaceAll('-', ''),
      references: [uuids[0]?.replaceAll('-', ''), 'Spende Frühling', '20250331001SCT'],
      entry_reference: '250331CH0A1B2C3D',
      status: 'BOOK',
    });
    expect(rows[1]).toMatchObject({ row: 2, amount_minor: 2550, reference: '210000000003139471430009017' });
    expect(rows[1]).toMatchObject({ references: expect.arrayContaining([`Spende ${uuids[1]}`]) });
    expect(rows[2]).toMatchObject({ row: 3, amount_minor: 10_000, entry_reference: '250331CH0A1B2C3F' });
    expect(rows[3]).toMatchObject({ row: 4, amount_minor: 123_456, reference: `Spende ${uuids2[1]}` });
  });

  it('reads the same with a namespace prefix and in one-byte chunks', async () => {
    const prefixed = xml.replace(/<(\/?)([A-Za-z]+)([ >/])/g, '<$1c:$2$3').replace('xmlns=', 'xmlns:c=');
    expect(await parse(prefixed)).toEqual(await parse(xml));
    const bytes = utf8(xml);
    const single = await collect(parseCamt054(Array.from(bytes, (byte) => Uint8Array.of(byte))));
    expect(single).toEqual(await parse(xml));
  });
});

describe('every version from .02 to .08', () => {
  it.each(CAMT054_VERSIONS)('camt.054.001.%s: amounts, status and references', async (version) => {
    const rows = await entryRows(
      {
        transactions: [
          tx({ endToEndId: 'E2E-1' }),
          tx({ amount: { text: '0.5', currency: 'CHF' }, unstructured: ['x'] }),
        ],
      },
      version,
    );
    expect(rows).toEqual([
      expect.objectContaining({ row: 1, amount_minor: 2500, credit: true, status: 'BOOK', reference: 'E2E-1' }),
      expect.objectContaining({ row: 2, amount_minor: 50, credit: true, status: 'BOOK', reference: 'x' }),
    ]);
  });
});

describe('fields', () => {
  it('takes the amount from TxDtls/Amt, else AmtDtls/TxAmt/Amt, else (single TxDtls) Ntry/Amt', async () => {
    const rows = await entryRows({
      amount: { text: '99.00', currency: 'CHF' },
      transactions: [
        tx({ amount: { text: '1.00', currency: 'EUR' } }),
        tx({ amount: { text: '2.00', currency: 'USD' }, amountInDetails: true }),
      ],
    });
    expect(rows).toMatchObject([
      { amount_minor: 100, currency: 'EUR' },
      { amount_minor: 200, currency: 'USD' },
    ]);
    expect(await entryRows({ transactions: [tx({ amount: undefined })] })).toMatchObject([{ amount_minor: 2500 }]);
    expect(await entryRows({ transactions: [tx({ amount: undefined }), tx({ amount: undefined })] })).toMatchObject([
      { row: 1, error: { code: 'missing_amount' } },
      { row: 2, error: { code: 'missing_amount' } },
    ]);
  });

  it('takes CdtDbtInd from the TxDtls, else from the entry', async () => {
    const rows = await entryRows({ credit: true, transactions: [tx({ credit: false }), tx({ credit: undefined })] });
    expect(rows).toMatchObject([{ credit: false }, { credit: true }]);
    expect(await entryRows({ credit: false })).toMatchObject([{ credit: false }]);
  });

  it('reads BookgDt/DtTm as its date part and the value date', async () => {
    expect(await entryRows({ bookingTime: '23:59:59+01:00', valueDate: '2025-04-01' })).toMatchObject([
      { booking_date: '2025-03-31', value_date: '2025-04-01' },
    ]);
  });

  it('orders references: EndToEndId (not NOTPROVIDED), CdtrRefInf/Ref, Ustrd joined, AcctSvcrRef', async () => {
    const full = {
      endToEndId: 'E2E',
      creditorReference: 'RF18',
      unstructured: ['a', 'b'],
      accountServicerReference: 'ASR',
    };
    expect(await entryRows({ transactions: [tx(full)] })).toMatchObject([
      { reference: 'E2E', references: ['E2E', 'RF18', 'a b', 'ASR'] },
    ]);
    expect(
      await entryRows({ transactions: [tx({ ...full, endToEndId: 'NOTPROVIDED', creditorReference: ' ' })] }),
    ).toMatchObject([{ reference: 'a b', references: ['a b', 'ASR'] }]);
  });

  it('gives an entry without TxDtls one row, referenced by AddtlNtryInf and AcctSvcrRef', async () => {
    const rows = await entryRows({
      accountServicerReference: 'ASR-9',
      additionalInfo: 'Gutschrift 42',
      transactions: [],
    });
    expect(rows).toEqual([
      expect.objectContaining({
        reference: 'Gutschrift 42',
        references: ['Gutschrift 42', 'ASR-9'],
        entry_reference: 'ASR-9',
      }),
    ]);
    expect(await entryRows({ entryReference: 'NR1', accountServicerReference: 'ASR-9' })).toMatchObject([
      { entry_reference: 'NR1' },
    ]);
  });

  it('reads the status in both forms', async () => {
    expect(await entryRows({ status: 'PDNG' }, '05')).toMatchObject([{ status: 'PDNG' }]);
    expect(await entryRows({ status: 'INFO' }, '06')).toMatchObject([{ status: 'INFO' }]);
    expect(await entryRows({ status: undefined })).not.toHaveProperty('0.status');
  });
});

describe('bad rows are reported one by one', () => {
  it.each([
    ['no amount at all', { amount: undefined }, 'missing_amount'],
    ['no currency', { amount: { text: '1.00', currency: '' } }, 'missing_currency'],
    ['a comma decimal', { amount: { text: '12,50', currency: 'CHF' } }, 'invalid_amount'],
    ['a negative amount', { amount: { text: '-12.50', currency: 'CHF' } }, 'invalid_amount'],
    ['three decimals in CHF', { amount: { text: '1.234', currency: 'CHF' } }, 'too_many_minor_digits'],
    ['decimals in JPY', { amount: { text: '100.5', currency: 'JPY' } }, 'too_many_minor_digits'],
    ['an unknown currency', { amount: { text: '1.00', currency: 'XYZ' } }, 'unknown_currency'],
    ['no CdtDbtInd', { credit: undefined }, 'missing_credit_debit'],
    ['no booking date', { bookingDate: undefined }, 'missing_booking_date'],
    ['an impossible booking date', { bookingDate: '2025-02-30' }, 'invalid_date'],
    ['a malformed DtTm', { bookingDate: '31.03.2025', bookingTime: '10:00:00' }, 'invalid_date'],
    ['an impossible value date', { valueDate: '2025-13-01' }, 'invalid_date'],
  ] as const)('%s', async (_, entry, code) => {
    const xml = buildCamt054([base, { ...base, ...entry }, base]);
    expect(await parse(xml)).toEqual([
      expect.objectContaining({ row: 1, amount_minor: 2500 }),
      { row: 2, error: { scope: 'row', code, message: expect.any(String) } },
      expect.objectContaining({ row: 3, amount_minor: 2500 }),
    ]);
  });
});

describe('unreadable files end with one file error, after the rows before it', () => {
  const good = buildCamt054([base, base, base]);
  const fileError = (code: string, row = 1) => ({ row, error: { scope: 'file', code, message: expect.any(String) } });

  it.each([
    ['plain text', 'Datum;Betrag\n31.03.2025;10.00', 'not_xml'],
    ['a ZIP file', 'PK\u0003\u0004\u0014\u0000', 'not_xml'],
    ['JSON', '{"Document": {}}', 'not_xml'],
    ['an empty file', '', 'empty_file'],
    ['a camt.053 statement', '<Document><BkToCstmrStmt><Stmt/></BkToCstmrStmt></Document>', 'not_camt054'],
    ['a pain.001', '<Document><CstmrCdtTrfInitn/></Document>', 'not_camt054'],
    ['another root', '<html><body/></html>', 'not_camt054'],
    ['an empty Document', '<Document/>', 'not_camt054'],
    ['a Latin-1 declaration', '<?xml version="1.0" encoding="ISO-8859-1"?><Document/>', 'unsupported_encoding'],
    ['an undefined entity', good.replace('<MsgId>', '<MsgId>&xxe;'), 'malformed_xml'],
    ['mismatched tags', good.replace('<GrpHdr>', '<GrpHdr></Ntry>'), 'malformed_xml'],
  ])('%s', async (_, xml, code) => {
    expect(await parse(xml)).toEqual([fileError(code)]);
  });

  it.each([
    ['an external entity (XXE)', '<!DOCTYPE Document [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'],
    ['a parameter entity', '<!DOCTYPE Document [<!ENTITY % p SYSTEM "http://169.254.169.254/"> %p;]>'],
    ['entity expansion (billion laughs)', `<!DOCTYPE Document [<!ENTITY a "aaaa">${'<!ENTITY b "&a;&a;&a;">'}]>`],
    ['a plain DOCTYPE', '<!DOCTYPE Document>'],
  ])('refuses a DOCTYPE: %s', async (_, doctype) => {
    const xml = good.replace('?>\n', `?>\n${doctype}\n`).replace('<MsgId>', '<MsgId>&xxe;');
    expect(await parse(xml)).toEqual([fileError('doctype_not_allowed')]);
  });

  it('reports a file cut off anywhere as truncated, never throwing', async () => {
    const rows = await parse(good);
    const entryEnds = [...good.matchAll(/<\/Ntry>/g)].map((m) => (m.index ?? 0) + '</Ntry>'.length);
    for (const [complete, cut] of [
      [0, good.indexOf('<Ntry>') + 3],
      [1, (entryEnds[0] ?? 0) + 2],
      [2, (entryEnds[1] ?? 0) + 40],
      [3, good.length - 5],
    ] as const) {
      expect(await parse(good.slice(0, cut))).toEqual([
        ...rows.slice(0, complete),
        fileError('truncated', complete + 1),
      ]);
    }
  });

  it('reports mismatched tags after the rows before them', async () => {
    const xml = good.replace('</Ntfctn>', '</Ntry></Ntfctn>');
    expect(await parse(xml)).toEqual([...(await parse(good)), fileError('malformed_xml', 4)]);
  });

  it('reports invalid UTF-8 after the rows of the chunks before it', async () => {
    const end = good.lastIndexOf('</Ntry>');
    const chunks = [utf8(good.slice(0, end)), Uint8Array.of(0xff), utf8(good.slice(end))];
    const rows = await parse(good);
    expect(await collect(parseCamt054(chunks))).toEqual([...rows.slice(0, 2), fileError('invalid_encoding', 3)]);
  });

  it('passes the errors of the source stream through (the file is retried, not reported)', async () => {
    async function* broken() {
      yield Buffer.from(good.slice(0, 500));
      throw new Error('connection reset');
    }
    await expect(collect(parseCamt054(broken()))).rejects.toThrow('connection reset');
  });
});

describe('hostile shapes end the file with an error, quickly and in bounded memory', () => {
  const head =
    '<?xml version="1.0" encoding="UTF-8"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"><BkToCstmrDbtCdtNtfctn><Ntfctn><Ntry>';

  it('refuses nesting deeper than any camt.054 element', async () => {
    const deep = `${head}${'<X>'.repeat(10_000)}`;
    const items = await collect(parseCamt054([utf8(deep)]));
    expect(items.at(-1)).toMatchObject({ error: { scope: 'file', code: 'too_deep' } });
  });

  it('refuses a text or tag longer than a megabyte before the parser buffers it', async () => {
    const chunk = utf8('a'.repeat(64 * 1024));
    const source = [utf8(`${head}<AddtlNtryInf>`), ...Array.from({ length: 20 }, () => chunk)];
    const items = await collect(parseCamt054(source));
    expect(items.at(-1)).toMatchObject({ error: { scope: 'file', code: 'element_too_large' } });
    const attributes = [
      utf8(`${head}<Amt `),
      ...Array.from({ length: 20 }, (_, i) => utf8(`a${i}="${'x'.repeat(60_000)}" `)),
    ];
    const refused = await collect(parseCamt054(attributes));
    expect(refused.at(-1)).toMatchObject({ error: { scope: 'file', code: 'element_too_large' } });
  });
});
