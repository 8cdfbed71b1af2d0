import { SEARCH_LIMITS } from './limits';

/**
 * Fields are dotted paths into the document as its GET returns it (`amount.value`,
 * `custom_parameters.campaign`). Arrays on the way are flattened, as a search index would: the
 * path `refunds.status` reaches the status of every refund, and a field holding an array holds
 * each of its elements (see sql/json-path.ts).
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
