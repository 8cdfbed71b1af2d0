/**
 * # @svc/filter — webhook subscription filters
 *
 * A subscription's optional `filter` is an expression over the event about to be delivered, e.g.
 * `event.data["amount"]["value"] >= 1000 and event.data["payment_method"] == "card"`. It is parsed
 * once when the subscription is created or updated (a filter that does not parse is a 400, with
 * the message and 0-based position parseFilter returns) and evaluated per event with matchesFilter.
 * Neither function throws. Text is bounded by FILTER_LIMITS so that evaluation is cheap and known.
 *
 * ## Syntax
 * - Literals: strings in `'…'` or `"…"` with the escapes `\\ \' \" \n \t \r \uXXXX` (any other
 *   escape is a parse error); numbers `-? digits (. digits)? (e|E [+-]? digits)?` — the minus is
 *   part of the literal and must touch the digits, there is no other arithmetic; `true`, `false`,
 *   `null`; lists `[1, "a", null]` of literals only (no paths, no nested lists: they are constants).
 * - Paths start with `event`, the only name; `event.a.b`, `event["a-b"]`, `event.items[0]`. A name
 *   after `.` is `[A-Za-z_][A-Za-z0-9_]*` (keywords included: `event.data.in`), other names use
 *   brackets, an index is plain digits. Member access applies to paths only (`"ab"[0]` is refused).
 * - Operators, lowest precedence first: `or`/`||`; `and`/`&&`; `not`/`!`; comparison
 *   `== != < <= > >= in`, `not in` (non-associative: `a < b < c` is refused); then paths,
 *   literals and parentheses. `!` is just another spelling of `not`, so `!event.x == 1` means
 *   `!(event.x == 1)`; `not in` has no `!` spelling.
 * - Keywords are lower case. Whitespace is spaces, tabs, CR and LF. Positions and lengths count
 *   UTF-16 code units. No function calls, assignment (`=`) or regular expressions (`=~`).
 *
 * ## Values
 * The filter sees `{ event: { uuid, name, created, …, data } }` as JSON. A path reads own data
 * properties of plain objects only (never the prototype chain, never a getter), so
 * `event.constructor` and `event["__proto__"]` are null unless the event really has such a key. A
 * missing property and an index past the end of an array are null. Reading a name from anything
 * but an object, or an index from anything but an array, is a type error. A value JSON cannot hold
 * (NaN, Infinity, a function, a class instance) is a type error when a path reaches it.
 *
 * ## Comparisons
 * - A *digit string* is `-? digits (. digits)?` ("2500", "-3.50", "007"; not "1e3", " 5", "+1"),
 *   as amounts are written. When one side is a number and the other a digit string, the string is
 *   converted with Number (so beyond 2^53 it compares at double precision). Two strings always
 *   compare as text, so compare amounts with number literals: `"900" > "1000"` is true.
 * - `==` / `!=`: same-type scalars by value (strings exactly, numbers numerically, booleans, null);
 *   number vs digit string numerically; other mixed types are unequal (`==` false, `!=` true). A
 *   list or object against a scalar is unequal, so `event.data.x != null` tests presence; two lists
 *   or objects are a type error (no deep equality: it would walk the event).
 * - `< <= > >=`: numbers, strings by code-unit order, number vs digit string numerically; any
 *   other pair (booleans, null, lists, objects, mixed) is a type error.
 * - `x in list`: `x` must be a scalar; true when some element `==` it (elements that are lists or
 *   objects never match). `x in string`: `x` must be a string; substring test (`"" in s` is true).
 *   Any other right side, a missing one included, is a type error. `not in` is the negation of
 *   `in`, and a type error stays a type error, so `"x" not in event.data.missing` does not match.
 * - `and`, `or`, `not` need booleans. `and`/`or` run left to right and stop as soon as the result is
 *   decided: `false and X` is false and `true or X` is true even if X would be a type error.
 *
 * ## Matching
 * A filter matches when its value is exactly `true`: `event.data.flag` matches only a boolean true.
 * A type error anywhere that is evaluated makes the whole filter not match — also under `not`,
 * since the error replaces the value of the whole filter, not of the comparison.
 *
 * ## Cost
 * At most FILTER_LIMITS.maxNodes nodes, each evaluated at most once; event values are never walked
 * beyond the path, and `in` scans one string or array once. Cyclic and deeply nested events are
 * fine. Parsing recurses only through parentheses, lists and `not`, each bounded by maxDepth;
 * `and`/`or` chains are flat.
 */
import type { Expr } from './ast';
import { evaluate } from './evaluate';
import { FilterSyntaxError } from './lexer';
import { parseExpression } from './parser';

export { FILTER_LIMITS } from './limits';

/** Where a compiled tree is kept: a symbol key keeps it out of JSON and out of reach of other modules. */
const COMPILED: unique symbol = Symbol('@svc/filter compiled');

/**
 * A parsed filter. Store and show `text` (stored exactly as given; `JSON.stringify` writes only
 * `{ "text": … }`); the compiled tree is opaque.
 */
export interface Filter {
  readonly text: string;
  readonly [COMPILED]: Expr;
}

export type FilterParseResult = { ok: true; filter: Filter } | { ok: false; message: string; position: number };

/** Parses and checks a filter; any input, never throws. `position` is a 0-based UTF-16 index into `text`. */
export function parseFilter(text: string): FilterParseResult {
  if (typeof text !== 'string') return { ok: false, message: 'filter must be a string', position: 0 };
  try {
    const filter: Filter = Object.freeze({ text, [COMPILED]: parseExpression(text) });
    return { ok: true, filter };
  } catch (error) {
    if (error instanceof FilterSyntaxError) return { ok: false, message: error.message, position: error.position };
    // Unreachable by design; a defect must still answer 400 rather than crash the request.
    return { ok: false, message: 'filter could not be parsed', position: 0 };
  }
}

/**
 * The compiled tree of a filter. A Filter not made by parseFilter (say `{ text }` revived from
 * storage and cast) is compiled from its text, so it cannot match differently from the original.
 */
function compiledTree(filter: Filter): Expr | undefined {
  if (typeof filter !== 'object' || filter === null) return undefined;
  if (Object.hasOwn(filter, COMPILED)) return filter[COMPILED];
  const parsed = parseFilter(filter.text);
  return parsed.ok ? parsed.filter[COMPILED] : undefined;
}

/**
 * Whether `event` (the object `{ event: {…} }`) passes the filter: the filter's value is exactly
 * `true` and no type error occurred. Never throws; a hostile value (a throwing proxy) does not match.
 */
export function matchesFilter(filter: Filter, event: unknown): boolean {
  try {
    const tree = compiledTree(filter);
    return tree !== undefined && evaluate(tree, event) === true;
  } catch {
    return false;
  }
}
