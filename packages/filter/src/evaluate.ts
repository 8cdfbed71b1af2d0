import type { ComparisonOperator, Expr, Scalar, Step } from './ast';
import { isDigit } from './lexer';

/**
 * Evaluation of a compiled filter over one event. Every node is evaluated at most once and no
 * event value is ever walked recursively (there is no deep equality), so the cost is linear in
 * the tree plus the length of each string or array that `in` scans, and cyclic or deeply nested
 * events are harmless. A runtime type error is the value TYPE_ERROR, passed up to the root.
 */

export const TYPE_ERROR: unique symbol = Symbol('filter type error');

type PlainObject = { readonly [key: string]: unknown };

/** A JSON value as read from the event: arrays and objects are read lazily, one step at a time. */
type Value = Scalar | readonly unknown[] | PlainObject;

type Outcome = Value | typeof TYPE_ERROR;

/** Objects with the ordinary prototype (or none): what JSON.parse makes. Class instances, Maps and Dates are not JSON. */
function isPlainObject(value: unknown): value is PlainObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function isContainer(value: Value): value is readonly unknown[] | PlainObject {
  return typeof value === 'object' && value !== null;
}

/**
 * A raw event value as a filter value: `undefined` (an absent property, a hole) reads as null as
 * JSON would write it; values JSON cannot hold (NaN, Infinity, functions, symbols, bigints, class
 * instances) are type errors rather than guesses.
 */
function classify(raw: unknown): Outcome {
  if (raw === undefined || raw === null) return null;
  switch (typeof raw) {
    case 'string':
    case 'boolean':
      return raw;
    case 'number':
      return Number.isFinite(raw) ? raw : TYPE_ERROR;
    case 'object':
      return Array.isArray(raw) || isPlainObject(raw) ? (raw as Value) : TYPE_ERROR;
    default:
      return TYPE_ERROR;
  }
}

/**
 * An own data property, never the prototype chain and never a getter: `event.constructor` and
 * `event["__proto__"]` are simply absent, and reading a filter runs no code of the event's.
 */
function ownValue(container: object, key: string | number): Outcome {
  const descriptor = Object.getOwnPropertyDescriptor(container, key);
  if (descriptor === undefined) return null;
  return 'value' in descriptor ? classify(descriptor.value) : TYPE_ERROR;
}

/** Objects take names, arrays take indices (an index past the end is null); anything else is a type error. */
function step(value: Outcome, next: Step): Outcome {
  if (value === TYPE_ERROR) return TYPE_ERROR;
  if (next.kind === 'key') return isPlainObject(value) ? ownValue(value, next.key) : TYPE_ERROR;
  if (!Array.isArray(value)) return TYPE_ERROR;
  return next.index < value.length ? ownValue(value, next.index) : null;
}

/** The root is the object handed to matchesFilter; the leading `event` is its own property `event`. */
function readPath(root: unknown, steps: readonly Step[]): Outcome {
  const rootValue = classify(root);
  const start = rootValue === TYPE_ERROR ? TYPE_ERROR : step(rootValue, { kind: 'key', key: 'event' });
  return steps.reduce(step, start);
}

/**
 * `-? digits (. digits)?`, the way amounts (`Money.value`) are written, and finite as a number.
 * No exponent, `+`, blanks or bare dots: `"1e3"` and `" 5"` stay text.
 */
export function isDigitString(text: string): boolean {
  let at = text[0] === '-' ? 1 : 0;
  const digitsFrom = (from: number): number => {
    let end = from;
    while (isDigit(text[end])) end++;
    return end;
  };
  let end = digitsFrom(at);
  if (end === at) return false;
  if (text[end] === '.') {
    at = end + 1;
    end = digitsFrom(at);
    if (end === at) return false;
  }
  return end === text.length && Number.isFinite(Number(text));
}

/** Both sides as numbers when one is a number and the other a digit string (the contract's amount rule). */
function numericPair(left: Value, right: Value): [number, number] | undefined {
  if (typeof left === 'number' && typeof right === 'string' && isDigitString(right)) return [left, Number(right)];
  if (typeof left === 'string' && typeof right === 'number' && isDigitString(left)) return [Number(left), right];
  return undefined;
}

/**
 * `==`: scalars of one type by value, a number and a digit string numerically, other mixed types
 * unequal. A container against a scalar is unequal (so `event.data.x != null` tests presence);
 * two containers are a type error, since deep equality would walk the event.
 */
function equals(left: Value, right: Value): boolean | typeof TYPE_ERROR {
  const leftContainer = isContainer(left);
  const rightContainer = isContainer(right);
  if (leftContainer && rightContainer) return TYPE_ERROR;
  if (leftContainer || rightContainer) return false;
  if (typeof left === typeof right) return left === right;
  const pair = numericPair(left, right);
  return pair !== undefined && pair[0] === pair[1];
}

/** The sign of `left - right` for ordering: numbers, strings by UTF-16 code units, or number against digit string. */
function order(left: Value, right: Value): number | typeof TYPE_ERROR {
  const pair =
    typeof left === 'number' && typeof right === 'number' ? ([left, right] as const) : numericPair(left, right);
  if (pair !== undefined) return Math.sign(pair[0] - pair[1]);
  if (typeof left === 'string' && typeof right === 'string') return left < right ? -1 : left > right ? 1 : 0;
  return TYPE_ERROR;
}

function compare(op: ComparisonOperator, left: Value, right: Value): boolean | typeof TYPE_ERROR {
  if (op === '==' || op === '!=') {
    const same = equals(left, right);
    return same === TYPE_ERROR ? TYPE_ERROR : same === (op === '==');
  }
  const sign = order(left, right);
  if (sign === TYPE_ERROR) return TYPE_ERROR;
  switch (op) {
    case '<':
      return sign < 0;
    case '<=':
      return sign <= 0;
    case '>':
      return sign > 0;
    case '>=':
      return sign >= 0;
  }
}

function isScalar(value: Outcome): value is Scalar {
  return value !== TYPE_ERROR && !isContainer(value);
}

/**
 * `in`: membership in an array with `==` semantics (the needle must be a scalar; elements that are
 * not scalars never match it), or substring of a string (the needle must be a string).
 */
function contains(needle: Value, haystack: Value): boolean | typeof TYPE_ERROR {
  if (typeof haystack === 'string') return typeof needle === 'string' ? haystack.includes(needle) : TYPE_ERROR;
  if (!Array.isArray(haystack) || !isScalar(needle)) return TYPE_ERROR;
  for (let index = 0; index < haystack.length; index++) {
    const element = ownValue(haystack, index);
    if (isScalar(element) && equals(needle, element) === true) return true;
  }
  return false;
}

/** Both operands evaluated, or the first type error; left before right. */
function operands(left: Expr, right: Expr, root: unknown): [Value, Value] | typeof TYPE_ERROR {
  const leftValue = evaluate(left, root);
  if (leftValue === TYPE_ERROR) return TYPE_ERROR;
  const rightValue = evaluate(right, root);
  return rightValue === TYPE_ERROR ? TYPE_ERROR : [leftValue, rightValue];
}

/**
 * `and`/`or` left to right, stopping at the first operand that decides the result: `false and X`
 * is false and `true or X` is true whatever X is, even a type error. Every operand evaluated must
 * be a boolean.
 */
function chain(kind: 'and' | 'or', items: readonly Expr[], root: unknown): Outcome {
  const decisive = kind === 'or';
  for (const item of items) {
    const value = evaluate(item, root);
    if (typeof value !== 'boolean') return TYPE_ERROR;
    if (value === decisive) return decisive;
  }
  return !decisive;
}

/** The value of `expr` over `root` (the object holding `event`), or TYPE_ERROR. */
export function evaluate(expr: Expr, root: unknown): Outcome {
  switch (expr.kind) {
    case 'literal':
      return expr.value;
    case 'list':
      return expr.items;
    case 'path':
      return readPath(root, expr.steps);
    case 'compare': {
      const values = operands(expr.left, expr.right, root);
      return values === TYPE_ERROR ? TYPE_ERROR : compare(expr.op, values[0], values[1]);
    }
    case 'in': {
      const values = operands(expr.left, expr.right, root);
      if (values === TYPE_ERROR) return TYPE_ERROR;
      const found = contains(values[0], values[1]);
      return found === TYPE_ERROR ? TYPE_ERROR : found !== expr.negated;
    }
    case 'not': {
      const value = evaluate(expr.operand, root);
      return typeof value === 'boolean' ? !value : TYPE_ERROR;
    }
    case 'and':
    case 'or':
      return chain(expr.kind, expr.operands, root);
  }
}
