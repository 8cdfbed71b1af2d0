import { daysInMonth } from './local-date';

/**
 * `recurring_interval` of a subscription: one of five keywords anchored on the day billing started, or the
 * day-of-month, month and day-of-week fields of a cron expression.
 */
export type Keyword = 'weekly' | 'monthly' | 'quarterly' | 'semestral' | 'yearly';

export const KEYWORDS: readonly Keyword[] = ['weekly', 'monthly', 'quarterly', 'semestral', 'yearly'];

export interface KeywordInterval {
  readonly kind: 'keyword';
  readonly keyword: Keyword;
  /** The input exactly as given. */
  readonly text: string;
}

/** The three cron fields expanded to sorted, duplicate-free value lists. */
export interface CronInterval {
  readonly kind: 'cron';
  /** The input exactly as given. */
  readonly text: string;
  /** Days 1–31 listed in the day-of-month field. A day a month does not have never matches in that month. */
  readonly daysOfMonth: readonly number[];
  /** `L` was listed: the last day of every month matches. */
  readonly lastDayOfMonth: boolean;
  /** Months 1–12. */
  readonly months: readonly number[];
  /** Days of the week 0–6, Sunday = 0 (a `7` in the input is Sunday too). */
  readonly daysOfWeek: readonly number[];
  /**
   * Whether each day field is anything other than a lone `*` or `?`. Vixie cron rule: when both are restricted a day
   * matches if EITHER field matches; otherwise the restricted field (if any) decides.
   */
  readonly dayOfMonthRestricted: boolean;
  readonly dayOfWeekRestricted: boolean;
}

export type Interval = KeywordInterval | CronInterval;

export type ParseResult =
  | { ok: true; interval: Interval }
  | {
      ok: false;
      message: string;
      /** 0-based index into the original input of the character or token at fault. */
      position: number;
    };

type ParseFailure = Extract<ParseResult, { ok: false }>;

function failure(message: string, position: number): ParseFailure {
  return { ok: false, message, position };
}

function isFailure(value: object): value is ParseFailure {
  return 'ok' in value && value.ok === false;
}

/** How one cron field is spelled and what it may hold. */
interface FieldSpec {
  readonly label: string;
  readonly min: number;
  readonly max: number;
  /**
   * Where `*` and `a/n` stop. Equal to `max` except for day-of-week, whose 7 is only an alias of Sunday (0): `*`
   * means 0–6 and `1/2` means Monday, Wednesday, Friday rather than reaching the Sunday alias.
   */
  readonly openMax: number;
  /** Upper-case names (JAN, MON, …) and their values. */
  readonly names: ReadonlyMap<string, number>;
  readonly allowsLast: boolean;
}

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

function nameTable(names: readonly string[], first: number): ReadonlyMap<string, number> {
  return new Map(names.map((name, index) => [name, index + first]));
}

const DAY_OF_MONTH: FieldSpec = {
  label: 'day-of-month',
  min: 1,
  max: 31,
  openMax: 31,
  names: new Map(),
  allowsLast: true,
};
const MONTH: FieldSpec = {
  label: 'month',
  min: 1,
  max: 12,
  openMax: 12,
  names: nameTable(MONTH_NAMES, 1),
  allowsLast: false,
};
const DAY_OF_WEEK: FieldSpec = {
  label: 'day-of-week',
  min: 0,
  max: 7,
  openMax: 6,
  names: nameTable(WEEKDAY_NAMES, 0),
  allowsLast: false,
};

/** A piece of the input with its index in the original text, so every error can point at it. */
interface Token {
  readonly text: string;
  readonly position: number;
}

/** Splits on `separator`, keeping each piece's position (empty pieces included: they are errors to report). */
function splitToken(token: Token, separator: string): Token[] {
  const pieces: Token[] = [];
  let position = token.position;
  for (const text of token.text.split(separator)) {
    pieces.push({ text, position });
    position += text.length + separator.length;
  }
  return pieces;
}

/** Splits at the first `separator` only; `after` is undefined when there is none. */
function splitOnce(token: Token, separator: string): { before: Token; after: Token | undefined } {
  const index = token.text.indexOf(separator);
  if (index < 0) return { before: token, after: undefined };
  return {
    before: { text: token.text.slice(0, index), position: token.position },
    after: { text: token.text.slice(index + 1), position: token.position + index + 1 },
  };
}

/** What one list element contributes to a field. */
interface ElementValues {
  readonly values: readonly number[];
  readonly last: boolean;
}

function range(start: number, end: number, step: number): number[] {
  const values: number[] = [];
  for (let value = start; value <= end; value += step) values.push(value);
  return values;
}

/** A number or (case-insensitive) name, within the field's range. */
function parseValue(spec: FieldSpec, token: Token): number | ParseFailure {
  if (token.text === '') return failure(`Expected a ${spec.label} value`, token.position);
  if (/^\d+$/.test(token.text)) {
    const value = Number(token.text);
    if (value < spec.min || value > spec.max) {
      return failure(
        `${capitalised(spec.label)} value ${token.text} is out of range (${spec.min}–${spec.max})`,
        token.position,
      );
    }
    return value;
  }
  const named = spec.names.get(token.text.toUpperCase());
  if (named !== undefined) return named;
  return failure(`Unknown ${spec.label} token '${token.text}'`, token.position);
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The `n` of `x/n`: a whole number of at least 1. */
function parseStep(spec: FieldSpec, token: Token): number | ParseFailure {
  if (!/^\d+$/.test(token.text)) {
    return failure(`The ${spec.label} step after '/' must be a whole number`, token.position);
  }
  const step = Number(token.text);
  if (step === 0) return failure(`The ${spec.label} step must be at least 1, not 0`, token.position);
  return step;
}

/** `a` or `a-b` (inclusive, not reversed) as [start, end]. */
function parseBounds(spec: FieldSpec, token: Token): [number, number] | ParseFailure {
  const { before, after } = splitOnce(token, '-');
  if (after !== undefined && spec.allowsLast && [before, after].some((side) => side.text.toUpperCase() === 'L')) {
    return failure(`'L' cannot be part of a range`, token.position);
  }
  const start = parseValue(spec, before);
  if (typeof start !== 'number') return start;
  if (after === undefined) return [start, start];
  const end = parseValue(spec, after);
  if (typeof end !== 'number') return end;
  if (start > end) {
    return failure(`The ${spec.label} range ${token.text} is reversed: write the smaller value first`, token.position);
  }
  return [start, end];
}

/**
 * One list element: `*`, `*\/n`, `L`, `a`, `a-b`, `a-b/n` or `a/n` (from a to the end of the field). `?` is only
 * allowed as the whole field and is handled by the caller.
 */
function parseElement(spec: FieldSpec, element: Token): ElementValues | ParseFailure {
  if (element.text === '') return failure(`Empty element in the ${spec.label} list`, element.position);
  const { before: base, after: stepToken } = splitOnce(element, '/');
  const step = stepToken === undefined ? 1 : parseStep(spec, stepToken);
  if (typeof step !== 'number') return step;
  if (base.text === '*') return { values: range(spec.min, spec.openMax, step), last: false };
  if (base.text === '?') {
    return failure(`'?' must stand alone as the whole ${spec.label} field`, base.position);
  }
  if (base.text.toUpperCase() === 'L' && spec.allowsLast) {
    if (stepToken !== undefined) return failure(`'L' cannot take a step`, element.position);
    return { values: [], last: true };
  }
  const bounds = parseBounds(spec, base);
  if (isFailure(bounds)) return bounds;
  const [start, end] = bounds;
  const isSingleValue = stepToken !== undefined && !base.text.includes('-');
  return { values: range(start, isSingleValue ? Math.max(start, spec.openMax) : end, step), last: false };
}

interface ParsedField {
  readonly values: readonly number[];
  readonly last: boolean;
  readonly restricted: boolean;
}

/** A comma-separated list of elements; a lone `*` or `?` is the unrestricted field. */
function parseField(spec: FieldSpec, field: Token): ParsedField | ParseFailure {
  if (field.text === '*' || field.text === '?') {
    return { values: range(spec.min, spec.openMax, 1), last: false, restricted: false };
  }
  const values = new Set<number>();
  let last = false;
  for (const element of splitToken(field, ',')) {
    const parsed = parseElement(spec, element);
    if (isFailure(parsed)) return parsed;
    for (const value of parsed.values) values.add(value);
    last ||= parsed.last;
  }
  return { values: [...values].sort((a, b) => a - b), last, restricted: true };
}

/** Sunday is both 0 and 7 in cron; keep only 0. */
function normaliseWeekdays(values: readonly number[]): number[] {
  return [...new Set(values.map((value) => value % 7))].sort((a, b) => a - b);
}

/** The most days each month can have (February 29 in leap years). */
function longestMonthLength(month: number): number {
  return daysInMonth(2000, month);
}

/**
 * Whether a day-of-month-only expression can ever match. A restricted day-of-week always can (every month has every
 * weekday), and so can `L`. Otherwise some listed day must exist in some listed month; if the only such day is
 * February 29 the expression is due every leap year, at most 8 years apart (2096 → 2104), so every parsed expression
 * is due within any 10 years.
 */
function canEverMatch(cron: Omit<CronInterval, 'kind' | 'text'>): boolean {
  if (cron.dayOfWeekRestricted || cron.lastDayOfMonth) return true;
  return cron.months.some((month) => cron.daysOfMonth.some((day) => day <= longestMonthLength(month)));
}

const FIELD_HELP = "three cron fields 'day-of-month month day-of-week' (e.g. '1 * *')";
const KEYWORD_HELP = `a keyword (${KEYWORDS.join(', ')})`;

/** Fields are separated by spaces and tabs; whitespace around the whole expression is ignored. */
function splitFields(text: string): Token[] {
  const start = text.length - text.trimStart().length;
  return [...text.trim().matchAll(/[^ \t]+/g)].map((match) => ({ text: match[0], position: start + match.index }));
}

function fieldCountFailure(fields: readonly Token[]): ParseFailure {
  const first = fields[0];
  if (first === undefined) return failure(`The interval is empty: expected ${KEYWORD_HELP} or ${FIELD_HELP}`, 0);
  if (fields.length === 1 && (KEYWORDS as readonly string[]).includes(first.text.toLowerCase())) {
    return failure(
      `Keywords are written exactly in lower case without surrounding spaces: '${first.text.toLowerCase()}'`,
      first.position,
    );
  }
  const extra = fields[3];
  if (extra !== undefined) {
    return failure(
      `Expected ${FIELD_HELP}, found ${fields.length} fields; minute and hour fields are not supported`,
      extra.position,
    );
  }
  const lastField = fields[fields.length - 1] ?? first;
  return failure(
    `Expected ${KEYWORD_HELP} or ${FIELD_HELP}, found ${fields.length} field${fields.length === 1 ? '' : 's'}`,
    lastField.position + lastField.text.length,
  );
}

function parseCron(text: string): ParseResult {
  const fields = splitFields(text);
  const [dayOfMonthToken, monthToken, dayOfWeekToken] = fields;
  if (
    fields.length !== 3 ||
    dayOfMonthToken === undefined ||
    monthToken === undefined ||
    dayOfWeekToken === undefined
  ) {
    return fieldCountFailure(fields);
  }
  const dayOfMonth = parseField(DAY_OF_MONTH, dayOfMonthToken);
  if (isFailure(dayOfMonth)) return dayOfMonth;
  const month = parseField(MONTH, monthToken);
  if (isFailure(month)) return month;
  const dayOfWeek = parseField(DAY_OF_WEEK, dayOfWeekToken);
  if (isFailure(dayOfWeek)) return dayOfWeek;
  const interval: CronInterval = {
    kind: 'cron',
    text,
    daysOfMonth: dayOfMonth.values,
    lastDayOfMonth: dayOfMonth.last,
    months: month.values,
    daysOfWeek: normaliseWeekdays(dayOfWeek.values),
    dayOfMonthRestricted: dayOfMonth.restricted,
    dayOfWeekRestricted: dayOfWeek.restricted,
  };
  if (!canEverMatch(interval)) {
    return failure(
      `'${text.trim()}' is never due: none of the listed months has any of the listed days of the month (use L for the last day)`,
      dayOfMonthToken.position,
    );
  }
  return { ok: true, interval };
}

function isKeyword(text: string): text is Keyword {
  return (KEYWORDS as readonly string[]).includes(text);
}

/**
 * Parses a `recurring_interval`. Keywords must match exactly (lower case, no spaces); anything else is read as cron.
 * Never throws: every problem comes back as a message and the position of the offending character or token.
 */
export function parseInterval(text: string): ParseResult {
  if (isKeyword(text)) return { ok: true, interval: { kind: 'keyword', keyword: text, text } };
  return parseCron(text);
}
