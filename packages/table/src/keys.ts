/** Key parts are joined with '#'; an entity's name is always the first part, so one entity's
 * query can never return another's items. */
export function key(...parts: ReadonlyArray<string | number>): string {
  return parts.join('#');
}

/** Unix seconds as a fixed-width sort-key part, so keys sort by time (negatives clamp to 0). */
export function timeKey(unixSeconds: number): string {
  return String(Math.max(0, Math.floor(unixSeconds))).padStart(12, '0');
}

export interface ItemKey {
  pk: string;
  sk: string;
}
