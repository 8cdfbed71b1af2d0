import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Filter, matchesFilter, parseFilter } from './index';

/**
 * Property tests against a reference evaluator written here, directly over a generated tree:
 * binary and/or, exceptions for type errors, Object.keys for own properties and a regular
 * expression for digit strings. The generated tree is printed with random spellings, quotes,
 * escapes, parentheses and whitespace, then parsed by the real parser; where the reference and
 * matchesFilter disagree, one of them misreads the documented semantics.
 */

// ---------------------------------------------------------------- the generated language

type Scalar = string | number | boolean | null;
type Literal = { t: 'literal'; value: Scalar };
type Operand =
  | Literal
  | { t: 'list'; items: Literal[] }
  | { t: 'path'; steps: ({ key: string } | { index: number })[] }
  | { t: 'group'; inner: Bool };
type Bool =
  | Operand
  | { t: 'compare'; op: '==' | '!=' | '<' | '<=' | '>' | '>='; left: Operand; right: Operand }
  | { t: 'in'; negated: boolean; left: Operand; right: Operand }
  | { t: 'not'; bang: boolean; operand: Bool }
  | { t: 'and' | 'or'; symbolic: boolean; left: Bool; right: Bool };

const KEYS = ['a', 'b', 'data', 'amount', 'value', 'in', 'not', 'x-y', '', 'é', 'with space'];

const digitString = fc
  .tuple(fc.boolean(), fc.stringMatching(/^[0-9]{1,5}$/), fc.option(fc.stringMatching(/^[0-9]{1,3}$/)))
  .map(([minus, whole, fraction]) => `${minus ? '-' : ''}${whole}${fraction === null ? '' : `.${fraction}`}`);

const stringValue = fc.oneof(
  digitString,
  fc.constantFrom('', 'a', 'ab', 'card', '1e3', ' 5', '+5', '5.', '.5', '-', 'it\'s "q"\\', 'é\n\t\r', '\u2028', '😀'),
  fc.string({ maxLength: 6 }),
);

const numberValue = fc.oneof(
  fc.integer({ min: -3000, max: 3000 }),
  fc.constantFrom(0, -0, 5, 500, 2500, 0.5, -3.5, 1e21, 1.5e-7),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** A small shared pool makes equal values (and digit strings meeting their numbers) common. */
const commonScalar = fc.constantFrom<Scalar>('a', '5', ' 5', '500', '0500.0', '5e2', '-3.5', 5, 500, -3.5, true, null);

const scalar: fc.Arbitrary<Scalar> = fc.oneof(
  { arbitrary: commonScalar, weight: 10 },
  { arbitrary: stringValue, weight: 3 },
  { arbitrary: numberValue, weight: 3 },
  { arbitrary: fc.boolean(), weight: 1 },
  { arbitrary: fc.constant(null), weight: 1 },
);

const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { minKeys: 2, maxKeys: 6 }),
  ),
})).value;

/**
 * Events with a known skeleton (every key but `data` optional, so paths also run into missing
 * values and type errors) and a free-form `nested` part; paths mostly follow the skeleton.
 */
const eventArbitrary = fc
  .record(
    {
      a: scalar,
      b: scalar,
      'x-y': scalar,
      in: scalar,
      data: fc.record(
        {
          a: scalar,
          value: scalar,
          amount: fc.record({ value: scalar, currency: fc.constantFrom('CHF', 'EUR') }, { requiredKeys: [] }),
          list: fc.array(scalar, { maxLength: 4 }),
          nested: json,
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['data'] },
  )
  .map((event) => ({ event }));

const literal: fc.Arbitrary<Literal> = scalar.map((value) => ({ t: 'literal', value }));

const step = fc.oneof(
  { arbitrary: fc.constantFrom(...KEYS).map((key) => ({ key })), weight: 3 },
  { arbitrary: fc.nat(2).map((index) => ({ index })), weight: 1 },
);

const KNOWN_PATHS: ({ key: string } | { index: number })[][] = [
  ['a'],
  ['b'],
  ['x-y'],
  ['in'],
  ['data'],
  ['data', 'a'],
  ['data', 'value'],
  ['data', 'amount', 'value'],
  ['data', 'list'],
  ['data', 'list', 0],
  ['data', 'list', 1],
  ['data', 'nested'],
  ['data', 'nested', 'a'],
  ['data', 'nested', 0],
].map((steps) => steps.map((name) => (typeof name === 'number' ? { index: name } : { key: name })));

const path = fc
  .oneof(
    { arbitrary: fc.constantFrom(...KNOWN_PATHS), weight: 4 },
    { arbitrary: fc.array(step, { maxLength: 4 }), weight: 1 },
  )
  .map((steps) => ({ t: 'path' as const, steps }));

const list: fc.Arbitrary<Operand> = fc.array(literal, { maxLength: 4 }).map((items) => ({ t: 'list' as const, items }));

function operand(depth: number): fc.Arbitrary<Operand> {
  const leaves: fc.Arbitrary<Operand>[] = [literal, list, path, path];
  if (depth === 0) return fc.oneof(...leaves);
  return fc.oneof(
    ...leaves,
    boolean(depth - 1).map((inner) => ({ t: 'group' as const, inner })),
  );
}

/** Equality is weighted up: ordering most pairs of random values is a type error. */
const comparisonOperator = fc.constantFrom('==', '!=', '==', '!=', '<', '<=', '>', '>=') as fc.Arbitrary<
  '==' | '!=' | '<' | '<=' | '>' | '>='
>;

function boolean(depth: number): fc.Arbitrary<Bool> {
  const side = operand(depth);
  const leaves: fc.Arbitrary<Bool>[] = [
    fc
      .tuple(
        comparisonOperator,
        // Mostly an event value against a literal, the shape real filters have.
        fc.oneof(
          { arbitrary: fc.tuple(path, literal), weight: 2 },
          { arbitrary: fc.tuple(literal, path), weight: 1 },
          { arbitrary: fc.tuple(side, side), weight: 2 },
        ),
      )
      .map(([op, [left, right]]): Bool => ({ t: 'compare', op, left, right })),
    fc.record({
      t: fc.constant('in' as const),
      negated: fc.boolean(),
      left: side,
      right: fc.oneof({ arbitrary: list, weight: 2 }, { arbitrary: side, weight: 1 }),
    }),
    // A bare value as a condition: mostly booleans, so that and/or/not are not always type errors.
    fc.oneof(
      fc.boolean().map((value): Operand => ({ t: 'literal', value })),
      path,
      side,
    ),
  ];
  if (depth === 0) return fc.oneof(...leaves);
  const sub = boolean(depth - 1);
  return fc.oneof(
    ...leaves,
    fc.record({ t: fc.constant('not' as const), bang: fc.boolean(), operand: sub }),
    fc.record({ t: fc.constantFrom('and' as const, 'or' as const), symbolic: fc.boolean(), left: sub, right: sub }),
    fc.record({ t: fc.constantFrom('and' as const, 'or' as const), symbolic: fc.boolean(), left: sub, right: sub }),
  );
}

const expression = boolean(3);

// ---------------------------------------------------------------- printing

/** A small deterministic generator, seeded by fast-check, for layout choices that do not change meaning. */
function layoutRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 2 ** 32;
  };
}

function printer(seed: number) {
  const random = layoutRandom(seed);
  const pick = <T>(options: readonly T[]): T => options[Math.floor(random() * options.length)] as T;
  /** Optional blanks between tokens; word operators get at least one. */
  const gap = () => pick(['', '', ' ', ' ', '  ', '\t', '\n', '\r\n']);
  const space = () => pick([' ', ' ', '  ', '\t', '\n']);

  function printString(value: string): string {
    const quote = pick(['"', "'"]);
    let out = quote;
    for (const char of value) {
      const code = char.codePointAt(0) ?? 0;
      if (char === quote || char === '\\') out += `\\${char}`;
      else if (char === '\n') out += pick(['\\n', '\n', '\\u000a']);
      else if (char === '\t') out += pick(['\\t', '\t']);
      else if (char === '\r') out += pick(['\\r', '\\u000D']);
      else if (char === '"' || char === "'") out += pick([char, `\\${char}`]);
      else if (code > 0xffff || random() < 0.1) {
        // Each UTF-16 unit on its own, so a character outside the BMP becomes a surrogate pair of escapes.
        for (let unit = 0; unit < char.length; unit++) {
          const hex = char.charCodeAt(unit).toString(16).padStart(4, '0');
          out += `\\u${random() < 0.5 ? hex : hex.toUpperCase()}`;
        }
      } else out += char;
    }
    return out + quote;
  }

  function printScalar(value: Scalar): string {
    if (typeof value === 'string') return printString(value);
    if (typeof value === 'number') {
      const text = String(value);
      return Number.isInteger(value) && Math.abs(value) < 1e6 && random() < 0.2 ? `${text}.0` : text;
    }
    return String(value);
  }

  function printOperand(node: Operand): string {
    switch (node.t) {
      case 'literal':
        return printScalar(node.value);
      case 'list':
        return `[${gap()}${node.items.map((item) => printScalar(item.value)).join(`${gap()},${gap()}`)}${gap()}]`;
      case 'path':
        return `event${node.steps
          .map((step) => {
            if ('index' in step) return `${gap()}[${gap()}${'0'.repeat(pick([0, 0, 1]))}${step.index}${gap()}]`;
            const named = /^[A-Za-z_][A-Za-z0-9_]*$/.test(step.key);
            return named && random() < 0.6
              ? `${gap()}.${gap()}${step.key}`
              : `${gap()}[${gap()}${printString(step.key)}${gap()}]`;
          })
          .join('')}`;
      case 'group':
        return `(${gap()}${print(node.inner, 0)}${gap()})`;
    }
  }

  /** Binding strength: or 1, and 2, not 3, comparison 4, primary 5. */
  function level(node: Bool): number {
    switch (node.t) {
      case 'or':
        return 1;
      case 'and':
        return 2;
      case 'not':
        return 3;
      case 'compare':
      case 'in':
        return 4;
      default:
        return 5;
    }
  }

  /** Prints `node` where the context needs at least binding `needed`; adds parentheses when needed and at random. */
  function print(node: Bool, needed: number): string {
    const text = printBare(node);
    return level(node) < needed || random() < 0.15 ? `(${gap()}${text}${gap()})` : text;
  }

  function printBare(node: Bool): string {
    switch (node.t) {
      case 'compare':
        return `${print(node.left, 5)}${gap()}${node.op}${gap()}${print(node.right, 5)}`;
      case 'in':
        return `${print(node.left, 5)}${space()}${node.negated ? `not${space()}in` : 'in'}${space()}${print(node.right, 5)}`;
      case 'not':
        return node.bang ? `!${gap()}${print(node.operand, 3)}` : `not${space()}${print(node.operand, 3)}`;
      case 'and':
      case 'or': {
        const spelling = node.symbolic
          ? `${gap()}${node.t === 'and' ? '&&' : '||'}${gap()}`
          : `${space()}${node.t}${space()}`;
        const needed = node.t === 'and' ? 2 : 1;
        return `${print(node.left, needed)}${spelling}${print(node.right, needed)}`;
      }
      default:
        return printOperand(node);
    }
  }

  return (node: Bool) => `${gap()}${print(node, 0)}${gap()}`;
}

function printFilter(node: Bool, seed: number): string {
  return printer(seed)(node);
}

// ---------------------------------------------------------------- reference semantics

class ReferenceTypeError extends Error {}

function fail(): never {
  throw new ReferenceTypeError();
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCompound(value: unknown): boolean {
  return typeof value === 'object' && value !== null;
}

function asNumber(text: string): number | undefined {
  return /^-?[0-9]+(\.[0-9]+)?$/.test(text) && Number.isFinite(Number(text)) ? Number(text) : undefined;
}

/** Number and digit-string pairs as two numbers; undefined for any other pair. */
function numeric(left: unknown, right: unknown): [number, number] | undefined {
  if (typeof left === 'number' && typeof right === 'number') return [left, right];
  if (typeof left === 'number' && typeof right === 'string') {
    const converted = asNumber(right);
    return converted === undefined ? undefined : [left, converted];
  }
  if (typeof left === 'string' && typeof right === 'number') {
    const converted = asNumber(left);
    return converted === undefined ? undefined : [converted, right];
  }
  return undefined;
}

function referenceEquals(left: unknown, right: unknown): boolean {
  if (isCompound(left) && isCompound(right)) fail();
  if (isCompound(left) || isCompound(right)) return false;
  const pair = numeric(left, right);
  if (pair) return pair[0] === pair[1];
  return typeof left === typeof right && left === right;
}

function referenceOrder(left: unknown, right: unknown): number {
  const pair = numeric(left, right);
  if (pair) return pair[0] < pair[1] ? -1 : pair[0] > pair[1] ? 1 : 0;
  if (typeof left === 'string' && typeof right === 'string') return left < right ? -1 : left > right ? 1 : 0;
  return fail();
}

function referenceValue(node: Bool, root: { event: unknown }): unknown {
  switch (node.t) {
    case 'literal':
      return node.value;
    case 'list':
      return node.items.map((item) => item.value);
    case 'group':
      return referenceValue(node.inner, root);
    case 'path': {
      let current: unknown = root.event;
      for (const step of node.steps) {
        if ('index' in step) {
          if (!Array.isArray(current)) fail();
          current = step.index < current.length ? current[step.index] : null;
        } else {
          if (!isObject(current)) fail();
          current = Object.keys(current).includes(step.key) ? current[step.key] : null;
        }
      }
      return current;
    }
    case 'compare': {
      const left = referenceValue(node.left, root);
      const right = referenceValue(node.right, root);
      if (node.op === '==') return referenceEquals(left, right);
      if (node.op === '!=') return !referenceEquals(left, right);
      const sign = referenceOrder(left, right);
      return { '<': sign < 0, '<=': sign <= 0, '>': sign > 0, '>=': sign >= 0 }[node.op];
    }
    case 'in': {
      const left = referenceValue(node.left, root);
      const right = referenceValue(node.right, root);
      let found: boolean;
      if (typeof right === 'string') {
        if (typeof left !== 'string') fail();
        found = right.includes(left);
      } else if (Array.isArray(right)) {
        if (isCompound(left)) fail();
        found = right.some((element) => !isCompound(element) && referenceEquals(left, element));
      } else {
        fail();
      }
      return node.negated ? !found : found;
    }
    case 'not': {
      const value = referenceValue(node.operand, root);
      return typeof value === 'boolean' ? !value : fail();
    }
    case 'and':
    case 'or': {
      const left = referenceValue(node.left, root);
      if (typeof left !== 'boolean') fail();
      if (node.t === 'and' && !left) return false;
      if (node.t === 'or' && left) return true;
      const right = referenceValue(node.right, root);
      return typeof right === 'boolean' ? right : fail();
    }
  }
}

type Outcome = 'true' | 'false' | 'other' | 'type error';

function referenceOutcome(node: Bool, root: { event: unknown }): Outcome {
  try {
    const value = referenceValue(node, root);
    return value === true ? 'true' : value === false ? 'false' : 'other';
  } catch (error) {
    if (error instanceof ReferenceTypeError) return 'type error';
    throw error;
  }
}

// ---------------------------------------------------------------- properties

function compile(text: string): Filter {
  const result = parseFilter(text);
  if (!result.ok) throw new Error(`${JSON.stringify(text)}: ${result.message} at ${result.position}`);
  return result.filter;
}

const sampleEvent = { event: { name: 'payment.succeeded', data: { amount: { value: '2500' }, tags: ['a'] } } };

/** A refusal is a message and a position inside (or just past) the text, never the defect fallback. */
function expectWellFormed(text: string): void {
  const result = parseFilter(text);
  if (result.ok) {
    expect(result.filter.text).toBe(text);
    expect(typeof matchesFilter(result.filter, sampleEvent)).toBe('boolean');
  } else {
    expect(result.message).not.toBe('filter could not be parsed');
    expect(result.message.length).toBeGreaterThan(0);
    expect(Number.isInteger(result.position)).toBe(true);
    expect(result.position).toBeGreaterThanOrEqual(0);
    expect(result.position).toBeLessThanOrEqual(text.length);
  }
}

describe('matchesFilter against the reference evaluator', () => {
  it('agrees on random filters over random events', () => {
    const seen: Record<Outcome, number> = { true: 0, false: 0, other: 0, 'type error': 0 };
    fc.assert(
      fc.property(
        expression,
        fc.integer(),
        fc.array(eventArbitrary, { minLength: 1, maxLength: 3 }),
        (node, seed, events) => {
          const filter = compile(printFilter(node, seed));
          for (const event of events) {
            const expected = referenceOutcome(node, event);
            seen[expected]++;
            expect(matchesFilter(filter, event)).toBe(expected === 'true');
          }
        },
      ),
      { numRuns: 1000 },
    );
    // The generator reaches every kind of outcome often enough to make the agreement meaningful.
    const total = seen.true + seen.false + seen.other + seen['type error'];
    expect(seen.true / total).toBeGreaterThan(0.1);
    expect(seen.false / total).toBeGreaterThan(0.1);
    expect(seen['type error'] / total).toBeGreaterThan(0.1);
    expect(seen.other).toBeGreaterThan(0);
  });

  it('agrees on comparisons between event values and literals, where digit strings meet numbers', () => {
    const operator = fc.constantFrom('==', '!=', '<', '<=', '>', '>=', 'in', 'not in');
    fc.assert(
      fc.property(scalar, scalar, operator, fc.boolean(), fc.integer(), (stored, written, op, storedLeft, seed) => {
        const stored_: Operand = { t: 'path', steps: [{ key: 'v' }] };
        const written_: Literal = { t: 'literal', value: written };
        let node: Bool;
        if (op === 'in' || op === 'not in') {
          node = { t: 'in', negated: op === 'not in', left: stored_, right: { t: 'list', items: [written_] } };
        } else {
          const [left, right] = storedLeft ? [stored_, written_] : [written_, stored_];
          node = { t: 'compare', op, left, right };
        }
        const event = { event: { v: stored } };
        const expected = referenceOutcome(node, event) === 'true';
        expect(matchesFilter(compile(printFilter(node, seed)), event)).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('parseFilter', () => {
  it('never throws on arbitrary strings', () => {
    fc.assert(fc.property(fc.string({ maxLength: 60 }), expectWellFormed), { numRuns: 500 });
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 60 }), expectWellFormed), { numRuns: 500 });
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 2100 }), expectWellFormed), { numRuns: 300 });
  });

  it('never throws on soups of the language’s own tokens', () => {
    const token = fc.constantFrom(
      'event',
      '.',
      '[',
      ']',
      '(',
      ')',
      ',',
      '"',
      "'",
      '\\',
      '\\u',
      '0',
      '12',
      '-',
      '-1.5e3',
      'e',
      'a',
      '_',
      'not',
      'in',
      'and',
      'or',
      '&&',
      '||',
      '!',
      '==',
      '!=',
      '<',
      '<=',
      '>',
      '>=',
      '=',
      '~',
      '&',
      '|',
      'true',
      'false',
      'null',
      ' ',
      '\n',
      '\t',
      '"x"',
      "'y'",
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 80 }), (tokens) => expectWellFormed(tokens.join(''))),
      { numRuns: 1000 },
    );
  });

  it('never throws on valid filters with one character dropped or inserted', () => {
    const inserted = fc.oneof(
      fc.constantFrom('(', ')', '[', ']', '"', "'", '\\', '.', '!', '=', '<', '-', ',', ' ', 'x', '0', 'é'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    );
    fc.assert(
      fc.property(expression, fc.integer(), fc.nat(), fc.boolean(), inserted, (node, seed, at, drop, char) => {
        const text = printFilter(node, seed);
        const index = at % (text.length + 1);
        const mutated = drop
          ? text.slice(0, index) + text.slice(index + 1)
          : text.slice(0, index) + char + text.slice(index);
        expectWellFormed(mutated);
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps the text as given, and that text compiles to the same filter', () => {
    fc.assert(
      fc.property(expression, fc.integer(), eventArbitrary, (node, seed, event) => {
        const text = printFilter(node, seed);
        const filter = compile(text);
        expect(filter.text).toBe(text);
        expect(JSON.parse(JSON.stringify(filter))).toEqual({ text });
        const again = compile(filter.text);
        const revived = JSON.parse(JSON.stringify(filter)) as Filter;
        const outcome = matchesFilter(filter, event);
        expect(matchesFilter(again, event)).toBe(outcome);
        expect(matchesFilter(revived, event)).toBe(outcome);
        // Another layout of the same tree means the same.
        expect(matchesFilter(compile(printFilter(node, seed + 1)), event)).toBe(outcome);
      }),
      { numRuns: 500 },
    );
  });
});
