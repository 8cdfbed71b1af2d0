/**
 * Bounds on a filter's text and compiled tree. A subscription's filter runs against every event
 * the subscription could receive, so its cost must be small and known when it is saved: these
 * bound the work of one evaluation (linear in the tree) and keep the parser's recursion shallow.
 */
export const FILTER_LIMITS = Object.freeze({
  /** Characters (UTF-16 code units) of the whole filter text. */
  maxLength: 2000,
  /** Open parentheses, lists and `not`/`!` operands at one point; deeper text is refused, not recursed into. */
  maxDepth: 32,
  /** Items of one list literal. */
  maxListItems: 100,
  /** Characters of one string literal after its escapes are decoded. */
  maxStringLength: 500,
  /** Literals, lists, path segments, comparisons, `not`s and `and`/`or` operators together. */
  maxNodes: 500,
});
