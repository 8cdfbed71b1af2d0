import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomBytes, randomUUID } from 'node:crypto';

/** The one id generator: RFC 4122 version 4 uuids. */
export function newUuid(): string {
  return randomUUID();
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/** An opaque url-safe random token (secrets, process tokens). 32 bytes by default. */
export function newToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * A name-based uuid (RFC 4122 version 5 layout over SHA-1): the same parts always give the same
 * uuid. Background work names what it creates this way (the invoice of a subscription period,
 * the n-th charge attempt of an invoice), so a repeated message writes to the same key and the
 * store's `attribute_not_exists` condition turns the repeat into a no-op.
 */
export function derivedUuid(...parts: ReadonlyArray<string | number>): string {
  const hash = createHash('sha1').update(parts.join('\u0000')).digest();
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * What a request that carries an `Idempotency-Key` names its new resources by. The key's record
 * holds a random seed; a re-run of the same request (its first run died after the provider call
 * but before its answer was recorded) gets the same seed back, so it names the same payment,
 * refund, source or subscription, finds what the first run stored, and passes the provider the
 * same idempotency reference: never a second resource, never a second charge.
 */
export interface ResourceNaming {
  seed: string;
  /** True when the request takes over the claim of an earlier run that did not finish. */
  resumed: boolean;
}

interface NamingScope extends ResourceNaming {
  counts: Map<string, number>;
}

const namingScope = new AsyncLocalStorage<NamingScope>();

export function withResourceNaming<T>(naming: ResourceNaming | undefined, work: () => Promise<T>): Promise<T> {
  if (!naming) return work();
  return namingScope.run({ ...naming, counts: new Map() }, work);
}

/**
 * A new resource's uuid: random, or inside an idempotent request derived from its seed, the
 * resource kind and how many of that kind the request has named before (the n-th endpoint of
 * an onboarding is the n-th again in its re-run).
 */
export function newResourceUuid(kind: string): string {
  const scope = namingScope.getStore();
  if (!scope) return newUuid();
  const count = (scope.counts.get(kind) ?? 0) + 1;
  scope.counts.set(kind, count);
  return derivedUuid('resource', scope.seed, kind, count);
}

/**
 * Whether this request re-runs one whose earlier run may have stored some of what it creates:
 * only then is it worth looking up a derived uuid before writing it.
 */
export function isResumedRequest(): boolean {
  return namingScope.getStore()?.resumed ?? false;
}
