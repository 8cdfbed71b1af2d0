import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { deferred, isBuilt } from './schemas';

/** A schema with the parts the service's schemas use: refinements, transforms, defaults, nesting. */
const build = () =>
  z
    .object({
      name: z.string().trim().min(1).max(5),
      amount: z.union([z.string().regex(/^[1-9][0-9]{0,3}$/), z.number().int().positive().max(9999)]),
      tags: z
        .array(z.enum(['a', 'b']))
        .max(2)
        .default([]),
      nested: z.object({ at: z.number().int().describe('Unix seconds') }).optional(),
    })
    .strict();

describe('deferred schemas', () => {
  it('are built at their first use, once, not when declared', () => {
    let builds = 0;
    const schema = deferred(() => {
      builds += 1;
      return build();
    });
    const parent = z.object({ child: schema.optional() });
    expect(builds).toBe(0);
    expect(isBuilt(schema)).toBe(false);
    // A schema that holds it may build it at its own first parse (zod reads its child's traits).
    expect(parent.parse({})).toEqual({});
    expect(builds).toBeLessThanOrEqual(1);
    schema.parse({ name: 'x', amount: 1 });
    schema.parse({ name: 'y', amount: '2' });
    parent.parse({ child: { name: 'z', amount: 3 } });
    expect(builds).toBe(1);
    expect(isBuilt(schema)).toBe(true);
  });

  it('accept, refuse and transform exactly as the schema they build', () => {
    const eager = build();
    const lazy = deferred(build);
    const value = fc.record(
      {
        name: fc.oneof(fc.string({ maxLength: 8 }), fc.integer()),
        amount: fc.oneof(fc.string({ maxLength: 6 }), fc.integer({ min: -5, max: 12_000 }), fc.double()),
        tags: fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 3 }),
        nested: fc.record({ at: fc.oneof(fc.integer(), fc.double(), fc.string()) }),
        extra: fc.string(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(value, (input) => {
        const a = eager.safeParse(input);
        const b = lazy.safeParse(input);
        expect(b.success).toBe(a.success);
        if (a.success && b.success) expect(b.data).toEqual(a.data);
        else expect(b.error?.issues).toEqual(a.error?.issues);
      }),
      { numRuns: 500 },
    );
  });

  it('describe themselves (JSON Schema, for /openapi.json) as the schema they build, alone and nested', () => {
    for (const io of ['input', 'output'] as const) {
      expect(z.toJSONSchema(deferred(build), { io })).toEqual(z.toJSONSchema(build(), { io }));
      expect(z.toJSONSchema(z.object({ list: z.array(deferred(build)).optional() }), { io })).toEqual(
        z.toJSONSchema(z.object({ list: z.array(build()).optional() }), { io }),
      );
    }
  });
});
