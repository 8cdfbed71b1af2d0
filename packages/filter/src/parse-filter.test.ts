import { describe, expect, it } from 'vitest';
import { FILTER_LIMITS, type FilterParseResult, parseFilter } from './index';

function refusal(text: string): { message: string; position: number } {
  const result: FilterParseResult = parseFilter(text);
  if (result.ok) throw new Error(`expected ${JSON.stringify(text.slice(0, 80))} to be refused`);
  return { message: result.message, position: result.position };
}

function accepted(text: string): boolean {
  return parseFilter(text).ok;
}

describe('parseFilter refuses, at the exact position', () => {
  // [filter, 0-based position, exact message]
  const cases: [string, number, string][] = [
    ['"abc', 0, 'unterminated string'],
    ['event.data.x == "abc', 16, 'unterminated string'],
    ['event.data.x == \'abc"', 16, 'unterminated string'],
    ['event.data.x == "abc\\', 16, 'unterminated string'],
    ['event.data.x == "a\\qb"', 18, 'unknown escape \\q'],
    ["'\\/'", 1, 'unknown escape \\/'],
    ['"ok" == "\\u12G4"', 9, 'invalid escape: \\u must be followed by four hexadecimal digits'],
    ['"\\u12"', 1, 'invalid escape: \\u must be followed by four hexadecimal digits'],
    ['data.x == 1', 0, 'unknown name data; start paths with event'],
    ['event.a == 1 and amount > 5', 17, 'unknown name amount; start paths with event'],
    ['Event.x == 1', 0, 'unknown name Event; start paths with event (did you mean event?)'],
    ['event.x == TRUE', 11, 'unknown name TRUE; start paths with event (did you mean true?)'],
    ['event.x AND true', 8, "unexpected 'AND' after a complete expression; combine conditions with and / or"],
    [
      'event.x == 1 event.y == 2',
      13,
      "unexpected 'event' after a complete expression; combine conditions with and / or",
    ],
    ['event.x == 1 "a"', 13, 'unexpected a string after a complete expression; combine conditions with and / or'],
    ['event.x == 1)', 12, "unmatched ')'"],
    ['', 0, 'filter is empty'],
    [' \t\n ', 4, 'filter is empty'],
    ['1 < 2 < 3', 6, 'comparisons cannot be chained; combine them with and'],
    ['event.a < event.b < event.c', 18, 'comparisons cannot be chained; combine them with and'],
    ['event.a == 1 == true', 13, 'comparisons cannot be chained; combine them with and'],
    ['"a" in "ab" in "abc"', 12, 'comparisons cannot be chained; combine them with and'],
    ['event.', 6, "expected a property name after '.', found end of filter"],
    ['event.1', 6, "expected a property name after '.', found number 1"],
    ['event.data.', 11, "expected a property name after '.', found end of filter"],
    ['event[', 6, "expected a quoted property name or an array index after '[', found end of filter"],
    ['event[event.x]', 6, "expected a quoted property name or an array index after '[', found 'event'"],
    ['event["a"', 9, "expected ']', found end of filter"],
    ['event[1.5]', 6, 'an array index must be a non-negative integer'],
    ['event[-1]', 6, 'an array index must be a non-negative integer'],
    ['event[1e2]', 6, 'an array index must be a non-negative integer'],
    ['event.data.x()', 12, 'function calls are not supported'],
    ['event.data.x ("a")', 13, 'function calls are not supported'],
    ['contains(event.x, "a")', 0, 'unknown function contains; function calls are not supported'],
    ['len (event.x) > 1', 0, 'unknown function len; function calls are not supported'],
    ['"abc".length', 5, 'member access applies only to paths that start with event'],
    ['[1, 2][0] == 1', 6, 'member access applies only to paths that start with event'],
    ['(event.data).x', 12, 'member access applies only to paths that start with event'],
    ['event.x = 1', 8, 'use == to compare; assignment is not supported'],
    ['event.x =~ "^a"', 8, 'regular expressions are not supported'],
    ['event.x !~ "^a"', 8, 'regular expressions are not supported'],
    ['event.x ~ 1', 8, "unexpected character '~'"],
    ['event.x == /a/', 11, "unexpected character '/'"],
    ['event.x == 1;', 12, "unexpected character ';'"],
    ['event.x\u00a0== 1', 7, 'unexpected character U+00A0'],
    ['event.é', 6, 'unexpected character U+00E9'],
    ['event.x & true', 8, "use && or and; '&' alone is not an operator"],
    ['event.x | true', 8, "use || or or; '|' alone is not an operator"],
    ['event.x == - 5', 11, "'-' must be followed by digits: minus applies only to number literals"],
    ['-event.x == 5', 0, "'-' must be followed by digits: minus applies only to number literals"],
    ['event.x == 1.', 11, 'invalid number: expected digits after the decimal point'],
    ['event.x == 1e', 11, 'invalid number: expected digits in the exponent'],
    ['event.x == 1and true', 11, 'invalid number: a number must be followed by a space or an operator'],
    ['event.x == 1.2.3', 11, 'invalid number: a number must be followed by a space or an operator'],
    ['event.x < 1e400', 10, 'number out of range'],
    ['event.x not 5', 12, "expected 'in' after 'not', found number 5"],
    ['event.x == not true', 11, "expected a value, found 'not'"],
    ['and true', 0, "expected a value, found 'and'"],
    ['event.x ==', 10, 'expected a value, found end of filter'],
    ['event.x == )', 11, "expected a value, found ')'"],
    ['event.x == 1 or', 15, 'expected a value, found end of filter'],
    ['(event.x == 1', 13, "expected ')' to close the '(' at 0, found end of filter"],
    ['((event.x == 1) or true', 23, "expected ')' to close the '(' at 0, found end of filter"],
    ['event.x in [event.y]', 12, "list items must be literals (string, number, true, false or null), found 'event'"],
    ['event.x in [[1]]', 12, "list items must be literals (string, number, true, false or null), found '['"],
    ['event.x in [1,]', 14, "list items must be literals (string, number, true, false or null), found ']'"],
    ['event.x in [1 2]', 14, "expected ',' or ']' in the list, found number 2"],
    ['event.x in [1', 13, "expected ',' or ']' in the list, found end of filter"],
  ];

  it.each(cases)('%j at %i: %s', (text, position, message) => {
    expect(refusal(text)).toEqual({ message, position });
  });

  it('refuses input that is not a string without throwing', () => {
    for (const value of [undefined, null, 42, {}, ['event']]) {
      expect(parseFilter(value as unknown as string)).toEqual({
        ok: false,
        message: 'filter must be a string',
        position: 0,
      });
    }
  });
});

describe('FILTER_LIMITS', () => {
  it('has the documented values', () => {
    expect(FILTER_LIMITS).toEqual({
      maxLength: 2000,
      maxDepth: 32,
      maxListItems: 100,
      maxStringLength: 500,
      maxNodes: 500,
    });
  });

  it('accepts exactly maxLength characters and refuses one more, at the first character past the limit', () => {
    const longest = `event.${'a'.repeat(FILTER_LIMITS.maxLength - 6)}`;
    expect(longest).toHaveLength(FILTER_LIMITS.maxLength);
    expect(accepted(longest)).toBe(true);
    expect(refusal(`${longest}b`)).toEqual({ message: 'filter is longer than 2000 characters', position: 2000 });
    expect(refusal(`${longest} `)).toEqual({ message: 'filter is longer than 2000 characters', position: 2000 });
  });

  it('refuses 100 000 open parentheses or nots cleanly', () => {
    expect(refusal('('.repeat(100_000))).toEqual({ message: 'filter is longer than 2000 characters', position: 2000 });
    expect(refusal('not '.repeat(100_000))).toEqual({
      message: 'filter is longer than 2000 characters',
      position: 2000,
    });
    expect(refusal('!'.repeat(100_000))).toEqual({ message: 'filter is longer than 2000 characters', position: 2000 });
  });

  it('refuses nesting deeper than maxDepth at the opening that goes too deep', () => {
    const depth = FILTER_LIMITS.maxDepth;
    const deep = 'nesting is deeper than 32 levels';
    expect(accepted(`${'('.repeat(depth)}true${')'.repeat(depth)}`)).toBe(true);
    expect(refusal(`${'('.repeat(depth + 1)}true${')'.repeat(depth + 1)}`)).toEqual({ message: deep, position: 32 });
    expect(refusal('('.repeat(FILTER_LIMITS.maxLength))).toEqual({ message: deep, position: 32 });

    expect(accepted(`${'not '.repeat(depth)}true`)).toBe(true);
    expect(refusal(`${'not '.repeat(depth + 1)}true`)).toEqual({ message: deep, position: 128 });
    expect(refusal(`${'not '.repeat(499)}true`)).toEqual({ message: deep, position: 128 });
    expect(accepted(`${'!'.repeat(depth)}true`)).toBe(true);
    expect(refusal(`${'!'.repeat(FILTER_LIMITS.maxLength)}`)).toEqual({ message: deep, position: 32 });
    expect(refusal(`${'not ('.repeat(17)}true${')'.repeat(17)}`)).toEqual({ message: deep, position: 80 });

    // A list opens one more level.
    const inList = (levels: number) => `${'('.repeat(levels)}event.x in [1]${')'.repeat(levels)}`;
    expect(accepted(inList(depth - 1))).toBe(true);
    expect(refusal(inList(depth))).toEqual({ message: deep, position: depth + 11 });
  });

  it('keeps long and/or chains flat: they add no depth', () => {
    const chain = Array.from({ length: 150 }, (_, index) => (index % 2 === 0 ? 'true' : 'false')).join(' or ');
    expect(accepted(chain)).toBe(true);
    expect(accepted(Array.from({ length: 150 }, () => 'true').join(' && '))).toBe(true);
  });

  it('refuses more than maxListItems items at the first item too many', () => {
    const items = (count: number) => Array.from({ length: count }, (_, index) => String(index % 10));
    expect(accepted(`event.x in [${items(100).join(',')}]`)).toBe(true);
    const text = `event.x in [${items(101).join(',')}]`;
    expect(refusal(text)).toEqual({ message: 'a list holds at most 100 items', position: text.length - 2 });
  });

  it('refuses a string literal longer than maxStringLength decoded characters, at its opening quote', () => {
    expect(accepted(`event.x == "${'a'.repeat(500)}"`)).toBe(true);
    expect(accepted(`event.x == "${'\\n'.repeat(500)}"`)).toBe(true);
    expect(refusal(`event.x == "${'a'.repeat(501)}"`)).toEqual({
      message: 'string longer than 500 characters',
      position: 11,
    });
    expect(refusal(`event["${'\\t'.repeat(501)}"]`)).toEqual({
      message: 'string longer than 500 characters',
      position: 6,
    });
  });

  it('refuses more than maxNodes nodes at the node too many', () => {
    const tooMany = 'too complex: more than 500 parts';
    // `event` and each step are nodes: the 500th step is the 501st node.
    expect(accepted(`event${'.a'.repeat(499)}`)).toBe(true);
    expect(refusal(`event${'.a'.repeat(600)}`)).toEqual({ message: `filter is ${tooMany}`, position: 5 + 2 * 499 });
    // Each literal and each `||` is a node: 250 ones and 249 ors are 499, the 251st one is the 501st.
    const chain = (count: number) => Array.from({ length: count }, () => '1').join('||');
    expect(accepted(chain(250))).toBe(true);
    expect(refusal(chain(300))).toEqual({ message: `filter is ${tooMany}`, position: 250 * 3 });
  });
});

describe('parseFilter accepts', () => {
  it.each([
    'event.data.x == "a" and event.data.y != \'b\'',
    'event.data.in == 1 and event.data.not == 2 and event.data.true == 3 and event.data.event == 4',
    'event . data [ "x" ] [ 0 ] == 1',
    'event.x in []',
    'event.x in [ -1 , 2.5 , 1e-3 , "a" , true , false , null ]',
    '(event.x)',
    'not(event.x)',
    '!(event.x)',
    'event.x!=1',
    'event.x<-1',
    'event.x not in[1]',
    '"\\\\ \\\' \\" \\n \\t \\r \\u00e9 \\uD83D\\uDE00" in event.x',
    '"\u{1f600} raw é" == event.x',
    'event.x == "line\nbreak"',
    'event.x == 00012',
  ])('%j', (text) => {
    const result = parseFilter(text);
    expect(result).toMatchObject({ ok: true, filter: { text } });
  });
});
