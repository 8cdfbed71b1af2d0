/** Key parts are joined with '#'; an entity's name is always the first part, so one entity's
 * query can never return another's items. */
export function key(...parts: ReadonlyArray<string | number>): string {
  return parts.join('#');
}

export interface ItemKey {
  pk: string;
  sk: string;
}
