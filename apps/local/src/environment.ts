import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hexKeys } from '@svc/core';

/**
 * Configuration of the local runtime. The handlers read the same variables in AWS; here they
 * point the SDK at DynamoDB Local through the standard AWS_ENDPOINT_URL_* variables.
 */
export interface LocalSettings {
  port: number;
  dataDir: string;
  inMemory: boolean;
  seedFile: string | undefined;
  tableName: string;
  /**
   * `timers` (the default): background work runs on its timers, as AWS runs it unasked.
   * `settle`: it runs only when `POST /_local/settle` (or the billing-run endpoint) asks, so a
   * script can make a backlog first and then time the pipeline draining it.
   */
  background: 'timers' | 'settle';
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): LocalSettings {
  const dataDir = env.SVC_DATA_DIR ?? '.data';
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT must be a port number, got ${env.PORT}`);
  const background = env.SVC_BACKGROUND ?? 'timers';
  if (background !== 'timers' && background !== 'settle')
    throw new Error(`SVC_BACKGROUND must be timers or settle, got ${env.SVC_BACKGROUND}`);
  // A provider key in the wrong form stops the start, rather than being used as what a parser
  // makes of it (an HMAC key that is not hex becomes an empty key anyone can sign with).
  hexKeys(env.SVC_ADYEN_HMAC_KEY, 'SVC_ADYEN_HMAC_KEY');
  return {
    background,
    port,
    dataDir,
    inMemory: dataDir === ':memory:',
    seedFile: env.SVC_SEED_FILE || undefined,
    tableName: env.SVC_TABLE_NAME ?? 'svc-local',
  };
}

/** Points the AWS SDK at the local stand-ins. Dummy credentials: nothing here talks to AWS. */
export function useLocalAws(settings: LocalSettings, dynamoEndpoint: string): void {
  process.env.AWS_REGION ??= 'eu-central-2';
  process.env.AWS_ACCESS_KEY_ID = 'local';
  process.env.AWS_SECRET_ACCESS_KEY = 'local';
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamoEndpoint;
  process.env.SVC_TABLE_NAME = settings.tableName;
  process.env.SVC_DATA_DIR = settings.dataDir;
  process.env.SVC_STAGE = 'local';
  // Local receivers live on loopback and private networks; deployed stages never allow them.
  process.env.SVC_WEBHOOK_ALLOW_PRIVATE ??= 'true';
  // The e-mail existence check's captcha: the test verifier (accepts `test-captcha-ok`).
  process.env.SVC_CAPTCHA_VERIFIER ??= 'test';
  // The service's hashing key (@svc/core service-key): one per data directory, so what was hashed
  // before a restart (idempotency records, onboarding tokens) is still recognised after it.
  process.env.SVC_HASH_KEY ??= settings.inMemory ? randomBytes(32).toString('hex') : localHashKey(settings.dataDir);
}

/** The data directory's hashing key, made on first use and readable only by its owner. */
export function localHashKey(dataDir: string): string {
  const file = join(dataDir, 'hash-key');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    const created = randomBytes(32).toString('hex');
    writeFileSync(file, created, { mode: 0o600, flag: 'wx' });
    return created;
  }
}

export interface RuntimeFile {
  dynamoEndpoint: string;
  tableName: string;
  pid: number;
  /** The variables that point a handler at the running service's stand-ins (`pnpm invoke` uses them). */
  environment?: Record<string, string>;
}

const runtimeFile = (dataDir: string) => join(dataDir, 'runtime.json');

export function writeRuntimeFile(dataDir: string, info: RuntimeFile): void {
  // Readable by its owner only, like the data beside it.
  writeFileSync(runtimeFile(dataDir), JSON.stringify(info), { mode: 0o600 });
}

export function removeRuntimeFile(dataDir: string): void {
  rmSync(runtimeFile(dataDir), { force: true });
}

/** The running local service's DynamoDB endpoint, if one is up on this data directory. */
export function readRuntimeFile(dataDir: string): RuntimeFile | undefined {
  try {
    const info = JSON.parse(readFileSync(runtimeFile(dataDir), 'utf8')) as RuntimeFile;
    process.kill(info.pid, 0);
    return info;
  } catch {
    return undefined;
  }
}
