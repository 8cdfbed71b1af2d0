import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Slow salted hashes for client secrets and user passwords (scrypt, memory-hard).
 * Stored form: `scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>` so parameters can rise later
 * without breaking stored hashes.
 */
const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
const MAX_MEMORY = 64 * 1024 * 1024;

function derive(secret: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, KEY_LENGTH, { N: n, r, p, maxmem: MAX_MEMORY }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(secret, salt, N, R, P);
  return ['scrypt', N, R, P, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Constant-time check of a secret against a stored hash. A malformed hash never matches. */
export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  const salt = Buffer.from(parts[4] ?? '', 'base64url');
  const expected = Buffer.from(parts[5] ?? '', 'base64url');
  if (![n, r, p].every(Number.isSafeInteger) || expected.length !== KEY_LENGTH) return false;
  const actual = await derive(secret, salt, n, r, p);
  return timingSafeEqual(actual, expected);
}

/** A fixed hash to compare against when the client is unknown, so timing does not tell. */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashSecret(randomBytes(16).toString('hex'));
  return decoy;
}
