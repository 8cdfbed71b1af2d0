/**
 * # Settlement CSV format
 *
 * For PSP and bank exports that are not camt.054. One file lists the money movements of one
 * account; every record is one movement.
 *
 * **Encoding.** UTF-8. A byte order mark at the start is ignored. Any other encoding (Latin-1,
 * Windows-1252) is refused as a whole (`invalid_encoding`): re-save the file as UTF-8.
 *
 * **Records.** RFC 4180: records end with CRLF, LF or CR; blank lines (also lines holding only
 * delimiters and spaces) are skipped. A field that contains the delimiter, a `"` or a line break
 * is enclosed in double quotes, and a `"` inside it is written twice: `"Spende ""Winter"", 2025"`.
 * A quoted field may span lines. Spaces around a value are removed.
 *
 * **Delimiter.** Comma or semicolon, chosen from the header line: semicolon when that line has
 * more semicolons than commas (outside quotes), else comma. The whole file uses that delimiter.
 *
 * **Header.** The first non-blank line names the columns, in any order. Names are compared
 * without regard to case, surrounding spaces, or spaces/hyphens versus `_` (`Value Date`,
 * `value-date` and `VALUE_DATE` are the same). Columns not listed below are ignored; when a name
 * appears twice, the first one counts.
 *
 * | column            | required | content                                                                 |
 * |-------------------|----------|-------------------------------------------------------------------------|
 * | `date`            | yes      | booking date, `YYYY-MM-DD` or `DD.MM.YYYY` (`2025-03-31`, `31.03.2025`)  |
 * | `amount`          | yes      | decimal with `.`; see below                                             |
 * | `currency`        | yes      | ISO 4217 code (`CHF`, `EUR`, `JPY`); lower case is accepted             |
 * | `reference`       | yes      | the payment reference; may be empty in a record                         |
 * | `value_date`      | no       | same formats as `date`                                                  |
 * | `description`     | no       | free text (also searched for a payment reference)                       |
 * | `entry_reference` | no       | the bank's or PSP's own id for the movement                             |
 *
 * **Amounts.** Digits with an optional `.` and decimal places, at most as many as the currency
 * has (2 for CHF/EUR/USD, 0 for JPY, 3 for KWD): `1234.50`, `1234.5`, `1234`. The whole part may
 * be grouped in threes with `'`, `’` or a space, the same one throughout: `1'234.50`,
 * `1 234 567.00`. A leading `-` marks money going out (a debit); no sign or `+` is money coming
 * in. No exponents, no currency symbols, no `,` as decimal separator.
 *
 * **Rows and errors.** Each record gives one row; its `row` is the line the record starts on,
 * counting the header line as 1 (and any blank lines before it). A record with a missing or
 * malformed value (no date, a date that does not exist, an amount that is not as above, too many
 * decimal places, an unknown currency), more non-empty fields than the header has columns (a
 * trailing delimiter is fine), or text after a closing quote is reported as an error for that row; the other rows are still read. The file as a whole is
 * refused (one error, after the rows read so far) when it is empty, a required column is missing
 * from the header, a quoted field is never closed, or a record exceeds 65,536 characters.
 */
import { CsvTokenizer } from './csv-tokenizer';
import { type AmountErrorCode, decimalToMinor } from './money';
import {
  type ByteSource,
  decodeUtf8,
  fileError,
  InvalidEncodingError,
  type ParsedRow,
  type ParseItem,
  parseDate,
  rowError,
} from './rows';

const REQUIRED = ['date', 'amount', 'currency', 'reference'] as const;
const OPTIONAL = ['value_date', 'description', 'entry_reference'] as const;
type Column = (typeof REQUIRED)[number] | (typeof OPTIONAL)[number];
type Columns = Partial<Record<Column, number>>;

const AMOUNT = /^([+-]?)([0-9]+|[0-9]{1,3}(?:(['’ \u00a0\u202f])[0-9]{3})(?:\3[0-9]{3})*)(?:\.([0-9]+))?$/;

const columnName = (header: string): string =>
  header
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

function readHeader(fields: string[]): { columns: Columns; missing: string[] } {
  const columns: Columns = {};
  fields.forEach((field, index) => {
    const name = columnName(field) as Column;
    if (([...REQUIRED, ...OPTIONAL] as string[]).includes(name) && columns[name] === undefined) {
      columns[name] = index;
    }
  });
  return { columns, missing: REQUIRED.filter((name) => columns[name] === undefined) };
}

/** Parses a signed, possibly grouped amount: `-1'234.50` → 123450 minor units, debit. */
export function parseCsvAmount(
  text: string,
  currency: string,
): { ok: true; minor: number; credit: boolean } | { ok: false; code: AmountErrorCode; message: string } {
  const match = AMOUNT.exec(text);
  if (!match) return { ok: false, code: 'invalid_amount', message: `"${text}" is not a decimal amount` };
  const [, sign, whole = '', separator, fraction] = match;
  const unsigned = `${separator ? whole.split(separator).join('') : whole}${fraction === undefined ? '' : `.${fraction}`}`;
  const result = decimalToMinor(unsigned, currency);
  if (!result.ok) return { ok: false, code: result.code, message: result.message.replace(unsigned, text) };
  return { ok: true, minor: result.minor, credit: sign !== '-' };
}

function toRow(line: number, fields: string[], columns: Columns): ParseItem {
  const value = (column: Column): string => {
    const index = columns[column];
    return index === undefined ? '' : (fields[index] ?? '').trim();
  };
  for (const column of ['date', 'amount', 'currency'] as const) {
    if (value(column) === '') return rowError(line, 'missing_value', `The ${column} is empty`);
  }
  const booking = parseDate(value('date'), { swiss: true });
  if (!booking)
    return rowError(line, 'invalid_date', `The date "${value('date')}" is not a valid YYYY-MM-DD or DD.MM.YYYY date`);
  const valueText = value('value_date');
  const valueDate = valueText === '' ? undefined : parseDate(valueText, { swiss: true });
  if (valueText !== '' && !valueDate) {
    return rowError(line, 'invalid_date', `The value_date "${valueText}" is not a valid YYYY-MM-DD or DD.MM.YYYY date`);
  }
  const currency = value('currency').toUpperCase();
  const amount = parseCsvAmount(value('amount'), currency);
  if (!amount.ok) return rowError(line, amount.code, amount.message);
  const reference = value('reference');
  const description = value('description');
  const entryReference = value('entry_reference');
  const row: ParsedRow = {
    row: line,
    amount_minor: amount.minor,
    currency,
    credit: amount.credit,
    booking_date: booking,
    references: [reference, description].filter((text) => text !== ''),
    ...(valueDate ? { value_date: valueDate } : {}),
    ...(reference ? { reference } : {}),
    ...(description ? { description } : {}),
    ...(entryReference ? { entry_reference: entryReference } : {}),
  };
  return row;
}

/** Reads a settlement CSV (format above) as rows, streaming; never throws for the file's content. */
export async function* parseCsv(source: ByteSource): AsyncGenerator<ParseItem> {
  const tokenizer = new CsvTokenizer();
  let header: { columns: Columns; width: number } | undefined;
  function* rows(records: ReturnType<CsvTokenizer['push']>): Generator<ParseItem, boolean> {
    for (const record of records) {
      if (record.fields.every((field) => field.trim() === '')) continue;
      if (!header) {
        const { columns, missing } = readHeader(record.fields);
        if (missing.length > 0) {
          yield fileError(
            record.line,
            'missing_columns',
            `The header line lacks the required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
          );
          return false;
        }
        header = { columns, width: record.fields.length };
      } else if (record.malformed) {
        yield rowError(record.line, 'malformed_quotes', 'A quoted field is followed by more text before the delimiter');
      } else if (record.fields.slice(header.width).some((field) => field.trim() !== '')) {
        yield rowError(
          record.line,
          'too_many_fields',
          `The record has ${record.fields.length} fields; the header has ${header.width}`,
        );
      } else {
        yield toRow(record.line, record.fields, header.columns);
      }
    }
    return true;
  }
  try {
    for await (const text of decodeUtf8(source)) {
      if (!(yield* rows(tokenizer.push(text)))) return;
      if (tokenizer.error) break;
    }
    if (!(yield* rows(tokenizer.end()))) return;
  } catch (error) {
    if (!(error instanceof InvalidEncodingError)) throw error;
    yield fileError(tokenizer.line, 'invalid_encoding', error.message);
    return;
  }
  const { error } = tokenizer;
  if (error) yield fileError(error.line, error.code, error.message);
  else if (!header) yield fileError(1, 'empty_file', 'The file has no header line');
}
