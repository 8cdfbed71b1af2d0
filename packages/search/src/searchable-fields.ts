export interface SearchOptions {
  /**
   * The fields a caller may query, sort and aggregate on: exact paths (`amount.value`), or
   * `prefix.*` for every path below a prefix (`custom_parameters.*`). Absent: any field. Keeps
   * stored fields that responses never show out of reach of a probing query. `includes` and
   * `excludes` are not checked: they only shape hits the caller may read anyway.
   */
  readonly fields?: readonly string[];
}

export type FieldGuard = (path: string) => boolean;

export function fieldGuard(options: SearchOptions): FieldGuard {
  const { fields } = options;
  if (fields === undefined) return () => true;
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const field of fields) {
    if (field.endsWith('.*')) prefixes.push(field.slice(0, -1));
    else exact.add(field);
  }
  return (path) => exact.has(path) || prefixes.some((prefix) => path.startsWith(prefix) && path.length > prefix.length);
}
