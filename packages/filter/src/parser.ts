import type { ComparisonOperator, Expr, Scalar, Step } from './ast';
import { FilterSyntaxError, readToken, skipWhitespace, type Token } from './lexer';
import { FILTER_LIMITS } from './limits';

/**
 * Recursive descent over the grammar, lowest precedence first:
 *
 *   or         := and (('or' | '||') and)*
 *   and        := not (('and' | '&&') not)*
 *   not        := ('not' | '!') not | comparison
 *   comparison := primary ((== | != | < | <= | > | >= | in | not in) primary)?
 *   primary    := literal | list | path | '(' or ')'
 *   path       := 'event' ('.' name | '[' string ']' | '[' digits ']')*
 *   list       := '[' (literal (',' literal)*)? ']'
 *
 * The parser recurses only through parentheses, lists and `not`, each of which counts one level
 * against FILTER_LIMITS.maxDepth before recursing, so hostile text is refused at a fixed depth.
 */

interface Parser {
  readonly text: string;
  /** The lookahead token, not yet consumed. */
  token: Token;
  /** Where reading resumes after the lookahead. */
  next: number;
  depth: number;
  nodes: number;
}

const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'true', 'false', 'null']);
const COMPARISON_OPERATORS = new Set<string>(['==', '!=', '<', '<=', '>', '>=']);

/** The compiled tree of `text`; throws FilterSyntaxError at the first problem in reading order. */
export function parseExpression(text: string): Expr {
  if (text.length > FILTER_LIMITS.maxLength) {
    throw new FilterSyntaxError(`filter is longer than ${FILTER_LIMITS.maxLength} characters`, FILTER_LIMITS.maxLength);
  }
  const first = readToken(text, 0);
  if (first.token.kind === 'end') throw new FilterSyntaxError('filter is empty', first.token.pos);
  const parser: Parser = { text, token: first.token, next: first.next, depth: 0, nodes: 0 };
  const expr = parseOr(parser);
  const rest = parser.token;
  if (rest.kind !== 'end') {
    const message = isSymbol(rest, ')')
      ? "unmatched ')'"
      : `unexpected ${describe(rest)} after a complete expression; combine conditions with and / or`;
    throw new FilterSyntaxError(message, rest.pos);
  }
  return expr;
}

function advance(parser: Parser): void {
  const { token, next } = readToken(parser.text, parser.next);
  parser.token = token;
  parser.next = next;
}

function isWord(token: Token, ...words: string[]): boolean {
  return token.kind === 'word' && words.includes(token.text);
}

function isSymbol(token: Token, ...symbols: string[]): boolean {
  return token.kind === 'symbol' && symbols.includes(token.text);
}

/** How a token is named in messages. */
function describe(token: Token): string {
  switch (token.kind) {
    case 'word':
    case 'symbol':
      return `'${token.text}'`;
    case 'number':
      return `number ${token.source}`;
    case 'string':
      return 'a string';
    case 'end':
      return 'end of filter';
  }
}

/** Counts one tree node against FILTER_LIMITS.maxNodes; `pos` is where the node starts. */
function countNode(parser: Parser, pos: number): void {
  parser.nodes++;
  if (parser.nodes > FILTER_LIMITS.maxNodes) {
    throw new FilterSyntaxError(`filter is too complex: more than ${FILTER_LIMITS.maxNodes} parts`, pos);
  }
}

/** Runs `parse` one nesting level deeper, refusing the construct opened at `pos` past FILTER_LIMITS.maxDepth. */
function nested<T>(parser: Parser, pos: number, parse: () => T): T {
  if (parser.depth >= FILTER_LIMITS.maxDepth) {
    throw new FilterSyntaxError(`nesting is deeper than ${FILTER_LIMITS.maxDepth} levels`, pos);
  }
  parser.depth++;
  const result = parse();
  parser.depth--;
  return result;
}

/** `and` and `or` chains, collected into one flat node so their length never adds depth. */
function parseChain(parser: Parser, kind: 'and' | 'or', operand: (parser: Parser) => Expr): Expr {
  const spellings = kind === 'and' ? ['and', '&&'] : ['or', '||'];
  const operands = [operand(parser)];
  while (isWord(parser.token, ...spellings) || isSymbol(parser.token, ...spellings)) {
    countNode(parser, parser.token.pos);
    advance(parser);
    operands.push(operand(parser));
  }
  const [only] = operands;
  return operands.length === 1 && only !== undefined ? only : { kind, operands };
}

function parseOr(parser: Parser): Expr {
  return parseChain(parser, 'or', parseAnd);
}

function parseAnd(parser: Parser): Expr {
  return parseChain(parser, 'and', parseNot);
}

function parseNot(parser: Parser): Expr {
  const token = parser.token;
  if (!isWord(token, 'not') && !isSymbol(token, '!')) return parseComparison(parser);
  countNode(parser, token.pos);
  return nested(parser, token.pos, () => {
    advance(parser);
    return { kind: 'not', operand: parseNot(parser) };
  });
}

function startsComparison(token: Token): boolean {
  return (token.kind === 'symbol' && COMPARISON_OPERATORS.has(token.text)) || isWord(token, 'in', 'not');
}

/** A primary, optionally compared with one more; comparisons do not associate, so a second is refused. */
function parseComparison(parser: Parser): Expr {
  const left = parseOperand(parser);
  const operator = parser.token;
  if (!startsComparison(operator)) return left;
  countNode(parser, operator.pos);
  advance(parser);
  let negated = false;
  if (isWord(operator, 'not')) {
    if (!isWord(parser.token, 'in')) {
      throw new FilterSyntaxError(`expected 'in' after 'not', found ${describe(parser.token)}`, parser.token.pos);
    }
    negated = true;
    advance(parser);
  }
  const right = parseOperand(parser);
  if (startsComparison(parser.token)) {
    throw new FilterSyntaxError('comparisons cannot be chained; combine them with and', parser.token.pos);
  }
  if (operator.kind === 'symbol') return { kind: 'compare', op: operator.text as ComparisonOperator, left, right };
  return { kind: 'in', negated, left, right };
}

/** A primary that is not followed by a call or, unless it is a path, by member access. */
function parseOperand(parser: Parser): Expr {
  const expr = parsePrimary(parser);
  const after = parser.token;
  if (isSymbol(after, '(')) throw new FilterSyntaxError('function calls are not supported', after.pos);
  if (isSymbol(after, '.', '[')) {
    throw new FilterSyntaxError('member access applies only to paths that start with event', after.pos);
  }
  return expr;
}

function parsePrimary(parser: Parser): Expr {
  const token = parser.token;
  const literal = literalValue(token);
  if (literal !== undefined) {
    countNode(parser, token.pos);
    advance(parser);
    return { kind: 'literal', value: literal.value };
  }
  if (isSymbol(token, '(')) return parseGroup(parser, token.pos);
  if (isSymbol(token, '[')) return parseList(parser, token.pos);
  if (token.kind === 'word') {
    if (token.text === 'event') return parsePath(parser, token.pos);
    if (!KEYWORDS.has(token.text)) throw unknownName(parser.text, token.text, token.pos);
  }
  throw new FilterSyntaxError(`expected a value, found ${describe(token)}`, token.pos);
}

/** The literal a token stands for, boxed so that `null` is distinguishable from "not a literal". */
function literalValue(token: Token): { value: Scalar } | undefined {
  switch (token.kind) {
    case 'number':
    case 'string':
      return { value: token.value };
    case 'word':
      if (token.text === 'true') return { value: true };
      if (token.text === 'false') return { value: false };
      if (token.text === 'null') return { value: null };
      return undefined;
    default:
      return undefined;
  }
}

/** Bare names other than `event` are refused, with the likely intent named where there is one. */
function unknownName(text: string, name: string, pos: number): FilterSyntaxError {
  if (text[skipWhitespace(text, pos + name.length)] === '(') {
    return new FilterSyntaxError(`unknown function ${name}; function calls are not supported`, pos);
  }
  const lower = name.toLowerCase();
  const hint = lower !== name && (KEYWORDS.has(lower) || lower === 'event') ? ` (did you mean ${lower}?)` : '';
  return new FilterSyntaxError(`unknown name ${name}; start paths with event${hint}`, pos);
}

function parseGroup(parser: Parser, open: number): Expr {
  return nested(parser, open, () => {
    advance(parser);
    const inner = parseOr(parser);
    if (!isSymbol(parser.token, ')')) {
      throw new FilterSyntaxError(
        `expected ')' to close the '(' at ${open}, found ${describe(parser.token)}`,
        parser.token.pos,
      );
    }
    advance(parser);
    return inner;
  });
}

/** Lists hold literals only: they are constants, so membership never evaluates anything. */
function parseList(parser: Parser, open: number): Expr {
  countNode(parser, open);
  return nested(parser, open, () => {
    advance(parser);
    const items: Scalar[] = [];
    if (isSymbol(parser.token, ']')) {
      advance(parser);
      return { kind: 'list', items };
    }
    for (;;) {
      const token = parser.token;
      if (items.length >= FILTER_LIMITS.maxListItems) {
        throw new FilterSyntaxError(`a list holds at most ${FILTER_LIMITS.maxListItems} items`, token.pos);
      }
      const literal = literalValue(token);
      if (literal === undefined) {
        throw new FilterSyntaxError(
          `list items must be literals (string, number, true, false or null), found ${describe(token)}`,
          token.pos,
        );
      }
      countNode(parser, token.pos);
      items.push(literal.value);
      advance(parser);
      if (isSymbol(parser.token, ']')) {
        advance(parser);
        return { kind: 'list', items };
      }
      if (!isSymbol(parser.token, ',')) {
        throw new FilterSyntaxError(
          `expected ',' or ']' in the list, found ${describe(parser.token)}`,
          parser.token.pos,
        );
      }
      advance(parser);
    }
  });
}

/** `event` followed by `.name`, `["name"]` and `[index]` steps; keywords are fine as names after a dot. */
function parsePath(parser: Parser, start: number): Expr {
  countNode(parser, start);
  advance(parser);
  const steps: Step[] = [];
  for (;;) {
    const token = parser.token;
    if (isSymbol(token, '.')) {
      countNode(parser, token.pos);
      advance(parser);
      const name = parser.token;
      if (name.kind !== 'word') {
        throw new FilterSyntaxError(`expected a property name after '.', found ${describe(name)}`, name.pos);
      }
      steps.push({ kind: 'key', key: name.text });
      advance(parser);
    } else if (isSymbol(token, '[')) {
      countNode(parser, token.pos);
      advance(parser);
      steps.push(bracketStep(parser.token));
      advance(parser);
      if (!isSymbol(parser.token, ']')) {
        throw new FilterSyntaxError(`expected ']', found ${describe(parser.token)}`, parser.token.pos);
      }
      advance(parser);
    } else {
      return { kind: 'path', steps };
    }
  }
}

function bracketStep(token: Token): Step {
  if (token.kind === 'string') return { kind: 'key', key: token.value };
  if (token.kind === 'number') {
    if (!token.index) throw new FilterSyntaxError('an array index must be a non-negative integer', token.pos);
    return { kind: 'index', index: token.value };
  }
  throw new FilterSyntaxError(
    `expected a quoted property name or an array index after '[', found ${describe(token)}`,
    token.pos,
  );
}
