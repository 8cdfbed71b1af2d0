import * as z from 'zod';
import { invalidPolicy } from './s3-error';

/**
 * A SigV4 POST policy, decoded from its base64 form field and checked for shape (AWS's "Creating a
 * POST Policy"): an ISO 8601 `expiration` and a list of conditions, each an exact match
 * (`{"field": "value"}` or `["eq", "$field", "value"]`), a prefix match (`["starts-with",
 * "$field", "prefix"]`) or a size range (`["content-length-range", min, max]`). Anything else is
 * S3's 400 InvalidPolicyDocument.
 */
export type PolicyCondition =
  | { kind: 'eq'; field: string; value: string }
  | { kind: 'starts-with'; field: string; prefix: string }
  | { kind: 'content-length-range'; min: number; max: number };

export interface PostPolicy {
  /** Unix milliseconds after which the policy no longer holds. */
  expiration: number;
  conditions: PolicyCondition[];
}

const PolicyJson = z.object({ expiration: z.string(), conditions: z.array(z.unknown()) });
const ISO_8601_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const LengthBound = z.union([
  z.number().int().nonnegative(),
  z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number),
]);

export function decodePolicy(policyBase64: string): PostPolicy {
  if (!BASE64.test(policyBase64)) throw invalidPolicy('Invalid Policy encoding (not base64).');
  let json: unknown;
  try {
    json = JSON.parse(unescapePolicyText(Buffer.from(policyBase64, 'base64').toString('utf8')));
  } catch {
    throw invalidPolicy('Invalid JSON.');
  }
  const parsed = PolicyJson.safeParse(json);
  if (!parsed.success) {
    const missing = parsed.error.issues.find((issue) => issue.path.length === 1)?.path[0];
    throw invalidPolicy(missing ? `Policy missing or invalid '${String(missing)}'.` : 'Invalid policy document.');
  }
  const { expiration, conditions } = parsed.data;
  const expiresAt = Date.parse(expiration);
  if (!ISO_8601_UTC.test(expiration) || Number.isNaN(expiresAt)) {
    throw invalidPolicy(`Invalid 'expiration' value: '${expiration}'`);
  }
  return { expiration: expiresAt, conditions: conditions.flatMap(parseCondition) };
}

function parseCondition(raw: unknown): PolicyCondition[] {
  if (Array.isArray(raw)) return [parseListCondition(raw)];
  if (typeof raw === 'object' && raw !== null) {
    const entries = Object.entries(raw);
    if (entries.length === 0) throw invalidPolicy('Invalid Simple-Condition: empty object.');
    return entries.map(([field, value]) => {
      if (typeof value !== 'string') {
        throw invalidPolicy(`Invalid Simple-Condition: value of '${field}' must be a string.`);
      }
      return { kind: 'eq', field: field.toLowerCase(), value };
    });
  }
  throw invalidPolicy(`Invalid condition: ${JSON.stringify(raw)}`);
}

function parseListCondition(raw: unknown[]): PolicyCondition {
  const [operator, first, second] = raw;
  const name = typeof operator === 'string' ? operator.toLowerCase() : undefined;
  if (raw.length !== 3) throw invalidPolicy(`Invalid condition: ${JSON.stringify(raw)}`);
  if (name === 'content-length-range') {
    const min = LengthBound.safeParse(first);
    const max = LengthBound.safeParse(second);
    if (!min.success || !max.success) {
      throw invalidPolicy(`Invalid 'content-length-range' condition: ${JSON.stringify(raw)}`);
    }
    return { kind: 'content-length-range', min: min.data, max: max.data };
  }
  if (name === 'eq' || name === 'starts-with') {
    if (typeof first !== 'string' || !first.startsWith('$') || first.length < 2 || typeof second !== 'string') {
      throw invalidPolicy(`Invalid '${name}' condition: ${JSON.stringify(raw)}`);
    }
    const field = first.slice(1).toLowerCase();
    return name === 'eq' ? { kind: 'eq', field, value: second } : { kind: 'starts-with', field, prefix: second };
  }
  throw invalidPolicy(`Invalid condition operator: ${JSON.stringify(operator)}`);
}

/**
 * S3 accepts two escapes that JSON does not (`\$` for a literal dollar and `\v`); turn them into
 * JSON before parsing. Pairs are consumed left to right, so `\\$` stays an escaped backslash.
 */
function unescapePolicyText(text: string): string {
  return text.replace(/\\([\\$v])/g, (pair, char: string) => {
    if (char === '$') return '$';
    if (char === 'v') return '\\u000b';
    return pair;
  });
}
