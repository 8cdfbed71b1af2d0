import * as z from 'zod';

/** A uuid in any case, lower-cased as every key and grant stores it. */
export const uuidSchema = z.guid().transform((value) => value.toLowerCase());

/**
 * A schema built at its first use instead of when its module loads: at cold start, building
 * schemas costs a function 10–20 µs for each zod schema, and most are not needed by the one
 * request a new instance serves. The response schemas are all deferred: they only describe the
 * API (`/openapi.json`, built at bundle time), so a deployed function never builds them; input
 * and record schemas are where a function's operations each read few of them. It is zod's
 * `z.lazy`, so it nests, parses and describes itself like the schema it builds.
 */
export function deferred<T extends z.ZodType>(build: () => T): z.ZodLazy<T> {
  const schema = z.lazy(() => {
    built.add(schema);
    return build();
  });
  return schema;
}

const built = new WeakSet<z.ZodType>();

/** Whether a `deferred` schema has been built yet (what a module's load builds, for the tests). */
export function isBuilt(schema: z.ZodType): boolean {
  return built.has(schema);
}
