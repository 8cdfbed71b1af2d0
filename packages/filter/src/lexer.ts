import { FILTER_LIMITS } from './limits';

/**
 * Tokens of the filter language, read one at a time on demand so the first error in reading
 * order is the one reported (a function call before an unterminated string reports the call).
 */

export type SymbolText = '(' | ')' | '[' | ']' | ',' | '.' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '&&' | '||' | '!';

export type Token =
  | { readonly kind: 'word'; readonly pos: number; readonly text: string }
  /** `index` when written as plain digits, the only form an array index may take. */
  | {
      readonly kind: 'number';
      readonly pos: number;
      readonly value: number;
      readonly source: string;
      readonly index: boolean;
    }
  | { readonly kind: 'string'; readonly pos: number; readonly value: string }
  | { readonly kind: 'symbol'; readonly pos: number; readonly text: SymbolText }
  | { readonly kind: 'end'; readonly pos: number };

/** A refusal of the filter text at a 0-based UTF-16 index; thrown inside the parser, returned by parseFilter. */
export class FilterSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = 'FilterSyntaxError';
  }
}

/** Spaces, tabs and newlines (CR too, so CRLF text reads like LF text); other blanks are refused as characters. */
export function isWhitespace(char: string | undefined): boolean {
  return char === ' ' || char === '\t' || char === '\n' || char === '\r';
}

export function isDigit(char: string | undefined): boolean {
  return char !== undefined && char >= '0' && char <= '9';
}

function isWordStart(char: string | undefined): boolean {
  return char !== undefined && ((char >= 'a' && char <= 'z') || (char >= 'A' && char <= 'Z') || char === '_');
}

function isWordChar(char: string | undefined): boolean {
  return isWordStart(char) || isDigit(char);
}

function isHexDigit(char: string | undefined): boolean {
  return isDigit(char) || (char !== undefined && ((char >= 'a' && char <= 'f') || (char >= 'A' && char <= 'F')));
}

/** The index of the first non-blank character at or after `from`. */
export function skipWhitespace(text: string, from: number): number {
  let index = from;
  while (isWhitespace(text[index])) index++;
  return index;
}

/** Names a character in a message so that invisible and control characters stay readable. */
function describeCharacter(text: string, at: number): string {
  const code = text.codePointAt(at) ?? 0;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return code > 0x20 && code < 0x7f ? `'${String.fromCodePoint(code)}'` : hex;
}

/** The next token at or after `from` and the index just past it. */
export function readToken(text: string, from: number): { token: Token; next: number } {
  const pos = skipWhitespace(text, from);
  const char = text[pos];
  if (char === undefined) return { token: { kind: 'end', pos }, next: pos };
  if (char === '"' || char === "'") return readString(text, pos);
  if (isDigit(char) || char === '-') return readNumber(text, pos);
  if (isWordStart(char)) {
    let end = pos + 1;
    while (isWordChar(text[end])) end++;
    return { token: { kind: 'word', pos, text: text.slice(pos, end) }, next: end };
  }
  const symbol = readSymbol(text, pos);
  return { token: { kind: 'symbol', pos, text: symbol }, next: pos + symbol.length };
}

/**
 * Operators and punctuation. `=`, `=~`, `!~`, `&` and `|` are refused here with a message naming
 * what the writer probably meant, since assignment and regular expressions are deliberately absent.
 */
function readSymbol(text: string, pos: number): SymbolText {
  const char = text[pos];
  const following = text[pos + 1];
  switch (char) {
    case '(':
    case ')':
    case '[':
    case ']':
    case ',':
    case '.':
      return char;
    case '<':
    case '>':
      return following === '=' ? (`${char}=` as const) : char;
    case '=':
      if (following === '=') return '==';
      if (following === '~') throw new FilterSyntaxError('regular expressions are not supported', pos);
      throw new FilterSyntaxError('use == to compare; assignment is not supported', pos);
    case '!':
      if (following === '=') return '!=';
      if (following === '~') throw new FilterSyntaxError('regular expressions are not supported', pos);
      return '!';
    case '&':
      if (following === '&') return '&&';
      throw new FilterSyntaxError("use && or and; '&' alone is not an operator", pos);
    case '|':
      if (following === '|') return '||';
      throw new FilterSyntaxError("use || or or; '|' alone is not an operator", pos);
    default:
      throw new FilterSyntaxError(`unexpected character ${describeCharacter(text, pos)}`, pos);
  }
}

/**
 * `-? digits (. digits)? ([eE] [+-]? digits)?`. The minus belongs to the literal (there is no
 * arithmetic), so it must touch the digits. A number running into letters (`1and`) is refused
 * rather than split, so `1and true` cannot quietly read as `1 and true`.
 */
function readNumber(text: string, pos: number): { token: Token; next: number } {
  let end = pos;
  if (text[end] === '-') end++;
  if (!isDigit(text[end])) {
    throw new FilterSyntaxError("'-' must be followed by digits: minus applies only to number literals", pos);
  }
  const digits = (from: number): number => {
    let at = from;
    while (isDigit(text[at])) at++;
    return at;
  };
  end = digits(end);
  const index = text[pos] !== '-';
  let plain = true;
  if (text[end] === '.') {
    if (!isDigit(text[end + 1]))
      throw new FilterSyntaxError('invalid number: expected digits after the decimal point', pos);
    end = digits(end + 1);
    plain = false;
  }
  if (text[end] === 'e' || text[end] === 'E') {
    let exponent = end + 1;
    if (text[exponent] === '+' || text[exponent] === '-') exponent++;
    if (!isDigit(text[exponent])) throw new FilterSyntaxError('invalid number: expected digits in the exponent', pos);
    end = digits(exponent);
    plain = false;
  }
  if (isWordChar(text[end]) || text[end] === '.') {
    throw new FilterSyntaxError('invalid number: a number must be followed by a space or an operator', pos);
  }
  const source = text.slice(pos, end);
  const value = Number(source);
  if (!Number.isFinite(value)) throw new FilterSyntaxError('number out of range', pos);
  return { token: { kind: 'number', pos, value: value + 0, source, index: index && plain }, next: end };
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\', "'": "'", '"': '"', n: '\n', t: '\t', r: '\r' };

/** A string in matching single or double quotes; escapes `\\ \' \" \n \t \r \uXXXX`, anything else after `\` is refused. */
function readString(text: string, pos: number): { token: Token; next: number } {
  const quote = text[pos];
  let value = '';
  let at = pos + 1;
  for (;;) {
    const char = text[at];
    if (char === undefined) throw new FilterSyntaxError('unterminated string', pos);
    if (char === quote) break;
    if (char === '\\') {
      const escaped = text[at + 1];
      if (escaped === undefined) throw new FilterSyntaxError('unterminated string', pos);
      const simple = Object.hasOwn(SIMPLE_ESCAPES, escaped) ? SIMPLE_ESCAPES[escaped] : undefined;
      if (simple !== undefined) {
        value += simple;
        at += 2;
      } else if (escaped === 'u') {
        const hex = text.slice(at + 2, at + 6);
        if (hex.length !== 4 || ![...hex].every(isHexDigit)) {
          throw new FilterSyntaxError('invalid escape: \\u must be followed by four hexadecimal digits', at);
        }
        value += String.fromCharCode(Number.parseInt(hex, 16));
        at += 6;
      } else {
        throw new FilterSyntaxError(`unknown escape \\${describeEscape(escaped)}`, at);
      }
    } else {
      value += char;
      at++;
    }
    if (value.length > FILTER_LIMITS.maxStringLength) {
      throw new FilterSyntaxError(`string longer than ${FILTER_LIMITS.maxStringLength} characters`, pos);
    }
  }
  return { token: { kind: 'string', pos, value }, next: at + 1 };
}

function describeEscape(char: string): string {
  const code = char.charCodeAt(0);
  return code > 0x20 && code < 0x7f ? char : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}
