import * as z from 'zod';

/** A uuid in any case, lower-cased as every key and grant stores it. */
export const uuidSchema = z.guid().transform((value) => value.toLowerCase());

/**
 * A schema built at its first use instead of when its module loads: at cold start, building
 * schemas costs a function 10–20 µs for each zod schema, and most are not needed by the one
 * request a new instance serves. Used for the response schemas, which only describe the API
 * (`/openapi.json`, built at bundle time): a deployed function never builds them. It is zod's
 * `z.lazy`, so it nests, parses and describes itself like the schema it builds.
 */
export function deferred<T extends z.ZodType>(build: () => T): z.ZodLazy<T> {
  return z.lazy(build);
}
