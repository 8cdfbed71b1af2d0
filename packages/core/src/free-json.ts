import * as z from 'zod';

/**
 * Free JSON: the fields a client fills as it likes (custom parameters, svc parameters, metadata,
 * a supporter's parameters, a search body). One validator holds them all to limits the store
 * and the code can keep, so no input reaches DynamoDB's marshaller or a recursive walk that it
 * would break (a 500 is never the answer to bad input):
 *
 * - nesting: at most `maxDepth` levels of objects and arrays (DynamoDB refuses more than 32);
 * - objects: at most `maxKeys` keys, each 1 to `maxKeyLength` characters; the keys `__proto__`,
 *   `constructor` and `prototype` are refused (JavaScript gives them meaning, and the SDK's
 *   marshaller takes an object with its own `constructor` for a class instance);
 * - arrays: at most `maxItems` items;
 * - numbers: what DynamoDB stores and JavaScript reads back exactly: whole or fractional, at most
 *   2^53 - 1 in magnitude, and 0 or at least 1e-130;
 * - size: at most `maxBytes` bytes as JSON text.
 * Anything accepted is stored and returned exactly as sent.
 */
export interface FreeJsonLimits {
  maxDepth: number;
  maxKeys: number;
  maxKeyLength: number;
  maxItems: number;
  maxBytes: number;
}

export const FREE_JSON_LIMITS: FreeJsonLimits = {
  maxDepth: 16,
  maxKeys: 256,
  maxKeyLength: 256,
  maxItems: 1000,
  maxBytes: 64 * 1024,
};

export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

const SMALLEST_NUMBER = 1e-130;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether text is well-formed UTF-16 (no lone surrogate, which JSON's `\ud800` escape can make):
 * DynamoDB refuses such strings with a server error, so they are refused as input.
 */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

export interface FreeJsonProblem {
  path: Array<string | number>;
  message: string;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * The first problem of a value against the limits, or undefined. Walks with its own stack, so
 * any nesting a JSON parser produced is safe to check.
 */
export function freeJsonProblem(
  value: unknown,
  limits: FreeJsonLimits = FREE_JSON_LIMITS,
): FreeJsonProblem | undefined {
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value, path: [] }];
  while (stack.length > 0) {
    const next = stack.pop();
    if (!next) break;
    const { value: node, path } = next;
    if (typeof node === 'string') {
      if (!isWellFormedText(node)) return { path, message: 'Text must be well-formed Unicode (no lone surrogates)' };
      continue;
    }
    if (node === null || typeof node === 'boolean') continue;
    if (typeof node === 'number') {
      const size = Math.abs(node);
      if (!Number.isFinite(node) || size > Number.MAX_SAFE_INTEGER || (size !== 0 && size < SMALLEST_NUMBER)) {
        return { path, message: `Numbers must be 0 or between 1e-130 and ${Number.MAX_SAFE_INTEGER} in magnitude` };
      }
      continue;
    }
    const depth = path.length + 1;
    if (Array.isArray(node)) {
      if (depth > limits.maxDepth) return { path, message: `At most ${limits.maxDepth} levels of nesting` };
      if (node.length > limits.maxItems) return { path, message: `At most ${limits.maxItems} items in a list` };
      node.forEach((item, index) => {
        stack.push({ value: item, path: [...path, index] });
      });
      continue;
    }
    if (!isPlainObject(node)) return { path, message: 'Only JSON values are allowed' };
    if (depth > limits.maxDepth) return { path, message: `At most ${limits.maxDepth} levels of nesting` };
    const keys = Object.keys(node);
    if (keys.length > limits.maxKeys) return { path, message: `At most ${limits.maxKeys} keys in an object` };
    for (const key of keys) {
      if (key.length === 0 || key.length > limits.maxKeyLength) {
        return { path: [...path, key], message: `Keys must be 1 to ${limits.maxKeyLength} characters` };
      }
      if (RESERVED_KEYS.has(key)) return { path: [...path, key], message: `The key ${key} is reserved` };
      if (!isWellFormedText(key)) {
        return { path: [...path, key], message: 'Keys must be well-formed Unicode (no lone surrogates)' };
      }
      stack.push({ value: node[key], path: [...path, key] });
    }
  }
  if (Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8') > limits.maxBytes) {
    return { path: [], message: `At most ${limits.maxBytes} bytes as JSON` };
  }
  return undefined;
}

/** A free-JSON object field (see above), as a zod schema whose output is the value as sent. */
export function freeJsonObject(
  limits: Partial<FreeJsonLimits> = {},
): z.ZodType<Record<string, unknown>, Record<string, unknown>> {
  const applied = { ...FREE_JSON_LIMITS, ...limits };
  return z
    .custom<Record<string, unknown>>(isPlainObject, { message: 'Expected an object' })
    .superRefine((value, context) => {
      const problem = freeJsonProblem(value, applied);
      if (problem) context.addIssue({ code: 'custom', path: problem.path, message: problem.message, input: value });
    })
    .meta({
      type: 'object',
      description: `Free JSON: at most ${applied.maxDepth} levels, ${applied.maxKeys} keys an object, keys of 1 to ${applied.maxKeyLength} characters (not \`__proto__\`, \`constructor\` or \`prototype\`), ${applied.maxBytes} bytes`,
    });
}

/**
 * Flat key/value pairs with string values (custom parameters where the contract says so):
 * the free-JSON checks first (so a reserved key is refused, never silently dropped by the
 * record's copy), then string values only.
 */
export function flatStringObject(options: {
  maxKeys: number;
  maxKeyLength: number;
  maxValueLength: number;
}): z.ZodType<Record<string, string>, Record<string, unknown>> {
  return freeJsonObject({ maxDepth: 2, maxKeys: options.maxKeys, maxKeyLength: options.maxKeyLength }).pipe(
    z.record(z.string(), z.string().max(options.maxValueLength), {
      error: 'Custom parameters hold string values only',
    }),
  );
}

/** Search bodies nest boolean clauses more deeply and carry longer lists than parameters do. */
export const SEARCH_BODY_LIMITS: Partial<FreeJsonLimits> = { maxDepth: 32, maxItems: 10_000, maxBytes: 256 * 1024 };
