import { ROUTE_TABLE } from '@svc/api';
import { isBuilt } from '@svc/core';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { EVENT_DATA } from '../apps/api/src/wiring-event-data';

/**
 * Response and event-data schemas only describe the API (`/openapi.json`, built at bundle time):
 * each is `deferred`, and loading the domains' code builds none of them, so no deployed function
 * pays for them at cold start. This file's modules are fresh (vitest isolates each test file), so
 * what is built here was built by loading them.
 */

/** The deferred schema inside a route's response schema (a list of them, or one that may be absent). */
function deferredIn(schema: z.ZodType): z.ZodLazy | undefined {
  if (schema instanceof z.ZodLazy) return schema;
  if (schema instanceof z.ZodArray || schema instanceof z.ZodOptional) return deferredIn(schema.unwrap() as z.ZodType);
  return undefined;
}

/**
 * A response schema may be built with its module when it is small (a few fields: building it
 * costs less than deferring saves), or needed anyway: the supporter's is its record schema, which
 * every supporters request parses.
 */
const NEEDED_ANYWAY = new Set(['listSupporters', 'createSupporter', 'getSupporter', 'updateSupporter']);
const isSmall = (schema: z.ZodType) => JSON.stringify(z.toJSONSchema(schema, { unrepresentable: 'any' })).length < 400;

describe('response schemas at cold start', () => {
  const responses = ROUTE_TABLE.flatMap(({ route }) =>
    Object.entries(route.responses).flatMap(([status, spec]) =>
      spec.schema ? [{ name: `${route.operationId} ${status}`, schema: spec.schema }] : [],
    ),
  );

  it('are deferred, but for a few small ones and the supporter’s', () => {
    const eager = responses.filter(
      ({ name, schema }) =>
        deferredIn(schema) === undefined && !NEEDED_ANYWAY.has(name.split(' ')[0] ?? '') && !isSmall(schema),
    );
    expect(eager.map(({ name }) => name)).toEqual([]);
    expect(responses.length).toBeGreaterThan(50);
  });

  it('are not built by loading the domains’ routes', () => {
    const deferredOnes = responses.flatMap(({ name, schema }) => {
      const lazy = deferredIn(schema);
      return lazy ? [{ name, lazy }] : [];
    });
    expect(deferredOnes.length).toBeGreaterThan(40);
    expect(deferredOnes.filter(({ lazy }) => isBuilt(lazy)).map(({ name }) => name)).toEqual([]);
  });

  it('of events are not built either', () => {
    const schemas = Object.entries(EVENT_DATA).map(([object, data]) => ({ object, schema: data.schema }));
    expect(schemas.length).toBeGreaterThan(5);
    expect(schemas.filter(({ schema }) => deferredIn(schema) === undefined).map(({ object }) => object)).toEqual([]);
    expect(schemas.filter(({ schema }) => isBuilt(schema)).map(({ object }) => object)).toEqual([]);
  });

  it('are built, and describe themselves, when the API description asks for them', async () => {
    const { describeApi } = await import('@svc/api');
    const document = describeApi() as { paths: Record<string, Record<string, { operationId: string }>> };
    expect(Object.keys(document.paths).length).toBeGreaterThan(40);
    const built = responses.flatMap(({ schema }) => {
      const lazy = deferredIn(schema);
      return lazy ? [isBuilt(lazy)] : [];
    });
    expect(built.every(Boolean)).toBe(true);
  });
});
