/**
 * A streaming RFC 4180 tokenizer: text goes in chunk by chunk, records come out with the line
 * they start on. Memory is bounded by the longest record (`maxRecordLength`), not by the file.
 *
 * - The delimiter is `;` when the first line (outside quotes) has more `;` than `,`, else `,`.
 * - Line breaks are CRLF, LF or a lone CR; empty lines are skipped.
 * - A field starting with `"` is quoted: it may hold delimiters and line breaks, `""` is one `"`.
 *   Characters after its closing quote (`"ab"c`) mark the record `malformed`; a `"` inside an
 *   unquoted field is an ordinary character.
 * - A quoted field still open at the end of the input, or a record longer than `maxRecordLength`
 *   characters, sets `error` and stops the tokenizer (nothing after it can be read reliably); the
 *   records completed before it are still returned.
 */

export interface CsvRecord {
  readonly line: number;
  readonly fields: string[];
  readonly malformed: boolean;
}

export class CsvSyntaxError extends Error {
  constructor(
    readonly code: 'unterminated_quote' | 'record_too_large',
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;
const COMMA = 0x2c;
const SEMICOLON = 0x3b;

const RECORD_START = 0;
const FIELD_START = 1;
const UNQUOTED = 2;
const QUOTED = 3;
const QUOTE_SEEN = 4;
const MALFORMED = 5;

/** Delimiter of the first line, or undefined while that line is incomplete (and `final` is false). */
function detectDelimiter(text: string, final: boolean): ',' | ';' | undefined {
  let commas = 0;
  let semicolons = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) quoted = !quoted;
    else if (quoted) continue;
    else if (c === COMMA) commas++;
    else if (c === SEMICOLON) semicolons++;
    else if (c === CR || c === LF) return semicolons > commas ? ';' : ',';
  }
  return final ? (semicolons > commas ? ';' : ',') : undefined;
}

export class CsvTokenizer {
  delimiter: ',' | ';' | undefined;
  error: CsvSyntaxError | undefined;
  /** The line of the next character. */
  line = 1;
  private pending = '';
  private state = RECORD_START;
  private previousCr = false;
  private recordLine = 1;
  private recordLength = 0;
  private fields: string[] = [];
  private field = '';
  private malformed = false;

  constructor(private readonly maxRecordLength = 65_536) {}

  push(text: string): CsvRecord[] {
    if (this.error) return [];
    if (this.delimiter === undefined) {
      this.pending += text;
      this.delimiter = detectDelimiter(this.pending.replace(/^[\r\n]+/, ''), false);
      if (this.delimiter === undefined) {
        if (this.pending.length > this.maxRecordLength) this.tooLarge();
        return [];
      }
      text = this.pending;
      this.pending = '';
    }
    return this.scan(text);
  }

  end(): CsvRecord[] {
    if (this.error) return [];
    const out: CsvRecord[] = [];
    if (this.delimiter === undefined) {
      this.delimiter = detectDelimiter(this.pending.replace(/^[\r\n]+/, ''), true);
      out.push(...this.scan(this.pending));
      this.pending = '';
    }
    if (this.error) return out;
    if (this.state === QUOTED) {
      this.error = new CsvSyntaxError(
        'unterminated_quote',
        this.recordLine,
        `A quoted field opened in the record of line ${this.recordLine} is never closed`,
      );
    } else if (this.state !== RECORD_START) {
      this.endRecord(out);
    }
    return out;
  }

  private tooLarge(): void {
    this.error ??= new CsvSyntaxError(
      'record_too_large',
      this.recordLine,
      `The record of line ${this.recordLine} is longer than ${this.maxRecordLength} characters`,
    );
  }

  private endField(): void {
    this.fields.push(this.field);
    this.field = '';
  }

  private endRecord(out: CsvRecord[]): void {
    this.endField();
    out.push({ line: this.recordLine, fields: this.fields, malformed: this.malformed });
    this.fields = [];
    this.malformed = false;
    this.recordLength = 0;
    this.state = RECORD_START;
  }

  private scan(text: string): CsvRecord[] {
    const out: CsvRecord[] = [];
    const delimiter = this.delimiter === ';' ? SEMICOLON : COMMA;
    let segment = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      const afterCr = this.previousCr;
      this.previousCr = c === CR;
      if (c === LF && afterCr) continue; // second half of CRLF: the line was counted at the CR
      const isBreak = c === CR || c === LF;
      if (this.state === RECORD_START) {
        if (isBreak) {
          this.line++;
          continue;
        }
        this.recordLine = this.line;
        this.state = FIELD_START;
      }
      if (++this.recordLength > this.maxRecordLength) {
        this.tooLarge();
        return out;
      }
      switch (this.state) {
        case FIELD_START:
          if (c === QUOTE) {
            this.state = QUOTED;
            segment = i + 1;
          } else if (c === delimiter) {
            this.endField();
          } else if (isBreak) {
            this.line++;
            this.endRecord(out);
          } else {
            this.state = UNQUOTED;
            segment = i;
          }
          break;
        case UNQUOTED:
        case MALFORMED:
          if (c === delimiter || isBreak) {
            this.field += text.slice(segment, i);
            if (c === delimiter) {
              this.endField();
              this.state = FIELD_START;
            } else {
              this.line++;
              this.endRecord(out);
            }
          }
          break;
        case QUOTED:
          if (c === QUOTE) {
            this.field += text.slice(segment, i);
            this.state = QUOTE_SEEN;
          } else if (isBreak) {
            this.line++;
          }
          break;
        case QUOTE_SEEN:
          if (c === QUOTE) {
            this.field += '"';
            segment = i + 1;
            this.state = QUOTED;
          } else if (c === delimiter) {
            this.endField();
            this.state = FIELD_START;
          } else if (isBreak) {
            this.line++;
            this.endRecord(out);
          } else {
            this.malformed = true;
            this.state = MALFORMED;
            segment = i;
          }
          break;
      }
    }
    if (this.state === UNQUOTED || this.state === MALFORMED || this.state === QUOTED) {
      this.field += text.slice(segment);
    }
    return out;
  }
}
