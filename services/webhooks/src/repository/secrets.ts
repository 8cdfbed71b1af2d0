import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sdkClient } from '@svc/core';

/**
 * Webhook passwords and HMAC keys are stored sealed. Deployed stages seal them with a KMS key
 * (SVC_WEBHOOK_KMS_KEY_ID, encryption context `purpose=webhook-secret` plus the endpoint and
 * field, so a sealed value copied to another endpoint or field does not open); the local runtime with
 * an AES-256-GCM key generated once under the data directory (mode 0600), or kept in memory for
 * `SVC_DATA_DIR=:memory:`. The choice is configuration, read once; the code paths are the same.
 *
 * Sealed values name their scheme (`kms:` / `local:`), so a value sealed by one cannot be mistaken
 * for the other. Opened values are cached per container (bounded), which keeps a delivery from
 * calling KMS once per attempt.
 */
/** What a sealed value belongs to: it opens only for the same endpoint and field. */
export interface SecretContext {
  endpoint: string;
  field: 'password' | 'hmac_key';
}
const contextOf = (context: SecretContext) => ({
  purpose: 'webhook-secret',
  endpoint: context.endpoint,
  field: context.field,
});
const aadOf = (context: SecretContext) => Buffer.from(`webhook-secret/${context.endpoint}/${context.field}`);
const CACHE_LIMIT = 10_000;
const opened = new Map<string, string>();

let localKey: Buffer | undefined;

function loadLocalKey(): Buffer {
  if (localKey) return localKey;
  const dataDir = process.env.SVC_DATA_DIR ?? '.data';
  if (dataDir === ':memory:') {
    localKey = randomBytes(32);
    return localKey;
  }
  const file = join(dataDir, 'webhook-secrets.key');
  try {
    localKey = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    return localKey;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const created = randomBytes(32);
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(file, created.toString('base64'), { mode: 0o600, flag: 'wx' });
    localKey = created;
  } catch {
    // Another process created it first: use theirs.
    localKey = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  }
  return localKey;
}

async function kms() {
  const { KMSClient, EncryptCommand, DecryptCommand } = await import('@aws-sdk/client-kms');
  return { client: sdkClient(new KMSClient({})), EncryptCommand, DecryptCommand };
}

export async function seal(plain: string, context: SecretContext): Promise<string> {
  const keyId = process.env.SVC_WEBHOOK_KMS_KEY_ID;
  if (keyId) {
    const { client, EncryptCommand } = await kms();
    const out = await client.send(
      new EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from(plain), EncryptionContext: contextOf(context) }),
    );
    return `kms:${Buffer.from(out.CiphertextBlob ?? new Uint8Array()).toString('base64')}`;
  }
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', loadLocalKey(), iv);
  cipher.setAAD(aadOf(context));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `local:${[iv, cipher.getAuthTag(), body].map((part) => part.toString('base64')).join('.')}`;
}

export async function open(sealed: string, context: SecretContext): Promise<string> {
  const cacheKey = `${context.endpoint}/${context.field}/${sealed}`;
  const cached = opened.get(cacheKey);
  if (cached !== undefined) return cached;
  let plain: string;
  if (sealed.startsWith('kms:')) {
    const { client, DecryptCommand } = await kms();
    const out = await client.send(
      new DecryptCommand({
        CiphertextBlob: Buffer.from(sealed.slice(4), 'base64'),
        EncryptionContext: contextOf(context),
      }),
    );
    plain = Buffer.from(out.Plaintext ?? new Uint8Array()).toString('utf8');
  } else if (sealed.startsWith('local:')) {
    const [iv, tag, body] = sealed
      .slice(6)
      .split('.')
      .map((part) => Buffer.from(part, 'base64'));
    if (!iv || !tag || !body) throw new Error('A sealed webhook secret is malformed');
    const decipher = createDecipheriv('aes-256-gcm', loadLocalKey(), iv);
    decipher.setAAD(aadOf(context));
    decipher.setAuthTag(tag);
    plain = Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } else {
    throw new Error('A sealed webhook secret has an unknown scheme');
  }
  if (opened.size >= CACHE_LIMIT) opened.delete(opened.keys().next().value as string);
  opened.set(cacheKey, plain);
  return plain;
}
