import { randomBytes, randomUUID } from 'node:crypto';

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
