import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { sdkClient } from '@svc/core';
import { db, defineEntity, getItem, tableName } from '@svc/table';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import * as z from 'zod';

/**
 * ES256 signing keys with key ids, so keys can rotate: the first key of the set signs, all of
 * them verify.
 *
 * Private keys come from Secrets Manager (deployed: SVC_SIGNING_KEY_SECRET_ARN, filled by the
 * stack's bootstrap resource) or a file generated once under SVC_DATA_DIR (local; in memory
 * when SVC_DATA_DIR is `:memory:`). Only the identity function can read them.
 *
 * Public keys are published to the table (pk = SIGNING_KEYS, sk = PUBLIC) whenever the signer
 * loads its keys; every other function verifies from there, so none of them needs the secret.
 */
export const ALGORITHM = 'ES256';

const keyEntrySchema = z.object({
  kid: z.string(),
  privateJwk: z.record(z.string(), z.unknown()),
  publicJwk: z.record(z.string(), z.unknown()),
});
export const keySetSchema = z.object({ keys: z.array(keyEntrySchema).min(1) });
export type KeySet = z.infer<typeof keySetSchema>;

const publishedKeysSchema = z.object({ kids: z.string(), keys: z.array(z.record(z.string(), z.unknown())) });

/** The public halves of the token signing keys: one item, read by every authenticator. */
export const SIGNING_KEYS = defineEntity<z.infer<typeof publishedKeysSchema>, null>({
  name: 'signing_keys',
  summary: 'The public halves of the access-token signing keys (one item; written by identity only).',
  prefix: 'SIGNING_KEYS',
  single: true,
  idShown: '',
  sort: 'PUBLIC',
  id: () => null,
  idParts: () => [],
  byKey: 'the published public keys',
  parse: (item) => publishedKeysSchema.parse(item),
});

const PUBLIC_KEYS = SIGNING_KEYS.key(null);

export async function generateKeySet(previous?: KeySet): Promise<KeySet> {
  const { privateKey, publicKey } = await generateKeyPair(ALGORITHM, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = await exportJWK(privateKey);
  const entry = {
    kid,
    privateJwk: { ...privateJwk, kid, alg: ALGORITHM },
    publicJwk: { ...publicJwk, kid, alg: ALGORITHM },
  };
  // Keep the previous key (verify only) so tokens it signed stay valid until they expire.
  return { keys: [entry, ...(previous?.keys.slice(0, 1) ?? [])] };
}

async function readKeySet(): Promise<KeySet> {
  const secretArn = process.env.SVC_SIGNING_KEY_SECRET_ARN;
  if (secretArn) {
    // Loaded on first use: only the token route signs, and it should not slow every cold start.
    const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
    const out = await sdkClient(new SecretsManagerClient({})).send(new GetSecretValueCommand({ SecretId: secretArn }));
    return keySetSchema.parse(JSON.parse(out.SecretString ?? '{}'));
  }
  const dataDir = process.env.SVC_DATA_DIR ?? '.data';
  if (dataDir === ':memory:') return generateKeySet();
  const file = join(dataDir, 'signing-keys.json');
  try {
    return keySetSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const created = await generateKeySet();
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, JSON.stringify(created), { mode: 0o600, flag: 'wx' });
  return created;
}

type VerifyKey = Awaited<ReturnType<typeof importJWK>>;

interface Signer {
  kid: string;
  key: VerifyKey;
}

let signer: Promise<Signer> | undefined;

/** The active signing key; its public half is published to the table before first use. */
export function activeSigner(): Promise<Signer> {
  signer ??= (async () => {
    const keySet = await readKeySet();
    await publishPublicKeys(keySet);
    for (const entry of keySet.keys) {
      const key = await importJWK(entry.publicJwk as JWK, ALGORITHM);
      ownKeys.set(entry.kid, key);
      verifyKeys.set(entry.kid, key);
    }
    const [active] = keySet.keys;
    if (!active) throw new Error('Empty signing key set');
    const key = await importJWK(active.privateJwk as JWK, ALGORITHM);
    return { kid: active.kid, key };
  })();
  signer.catch(() => {
    signer = undefined;
  });
  return signer;
}

async function publishPublicKeys(keySet: KeySet): Promise<void> {
  const current = await getItem(PUBLIC_KEYS);
  const wanted = keySet.keys.map((k) => k.kid).join(',');
  if (current?.kids === wanted) return;
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: SIGNING_KEYS.item({ kids: wanted, keys: keySet.keys.map((k) => k.publicJwk) }),
    }),
  );
}

/** Verification keys by kid: the published set, plus this process's own signer's keys. */
let verifyKeys = new Map<string, VerifyKey>();
const ownKeys = new Map<string, VerifyKey>();
let refreshing: Promise<void> | undefined;
let lastRefreshAt = 0;
const REFRESH_SPACING_MS = 1000;

/**
 * Re-reads the published public keys, replacing the set (retired keys drop out). Concurrent
 * callers share one read.
 */
function refreshPublicKeys(): Promise<void> {
  refreshing ??= (async () => {
    lastRefreshAt = Date.now();
    const item = await getItem(PUBLIC_KEYS);
    const keys = z.array(z.record(z.string(), z.unknown())).safeParse(item?.keys);
    const next = new Map(ownKeys);
    for (const jwk of keys.success ? keys.data : []) {
      if (typeof jwk.kid === 'string' && !next.has(jwk.kid)) next.set(jwk.kid, await importJWK(jwk as JWK, ALGORITHM));
    }
    verifyKeys = next;
  })().finally(() => {
    refreshing = undefined;
  });
  return refreshing;
}

/**
 * The public key for a key id; undefined if the published set does not hold it. An unknown kid
 * re-reads the set at most once a second (wall time, an operational throttle); in between it is
 * refused at once, so a flood of made-up kids neither hammers the table nor waits. A key newly
 * published by another container is found by the next read.
 */
export async function publicKeyFor(kid: string): Promise<VerifyKey | undefined> {
  const known = verifyKeys.get(kid);
  if (known) return known;
  if (!refreshing && Date.now() - lastRefreshAt < REFRESH_SPACING_MS) return undefined;
  await refreshPublicKeys();
  return verifyKeys.get(kid);
}

/** For tests and the local runtime when the table or data directory changes. */
export function forgetSigningKeys(): void {
  signer = undefined;
  verifyKeys = new Map();
  ownKeys.clear();
  lastRefreshAt = 0;
}
