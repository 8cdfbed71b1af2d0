import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sdkClient } from './sdk-client';

/**
 * The service's hashing key: what it stores of a value it must recognise later without keeping
 * the value itself (idempotency fingerprints of request bodies, onboarding process tokens) is an
 * HMAC under this key, so someone who can read the table cannot test guesses against it (a card
 * number with a known BIN falls to an unkeyed hash in minutes). What it must give back whole (an
 * idempotent request's first response, which can hold an onboarding token or a webhook's HMAC
 * key) is sealed with AES-256-GCM under a key derived from it.
 *
 * Where it comes from, read once per container:
 * - deployed stages: the Secrets Manager secret `SVC_HASH_KEY_SECRET_ARN` (the CDK app creates it);
 * - the local runtime: `SVC_HASH_KEY` (it keeps one per data directory, see @svc/local);
 * - anything else outside Lambda (a test process): a random key for the process's lifetime.
 * A Lambda function without the secret fails instead of hashing with a guessable key.
 */
let serviceKey: Promise<Buffer> | undefined;

function loadServiceKey(): Promise<Buffer> {
  serviceKey ??= (async () => {
    const secretArn = process.env.SVC_HASH_KEY_SECRET_ARN;
    if (secretArn) {
      const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
      const out = await sdkClient(new SecretsManagerClient({})).send(
        new GetSecretValueCommand({ SecretId: secretArn }),
      );
      if (!out.SecretString) throw new Error('The hash key secret is empty');
      return Buffer.from(out.SecretString, 'utf8');
    }
    if (process.env.SVC_HASH_KEY) return Buffer.from(process.env.SVC_HASH_KEY, 'utf8');
    if (process.env.AWS_LAMBDA_FUNCTION_NAME) throw new Error('SVC_HASH_KEY_SECRET_ARN is not set');
    return randomBytes(32);
  })();
  serviceKey.catch(() => {
    serviceKey = undefined;
  });
  return serviceKey;
}

/**
 * HMAC-SHA256 (hex) of a value under the service key. `purpose` separates uses, so a hash made
 * for one (an onboarding token) never equals one made for another (a request body).
 */
export async function keyedHash(purpose: string, value: string | Uint8Array): Promise<string> {
  return createHmac('sha256', await loadServiceKey())
    .update(purpose)
    .update('\u0000')
    .update(value)
    .digest('hex');
}

/** Constant-time comparison of two keyed hashes (or any two hex strings). */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * A secret token derived from public parts under the service key (base64url, 32 bytes): the
 * service can give the same token again (an onboarding process's token on every read of the
 * process, a re-run request's approval link) without storing it anywhere.
 */
export async function derivedToken(purpose: string, ...parts: ReadonlyArray<string | number>): Promise<string> {
  return Buffer.from(await keyedHash(`token:${purpose}`, parts.join('\u0000')), 'hex').toString('base64url');
}

const SEAL_VERSION = 'v1';

async function sealingKey(): Promise<Buffer> {
  return Buffer.from(await keyedHash('sealing-key', 'aes-256-gcm'), 'hex');
}

/**
 * Seals text for storage (AES-256-GCM, random nonce). `context` is bound to the ciphertext (the
 * item's key, say), so a sealed value copied to another item does not open there.
 */
export async function sealText(plaintext: string, context: string): Promise<string> {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', await sealingKey(), nonce);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [SEAL_VERSION, nonce, cipher.getAuthTag(), sealed]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

/** Opens what sealText sealed with the same context; throws if it was altered or moved. */
export async function openText(sealed: string, context: string): Promise<string> {
  const [version, nonce, tag, body] = sealed.split('.');
  if (version !== SEAL_VERSION || !nonce || !tag || body === undefined) throw new Error('Not a sealed value');
  const decipher = createDecipheriv('aes-256-gcm', await sealingKey(), Buffer.from(nonce, 'base64url'));
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
