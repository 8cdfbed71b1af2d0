/**
 * The fields whose value is not undefined, for spreading optional members into an object:
 * `{ uuid, ...definedFields({ locale: request.locale }) }` has `locale` only when it is set (a
 * response never shows `"locale": undefined`, an item never stores it).
 */
export function definedFields<T extends Record<string, unknown>>(
  fields: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out as { [K in keyof T]?: Exclude<T[K], undefined> };
}
