/**
 * Streaming reader for ISO 20022 camt.054 (Bank-to-Customer Debit/Credit Notification),
 * versions camt.054.001.02 to .08. Elements are matched by local name; the namespace (and so the
 * version) is not checked. Memory is bounded by the largest single element, not by the file.
 *
 * Rows: one per `Document/BkToCstmrDbtCdtNtfctn/Ntfctn/Ntry/NtryDtls/TxDtls`, or one per `Ntry`
 * that has no TxDtls, numbered 1, 2, … in file order.
 *
 * | field             | taken from                                                                  |
 * |-------------------|-----------------------------------------------------------------------------|
 * | `amount_minor`    | TxDtls/Amt, else TxDtls/AmtDtls/TxAmt/Amt, else Ntry/Amt (with its `Ccy`);  |
 * |                   | the entry amount stands in only when the entry holds a single TxDtls        |
 * | `credit`          | CdtDbtInd of the TxDtls, else of the Ntry: CRDT → true, DBIT → false         |
 * | `booking_date`    | Ntry/BookgDt/Dt, or the date part of Ntry/BookgDt/DtTm                       |
 * | `value_date`      | Ntry/ValDt/Dt, or the date part of Ntry/ValDt/DtTm                           |
 * | `references`      | TxDtls/Refs/EndToEndId (not `NOTPROVIDED`), RmtInf/Strd/CdtrRefInf/Ref,      |
 * |                   | RmtInf/Ustrd (all joined by a space), Refs/AcctSvcrRef; without TxDtls:      |
 * |                   | Ntry/AddtlNtryInf, Ntry/AcctSvcrRef. `reference` is the first of them.       |
 * | `entry_reference` | Ntry/NtryRef, else Ntry/AcctSvcrRef                                          |
 * | `status`          | Ntry/Sts (`<Sts>BOOK</Sts>` up to .05, `<Sts><Cd>BOOK</Cd></Sts>` from .06)  |
 *
 * A row without amount, currency, CdtDbtInd or booking date, with an amount that is not a plain
 * decimal with at most the currency's decimal places, or with an unknown currency is yielded as a
 * row error. A file that is not UTF-8, not XML, not camt.054, declares a DOCTYPE (refused as
 * defence in depth: no DTD is ever read, so no external entity), is malformed or cut off ends
 * with one file error after the rows read before it. Only errors of the source stream itself
 * (a failed download) are thrown, so the caller can retry.
 */
import { type SaxesOptions, SaxesParser, type SaxesTagNS } from 'saxes';
import { buildRow, ENTRY_PATHS, type Fields, first, TX_PATHS, txAmount } from './camt054-row';
import {
  type ByteSource,
  decodeUtf8,
  type FileErrorCode,
  fileError,
  InvalidEncodingError,
  type ParseItem,
  type RowFailure,
  rowError,
} from './rows';

const ROOT = ['Document', 'BkToCstmrDbtCdtNtfctn'];
const ENTRY = 'Document/BkToCstmrDbtCdtNtfctn/Ntfctn/Ntry';
const MAX_TEXT = 4096;
const MAX_VALUES = 32;
/** Deeper than any camt.054 element: deeper nesting is refused (it would only cost time). */
const MAX_DEPTH = 64;
/**
 * The most characters between two tag starts (`<`): a text or a tag's attributes longer than
 * this are refused before the XML parser buffers them whole.
 */
const MAX_RUN = 1024 * 1024;

type Options = SaxesOptions & { xmlns: true };

class Camt054Reader {
  readonly queue: ParseItem[] = [];
  failure: RowFailure | undefined;
  private rows = 0;
  private readonly stack: string[] = [];
  private rootSeen = false;
  private notificationSeen = false;
  private closing = false;
  private entry: Fields | undefined;
  private tx: Fields | undefined;
  private txCount = 0;
  /** The entry's first TxDtls when it had no amount of its own (the entry amount may apply). */
  private pending: Fields | undefined;
  private capture: { fields: Fields; path: string; depth: number; text: string } | undefined;

  constructor(readonly parser: SaxesParser<Options>) {
    parser.on('xmldecl', (decl) => {
      if (decl.encoding && !/^utf-?8$/i.test(decl.encoding)) {
        this.fail('unsupported_encoding', `The file declares encoding ${decl.encoding}; camt.054 is UTF-8`);
      }
    });
    parser.on('doctype', () => this.fail('doctype_not_allowed', 'DOCTYPE declarations are not accepted'));
    parser.on('error', (error) => {
      if (!this.rootSeen) this.fail('not_xml', `The file is not XML: ${error.message}`);
      else if (this.closing) this.fail('truncated', `The file ends early: ${error.message}`);
      else this.fail('malformed_xml', `The XML is malformed: ${error.message}`);
    });
    parser.on('opentag', (tag) => this.open(tag));
    parser.on('text', (text) => this.text(text));
    parser.on('cdata', (text) => this.text(text));
    parser.on('closetag', () => this.close());
  }

  fail(code: FileErrorCode, message: string): void {
    this.failure ??= fileError(this.rows + 1, code, message);
  }

  private emit(make: (row: number) => ParseItem): void {
    this.queue.push(make(++this.rows));
  }

  private open(tag: SaxesTagNS): void {
    if (this.failure) return;
    const depth = this.stack.push(tag.local);
    this.rootSeen = true;
    if (depth > MAX_DEPTH) {
      this.fail('too_deep', `Elements are nested deeper than ${MAX_DEPTH} levels`);
      return;
    }
    if (depth <= ROOT.length && tag.local !== ROOT[depth - 1]) {
      this.fail('not_camt054', `The file is not a camt.054 notification (found ${this.stack.join('/')})`);
      return;
    }
    if (depth === ROOT.length) this.notificationSeen = true;
    if (depth === 4 && this.stack.join('/') === ENTRY) {
      this.entry = new Map();
      this.txCount = 0;
      return;
    }
    if (!this.entry) return;
    const inEntry = this.stack.slice(4).join('/');
    if (!this.tx && inEntry === 'NtryDtls/TxDtls') {
      this.flushPending(true);
      this.tx = new Map();
      this.txCount++;
      return;
    }
    const [fields, path] = this.tx ? [this.tx, this.stack.slice(6).join('/')] : [this.entry, inEntry];
    if (!(this.tx ? TX_PATHS : ENTRY_PATHS).has(path)) return;
    const currency = tag.attributes.Ccy?.value;
    if (currency !== undefined) this.add(fields, `${path}@Ccy`, currency.trim());
    this.capture = { fields, path, depth, text: '' };
  }

  private text(text: string): void {
    if (this.failure || !this.capture || this.capture.depth !== this.stack.length) return;
    if (this.capture.text.length < MAX_TEXT) this.capture.text += text.slice(0, MAX_TEXT - this.capture.text.length);
  }

  private add(fields: Fields, path: string, value: string): void {
    const values = fields.get(path);
    if (!values) fields.set(path, [value]);
    else if (values.length < MAX_VALUES) values.push(value);
  }

  private close(): void {
    if (this.failure) return;
    const depth = this.stack.length;
    if (this.capture?.depth === depth) {
      this.add(this.capture.fields, this.capture.path, this.capture.text.trim());
      this.capture = undefined;
    }
    this.stack.pop();
    if (this.tx && depth === 6) this.closeTx(this.tx);
    else if (this.entry && depth === 4) this.closeEntry(this.entry);
  }

  private closeTx(tx: Fields): void {
    const entry = this.entry ?? new Map();
    const amount = txAmount(tx);
    if (amount || this.txCount > 1) this.emit((row) => buildRow(row, entry, tx, amount));
    else this.pending = tx;
    this.tx = undefined;
  }

  /** Emits the held TxDtls: with the entry amount if it was the entry's only one, else as an error. */
  private flushPending(more: boolean): void {
    const tx = this.pending;
    if (!tx) return;
    const entry = this.entry ?? new Map();
    this.pending = undefined;
    if (more) {
      this.emit((row) =>
        rowError(row, 'missing_amount', 'The transaction has no amount and its entry holds several transactions'),
      );
    } else {
      this.emit((row) => buildRow(row, entry, tx, entryAmount(entry)));
    }
  }

  private closeEntry(entry: Fields): void {
    this.flushPending(false);
    if (this.txCount === 0) this.emit((row) => buildRow(row, entry, undefined, entryAmount(entry)));
    this.entry = undefined;
  }

  end(charactersRead: number): void {
    this.closing = true;
    if (charactersRead === 0) this.fail('empty_file', 'The file is empty');
    this.parser.close();
    if (!this.notificationSeen) this.fail('not_camt054', 'The file is not a camt.054 notification');
  }
}

const entryAmount = (entry: Fields) => {
  const text = first(entry, 'Amt');
  return text === undefined ? undefined : { text, currency: first(entry, 'Amt@Ccy') };
};

/** Reads a camt.054 file (see above) as rows, streaming; never throws for the file's content. */
export async function* parseCamt054(source: ByteSource): AsyncGenerator<ParseItem> {
  const reader = new Camt054Reader(new SaxesParser<Options>({ xmlns: true }));
  let characters = 0;
  let run = 0;
  try {
    for await (const text of decodeUtf8(source)) {
      characters += text.length;
      const tagStart = text.lastIndexOf('<');
      run = tagStart === -1 ? run + text.length : text.length - tagStart - 1;
      if (run > MAX_RUN) {
        yield* reader.queue.splice(0);
        reader.fail('element_too_large', `A text or tag is longer than ${MAX_RUN} characters`);
        if (reader.failure) yield reader.failure;
        return;
      }
      reader.parser.write(text);
      yield* reader.queue.splice(0);
      if (reader.failure) {
        yield reader.failure;
        return;
      }
    }
  } catch (error) {
    if (!(error instanceof InvalidEncodingError)) throw error;
    yield* reader.queue.splice(0);
    reader.fail('invalid_encoding', error.message);
    if (reader.failure) yield reader.failure;
    return;
  }
  reader.end(characters);
  yield* reader.queue.splice(0);
  if (reader.failure) yield reader.failure;
}
