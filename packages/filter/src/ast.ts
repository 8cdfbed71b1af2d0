/**
 * The compiled form of a filter. Lists hold literal scalars only, so they are constants built once
 * at parse time; `and`/`or` are flat n-ary nodes so a long chain adds width, not depth.
 */

/** A value written literally in a filter, and the JSON values comparisons operate on. */
export type Scalar = string | number | boolean | null;

export type ComparisonOperator = '==' | '!=' | '<' | '<=' | '>' | '>=';

/** One step of a path: a property of an object (`.name`, `["name"]`) or an element of an array (`[0]`). */
export type Step = { readonly kind: 'key'; readonly key: string } | { readonly kind: 'index'; readonly index: number };

export type Expr =
  | { readonly kind: 'literal'; readonly value: Scalar }
  | { readonly kind: 'list'; readonly items: readonly Scalar[] }
  | { readonly kind: 'path'; readonly steps: readonly Step[] }
  | { readonly kind: 'compare'; readonly op: ComparisonOperator; readonly left: Expr; readonly right: Expr }
  | { readonly kind: 'in'; readonly negated: boolean; readonly left: Expr; readonly right: Expr }
  | { readonly kind: 'not'; readonly operand: Expr }
  | { readonly kind: 'and' | 'or'; readonly operands: readonly Expr[] };
