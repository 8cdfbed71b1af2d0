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
