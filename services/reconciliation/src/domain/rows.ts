/**
 * What the file parsers (camt.054, CSV) yield: one item per booked transaction, in file order.
 * A bad row is an item too (`RowFailure`), never an exception; a file that cannot be read on
 * ends with one failure of `scope: 'file'`, after the rows before it.
 */

export interface ParsedRow {
  /** 1-based: the n-th item of a camt.054 file; the line the record starts on in a CSV file. */
  readonly row: number;
  readonly amount_minor: number;
  readonly currency: string;
  /** Money in (true) or out (false). */
  readonly credit: boolean;
  /** YYYY-MM-DD. */
  readonly booking_date: string;
  readonly value_date?: string;
  /** The first non-empty reference text (see each parser for the order). */
  readonly reference?: string;
  /** Every non-empty reference text, in the same order; matching searches all of them. */
  readonly references: readonly string[];
  readonly entry_reference?: string;
  /** camt.054 entry status (BOOK, PDNG, INFO …). */
  readonly status?: string;
  readonly description?: string;
}

export type RowErrorCode =
  | 'missing_amount'
  | 'invalid_amount'
  | 'too_many_minor_digits'
  | 'amount_too_large'
  | 'missing_currency'
  | 'unknown_currency'
  | 'missing_credit_debit'
  | 'missing_booking_date'
  | 'invalid_date'
  | 'missing_value'
  | 'too_many_fields'
  | 'malformed_quotes';

export type FileErrorCode =
  | 'empty_file'
  | 'invalid_encoding'
  | 'unsupported_encoding'
  | 'not_xml'
  | 'malformed_xml'
  | 'doctype_not_allowed'
  | 'not_camt054'
  | 'truncated'
  | 'missing_columns'
  | 'unterminated_quote'
  | 'record_too_large'
  | 'too_many_rows'
  | 'too_deep'
  | 'element_too_large';

export type ParseError =
  | { readonly scope: 'row'; readonly code: RowErrorCode; readonly message: string }
  | { readonly scope: 'file'; readonly code: FileErrorCode; readonly message: string };

export interface RowFailure {
  readonly row: number;
  readonly error: ParseError;
}

export type ParseItem = ParsedRow | RowFailure;

/** What the parsers read: a Node Readable or any async iterable of Buffers/strings (UTF-8). */
export type ByteSource = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

export function isRowFailure(item: ParseItem): item is RowFailure {
  return 'error' in item;
}

export const rowError = (row: number, code: RowErrorCode, message: string): RowFailure => ({
  row,
  error: { scope: 'row', code, message },
});

export const fileError = (row: number, code: FileErrorCode, message: string): RowFailure => ({
  row,
  error: { scope: 'file', code, message },
});

const ISO_DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;
const SWISS_DATE = /^([0-9]{2})\.([0-9]{2})\.([0-9]{4})$/;

/** `YYYY-MM-DD` (or `DD.MM.YYYY` with `swiss`) → `YYYY-MM-DD` when it is a real calendar day. */
export function parseDate(text: string, options: { swiss?: boolean } = {}): string | undefined {
  let parts = ISO_DATE.exec(text)?.slice(1);
  if (!parts && options.swiss) {
    const swiss = SWISS_DATE.exec(text);
    if (swiss) parts = [swiss[3], swiss[2], swiss[1]] as string[];
  }
  if (!parts) return undefined;
  const [year, month, day] = parts.map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  date.setUTCFullYear(year); // years 0–99 are not shifted to 19xx
  const valid = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  return valid ? `${parts[0]}-${parts[1]}-${parts[2]}` : undefined;
}

export class InvalidEncodingError extends Error {}

/**
 * Decodes a byte source as UTF-8 chunk by chunk (a character split across chunks is joined; a
 * leading BOM is dropped). Invalid UTF-8 throws `InvalidEncodingError` (instead of the chunk that holds
 * it: the text of earlier chunks has been yielded, none of that chunk); errors of the source itself
 * (a broken network stream) propagate as they are, so the caller can retry the file.
 */
export async function* decodeUtf8(source: ByteSource): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let first = true;
  const decode = (chunk: Uint8Array | string, stream: boolean): string => {
    try {
      if (typeof chunk === 'string') return decoder.decode() + chunk;
      return decoder.decode(chunk, { stream });
    } catch {
      throw new InvalidEncodingError('The file is not valid UTF-8');
    }
  };
  const emit = (text: string): string => {
    if (first && text.length > 0) {
      first = false;
      return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    }
    return text;
  };
  for await (const chunk of source) {
    const text = emit(decode(chunk, true));
    if (text.length > 0) yield text;
  }
  const rest = emit(decode(new Uint8Array(0), false));
  if (rest.length > 0) yield rest;
}
