import { SEARCH_LIMITS } from './limits';

/**
 * Fields are dotted paths into the document as its GET returns it (`amount.value`,
 * `custom_parameters.campaign`). Arrays on the way are flattened, as a search index would: the
 * path `refunds.status` reaches the status of every refund, and a field holding an array holds
 * each of its elements.
 */

/** Why the path cannot name a field, or undefined when it can. */
export function fieldPathProblem(path: string): string | undefined {
  if (path.length === 0) return 'A field path must not be empty';
  if (path.length > SEARCH_LIMITS.maxPathLength) {
    return `A field path has at most ${SEARCH_LIMITS.maxPathLength} characters`;
  }
  const segments = path.split('.');
  if (segments.length > SEARCH_LIMITS.maxPathSegments) {
    return `A field path has at most ${SEARCH_LIMITS.maxPathSegments} segments`;
  }
  if (segments.some((segment) => segment.length === 0)) return 'A field path has no empty segments';
  return undefined;
}

export function splitFieldPath(path: string): readonly string[] {
  return path.split('.');
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Calls `visit` with every value the path reaches (array elements one by one, never the array),
 * until `visit` returns true; answers whether it did. Only own properties count, so a path such as
 * `constructor` never reaches into the prototype.
 */
export function someValueAt(
  node: unknown,
  segments: readonly string[],
  from: number,
  visit: (value: unknown) => boolean,
): boolean {
  let current = node;
  for (let index = from; ; index++) {
    if (Array.isArray(current)) {
      for (const element of current) {
        if (someValueAt(element, segments, index, visit)) return true;
      }
      return false;
    }
    if (index === segments.length) return current !== undefined && visit(current);
    const key = segments[index];
    if (key === undefined || !isRecord(current) || !Object.hasOwn(current, key)) return false;
    current = current[key];
  }
}

/** Calls `visit` with every value the path reaches. */
export function forEachValueAt(document: unknown, segments: readonly string[], visit: (value: unknown) => void): void {
  someValueAt(document, segments, 0, (value) => {
    visit(value);
    return false;
  });
}
