import { fieldPathProblem, isRecord } from './field-path';
import { SEARCH_LIMITS } from './limits';
import { toNumber } from './numeric';
import { DETAIL_CODES, type Problems, type PropertyPath } from './problems';
import { MATCH_ALL, type Query, type RangeBounds, type Scalar } from './query';
import type { FieldGuard } from './searchable-fields';

/**
 * Parses the wire query by hand rather than with a recursive zod schema: depth and clause count
 * are checked before each descent, so a hostile body is refused after at most
 * `maxQueryClauses` steps and `maxQueryDepth` frames, whatever its size.
 */
export function parseQuery(raw: unknown, allowed: FieldGuard, problems: Problems): Query | undefined {
  if (raw === undefined || raw === null) {
    problems.add(['query'], DETAIL_CODES.notBlank, 'A query is required; {"$match": {}} matches everything');
    return undefined;
  }
  const state: ParseState = { clauses: 0, stopped: false, allowed, problems };
  return parseClause(raw, ['query'], 1, state);
}

interface ParseState {
  clauses: number;
  /** Set when a limit is hit: nothing after it is examined or reported. */
  stopped: boolean;
  readonly allowed: FieldGuard;
  readonly problems: Problems;
}

const OPERATORS = ['$match', '$term', '$terms', '$range', '$exists', '$and', '$or', '$not'] as const;
const RANGE_BOUNDS = ['gt', 'gte', 'lt', 'lte'] as const;

function parseClause(raw: unknown, path: PropertyPath, depth: number, state: ParseState): Query | undefined {
  if (!spend(state, path)) return undefined;
  if (depth > SEARCH_LIMITS.maxQueryDepth) {
    state.problems.add(path, DETAIL_CODES.tooBig, `Queries nest at most ${SEARCH_LIMITS.maxQueryDepth} levels deep`);
    state.stopped = true;
    return undefined;
  }
  if (!isRecord(raw)) {
    return fail(state, path, missingOr(raw, DETAIL_CODES.invalidType), 'A clause is an object with one operator');
  }
  const operators = Object.keys(raw);
  const operator = operators[0];
  if (operator === undefined) return fail(state, path, DETAIL_CODES.notBlank, 'A clause names one operator');
  if (operators.length > 1) {
    return fail(state, path, DETAIL_CODES.notValid, 'A clause names exactly one operator; combine clauses with $and');
  }
  const operand = raw[operator];
  const at = [...path, operator];
  switch (operator) {
    case '$and':
    case '$or':
      return parseCompound(operator === '$and' ? 'and' : 'or', operand, at, depth, state);
    case '$not': {
      const clause = parseClause(operand, at, depth + 1, state);
      return clause && { op: 'not', clause };
    }
    case '$exists':
      return parseExists(operand, at, state);
    case '$range':
      return parseLeaf(operand, at, state, false, (field, value, where) => parseRange(field, value, where, state));
    case '$terms':
      return parseLeaf(operand, at, state, false, (field, value, where) => parseTerms(field, value, where, state));
    case '$match':
    case '$term': {
      const op = operator === '$match' ? 'match' : 'term';
      return parseLeaf(operand, at, state, op === 'match', (field, value, where) => {
        const scalar = parseScalar(value, where, state);
        return scalar === undefined ? undefined : { op, field, value: scalar };
      });
    }
    default:
      return fail(state, at, DETAIL_CODES.invalidChoice, `Unknown operator; use one of ${OPERATORS.join(', ')}`);
  }
}

/** Counts one clause against the budget; false once the budget (or another limit) stopped parsing. */
function spend(state: ParseState, path: PropertyPath): boolean {
  if (state.stopped) return false;
  state.clauses += 1;
  if (state.clauses <= SEARCH_LIMITS.maxQueryClauses) return true;
  state.problems.add(path, DETAIL_CODES.tooBig, `A query has at most ${SEARCH_LIMITS.maxQueryClauses} clauses`);
  state.stopped = true;
  return false;
}

function parseCompound(
  op: 'and' | 'or',
  operand: unknown,
  path: PropertyPath,
  depth: number,
  state: ParseState,
): Query | undefined {
  if (!Array.isArray(operand)) {
    return fail(state, path, missingOr(operand, DETAIL_CODES.invalidType), 'Takes an array of clauses');
  }
  const clauses: Query[] = [];
  let valid = true;
  for (const [index, item] of operand.entries()) {
    if (state.stopped) return undefined;
    const clause = parseClause(item, [...path, index], depth + 1, state);
    if (clause) clauses.push(clause);
    else valid = false;
  }
  return valid ? { op, clauses } : undefined;
}

function parseExists(operand: unknown, path: PropertyPath, state: ParseState): Query | undefined {
  if (typeof operand !== 'string') {
    return fail(state, path, missingOr(operand, DETAIL_CODES.invalidType), 'Takes the path of a field');
  }
  return checkField(operand, path, state) ? { op: 'exists', field: operand } : undefined;
}

/**
 * A leaf maps fields to operands; several fields must all hold. Only `$match` may be empty
 * (`{"$match": {}}` matches everything); an empty `$term`, `$terms` or
 * `$range` is more likely a mistake than a wish to match everything.
 */
function parseLeaf(
  operand: unknown,
  path: PropertyPath,
  state: ParseState,
  mayBeEmpty: boolean,
  parseField: (field: string, value: unknown, path: PropertyPath) => Query | undefined,
): Query | undefined {
  if (!isRecord(operand)) {
    return fail(state, path, missingOr(operand, DETAIL_CODES.invalidType), 'Takes an object mapping fields to values');
  }
  const leaves: Query[] = [];
  let valid = true;
  for (const [field, value] of Object.entries(operand)) {
    const where = [...path, field];
    if (!spend(state, where)) return undefined;
    const leaf = checkField(field, where, state) ? parseField(field, value, where) : undefined;
    if (leaf) leaves.push(leaf);
    else valid = false;
  }
  if (!valid) return undefined;
  const [only] = leaves;
  if (only === undefined) {
    return mayBeEmpty ? MATCH_ALL : fail(state, path, DETAIL_CODES.notBlank, 'Names at least one field');
  }
  return leaves.length === 1 ? only : { op: 'and', clauses: leaves };
}

function parseTerms(field: string, operand: unknown, path: PropertyPath, state: ParseState): Query | undefined {
  if (!Array.isArray(operand)) {
    return fail(state, path, missingOr(operand, DETAIL_CODES.invalidType), 'Takes an array of values');
  }
  if (operand.length === 0) return fail(state, path, DETAIL_CODES.notBlank, 'Takes at least one value');
  const values: Scalar[] = [];
  for (const [index, item] of operand.entries()) {
    const where = [...path, index];
    if (!spend(state, where)) return undefined;
    const scalar = parseScalar(item, where, state);
    if (scalar !== undefined) values.push(scalar);
  }
  return values.length === operand.length ? { op: 'terms', field, values } : undefined;
}

function parseRange(field: string, operand: unknown, path: PropertyPath, state: ParseState): Query | undefined {
  if (!isRecord(operand)) {
    return fail(state, path, missingOr(operand, DETAIL_CODES.invalidType), 'Takes an object of gt, gte, lt, lte');
  }
  const bounds: { -readonly [K in keyof RangeBounds]: number } = {};
  let valid = true;
  for (const [key, value] of Object.entries(operand)) {
    const bound = RANGE_BOUNDS.find((name) => name === key);
    const number = toNumber(value);
    if (bound === undefined) {
      fail(state, [...path, key], DETAIL_CODES.unknownField, 'A range takes gt, gte, lt and lte');
      valid = false;
    } else if (number === undefined) {
      fail(state, [...path, key], missingOr(value, DETAIL_CODES.notValid), 'A bound is a number or a numeric string');
      valid = false;
    } else {
      bounds[bound] = number;
    }
  }
  if (!valid) return undefined;
  if (Object.keys(bounds).length === 0) return fail(state, path, DETAIL_CODES.notBlank, 'Names at least one bound');
  return { op: 'range', field, bounds };
}

/** Query values are strings, numbers or booleans; missing values are found with `$exists`. */
function parseScalar(value: unknown, path: PropertyPath, state: ParseState): Scalar | undefined {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  const message = 'A value is a string, number or boolean; find missing fields with $exists';
  return fail(state, path, missingOr(value, DETAIL_CODES.invalidType), message);
}

function checkField(field: string, path: PropertyPath, state: ParseState): boolean {
  const problem = fieldPathProblem(field);
  if (problem !== undefined) {
    fail(state, path, DETAIL_CODES.notValid, problem);
    return false;
  }
  if (!state.allowed(field)) {
    fail(state, path, DETAIL_CODES.invalidChoice, `The field ${field} cannot be searched`);
    return false;
  }
  return true;
}

function missingOr(value: unknown, code: string): string {
  return value === undefined || value === null ? DETAIL_CODES.notBlank : code;
}

function fail(state: ParseState, path: PropertyPath, code: string, message: string): undefined {
  state.problems.add(path, code, message);
  return undefined;
}
