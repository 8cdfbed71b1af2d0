import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type BenchService, startService, tokenFor } from './service';

/**
 * The crash test of idempotency: the service (its process group, DynamoDB Local with it) is
 * killed with SIGKILL while card payments are in flight, started again on the same data
 * directory, its clock moved past the idempotency lease, and every payment retried with its
 * Idempotency-Key and body. Counted from the table afterwards: payments per key. Each payment is
 * one charge under its own idempotency reference (its uuid), so a second payment for a key is a
 * second charge; none may be missing either. All traffic goes to 127.0.0.1; every loop is bounded.
 */
export interface CrashOptions {
  payments: number;
  concurrency: number;
  /** Kill the service once this many payments have been answered. */
  killAfter: number;
}

export interface CrashResult {
  payments: number;
  answeredBeforeKill: number;
  inFlightAtKill: number;
  retriedOk: number;
  retryStatuses: Record<string, number>;
  /** A key whose retry named another payment than its first answer did. */
  changedAnswers: number;
  /** Claims the killed service left in flight (their runs died): the retries had to resume these. */
  claimsLeftInFlight: number;
  /** Of those, the ones whose payment was already stored (the run died after its write). */
  storedButUnanswered: number;
  duplicates: number;
  missing: number;
  retrySeconds: number;
}

const CLIENT = { id: 'demo-client', secret: 'demo-secret-change-me' };
const ACCOUNT = '9c405f6d-7e8b-4c93-9da4-ce5f60718293';
/** Past the idempotency claim's 60 s lease. */
const PAST_LEASE_SECONDS = 120;
const TABLE = 'svc-crash';

function body(key: string): string {
  return JSON.stringify({
    account_uuid: ACCOUNT,
    payment_method: 'card',
    profile: 'card',
    amount: { value: '1000', currency: 'CHF' },
    payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
    custom_parameters: { bench_key: key },
  });
}

async function pay(url: string, token: string, key: string): Promise<{ status: number; uuid?: string }> {
  const response = await fetch(`${url}/payments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: body(key),
  });
  const answer = (await response.json().catch(() => ({}))) as { uuid?: string };
  return { status: response.status, ...(answer.uuid ? { uuid: answer.uuid } : {}) };
}

async function scanAll(dynamo: string): Promise<Record<string, unknown>[]> {
  const client = new DynamoDBClient({
    endpoint: dynamo,
    region: 'eu-central-2',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const items: Record<string, unknown>[] = [];
  let start: Record<string, never> | undefined;
  try {
    do {
      const page = await client.send(new ScanCommand({ TableName: TABLE, ExclusiveStartKey: start }));
      items.push(...(page.Items ?? []).map((item) => unmarshall(item)));
      start = page.LastEvaluatedKey as Record<string, never> | undefined;
    } while (start);
  } finally {
    client.destroy();
  }
  return items;
}

async function clock(url: string, now: number): Promise<void> {
  const response = await fetch(`${url}/_local/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ now }),
  });
  if (response.status !== 200) throw new Error(`clock: ${response.status}`);
}

function killHard(service: BenchService): void {
  try {
    process.kill(-(service.child.pid as number), 'SIGKILL');
  } catch {}
}

export async function benchIdempotencyCrash(options: CrashOptions): Promise<CrashResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-crash-'));
  const env = { SVC_DATA_DIR: dataDir, SVC_TABLE_NAME: TABLE, SVC_BACKGROUND: 'settle' };
  const keys = Array.from({ length: options.payments }, () => randomUUID());
  const first = new Map<string, string>();
  let answered = 0;
  let started = 0;
  let killed = false;
  let service = await startService(env);
  try {
    const token = await tokenFor(service.url, CLIENT.id, CLIENT.secret);
    const firstService = service;
    // Loops that send until the kill; a request cut off by it simply never gets its answer.
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (!killed && started < keys.length) {
          const key = keys[started++] as string;
          const answer = await pay(firstService.url, token, key).catch(() => undefined);
          if (killed || !answer) return;
          if (answer.uuid && answer.status === 201) first.set(key, answer.uuid);
          answered += 1;
          if (answered >= options.killAfter && !killed) {
            killed = true;
            killHard(firstService);
          }
        }
      }),
    );
    const inFlightAtKill = started - answered;
    await firstService.exited;

    service = await startService(env);
    // What the kill left: claims still in flight, and payments stored for them.
    const left = await scanAll(service.dynamo);
    const inFlightClaims = left.filter((item) => item.entity === 'idempotency_record' && item.status === 'in_progress');
    const storedKeys = new Set(
      left
        .filter((item) => item.entity === 'payment')
        .map(
          (item) =>
            (JSON.parse(String(item.document)) as { custom_parameters?: { bench_key?: string } }).custom_parameters
              ?.bench_key,
        ),
    );
    const unansweredKeys = keys.filter((key) => storedKeys.has(key) && !first.has(key));
    await clock(service.url, Math.floor(Date.now() / 1000) + PAST_LEASE_SECONDS);
    const retryToken = await tokenFor(service.url, CLIENT.id, CLIENT.secret);
    const statuses: Record<string, number> = {};
    let changedAnswers = 0;
    let retriedOk = 0;
    let next = 0;
    const retryStart = performance.now();
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (next < keys.length) {
          const key = keys[next++] as string;
          const answer = await pay(service.url, retryToken, key);
          statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
          if (answer.status === 201) retriedOk += 1;
          const before = first.get(key);
          if (before && answer.uuid !== before) changedAnswers += 1;
        }
      }),
    );
    const retrySeconds = (performance.now() - retryStart) / 1000;

    const items = await scanAll(service.dynamo);
    const perKey = new Map<string, string[]>();
    for (const item of items) {
      if (item.entity !== 'payment') continue;
      const document = JSON.parse(String(item.document)) as {
        uuid: string;
        custom_parameters?: { bench_key?: string };
      };
      const key = document.custom_parameters?.bench_key;
      if (!key) continue;
      perKey.set(key, [...(perKey.get(key) ?? []), document.uuid]);
    }
    let duplicates = 0;
    let missing = 0;
    for (const key of keys) {
      const found = perKey.get(key) ?? [];
      if (found.length === 0) missing += 1;
      duplicates += Math.max(0, found.length - 1);
    }
    return {
      payments: options.payments,
      answeredBeforeKill: answered,
      inFlightAtKill,
      retriedOk,
      retryStatuses: statuses,
      changedAnswers,
      claimsLeftInFlight: inFlightClaims.length,
      storedButUnanswered: unansweredKeys.length,
      duplicates,
      missing,
      retrySeconds,
    };
  } finally {
    service.stop();
    await service.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function crashSummary(result: CrashResult): string[] {
  return [
    `\nIdempotency crash test: ${result.payments} card payments, the service killed (SIGKILL) after ${result.answeredBeforeKill} answers with ${result.inFlightAtKill} in flight, all retried past the lease:`,
    `left by the kill: ${result.claimsLeftInFlight} claims in flight, ${result.storedButUnanswered} payments stored but never answered`,
    `retries answered 201: ${result.retriedOk} of ${result.payments} (statuses ${JSON.stringify(result.retryStatuses)}) in ${result.retrySeconds.toFixed(1)} s`,
    `duplicates = ${result.duplicates}   missing = ${result.missing}   changed answers = ${result.changedAnswers}`,
  ];
}
