import { someValueAt, splitFieldPath } from './field-path';
import { toNumber } from './numeric';
import type { Query, RangeBounds, Scalar } from './query';

export type SearchDocument = Readonly<Record<string, unknown>>;
export type DocumentPredicate = (document: SearchDocument) => boolean;

/**
 * Turns the query into closures once, so evaluating a document splits no paths, lower-cases no
 * query values and looks nothing up by operator name. A leaf holds if any value its path reaches
 * passes the leaf's test: that is how a field holding an array matches when one element does.
 */
export function compileQuery(query: Query): DocumentPredicate {
  switch (query.op) {
    case 'all':
      return () => true;
    case 'match':
      return leaf(query.field, matchTest(query.value));
    case 'term': {
      const { value } = query;
      return leaf(query.field, (candidate) => candidate === value);
    }
    case 'terms': {
      const values = new Set<unknown>(query.values);
      return leaf(query.field, (candidate) => values.has(candidate));
    }
    case 'range':
      return leaf(query.field, rangeTest(query.bounds));
    case 'exists':
      return leaf(query.field, (candidate) => candidate !== null);
    case 'and': {
      const clauses = query.clauses.map(compileQuery);
      return (document) => clauses.every((clause) => clause(document));
    }
    case 'or': {
      const clauses = query.clauses.map(compileQuery);
      return (document) => clauses.some((clause) => clause(document));
    }
    case 'not': {
      const clause = compileQuery(query.clause);
      return (document) => !clause(document);
    }
  }
}

export function matchesQuery(query: Query, document: SearchDocument): boolean {
  return compileQuery(query)(document);
}

function leaf(field: string, test: (value: unknown) => boolean): DocumentPredicate {
  const segments = splitFieldPath(field);
  return (document) => someValueAt(document, segments, 0, test);
}

/**
 * `$match`: strings equal ignoring case (both sides lower-cased, locale-independent); a number
 * also equals a numeric string of the same value, as `amount.value` is stored as digits (the same
 * rule as the filter grammar's comparisons); booleans equal booleans.
 */
function matchTest(value: Scalar): (candidate: unknown) => boolean {
  if (typeof value === 'string') {
    const lowered = value.toLowerCase();
    return (candidate) => typeof candidate === 'string' && (candidate === value || candidate.toLowerCase() === lowered);
  }
  if (typeof value === 'number') return (candidate) => candidate === value || toNumber(candidate) === value;
  return (candidate) => candidate === value;
}

function rangeTest(bounds: RangeBounds): (candidate: unknown) => boolean {
  // Absent bounds become infinities, which every finite value passes.
  const gt = bounds.gt ?? Number.NEGATIVE_INFINITY;
  const gte = bounds.gte ?? Number.NEGATIVE_INFINITY;
  const lt = bounds.lt ?? Number.POSITIVE_INFINITY;
  const lte = bounds.lte ?? Number.POSITIVE_INFINITY;
  return (candidate) => {
    const number = toNumber(candidate);
    return number !== undefined && number > gt && number >= gte && number < lt && number <= lte;
  };
}
