import { fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import {
  BatchGetItemCommand,
  type BatchGetItemCommandOutput,
  DynamoDBClient,
  type KeysAndAttributes,
} from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command, type ListObjectsV2CommandOutput } from '@aws-sdk/client-s3';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { definedFields } from '@svc/core';
import type { ObjectStore } from '@svc/local';
import { findPayment, type PaymentRecord, paymentItem, paymentKey, paymentStatusEvents } from '@svc/payments';
import { type ReportRecord, resetObjectClient, saveSourceConfiguration } from '@svc/reconciliation';
import {
  generateCsv,
  isRowFailure,
  type ProcessedFile,
  parseCsv,
  processUploadedObject,
  readObject,
  s3,
  syntheticAmountMinor,
  syntheticPaymentUuid,
  writeObject,
} from '@svc/reconciliation/testing';
import { createTableIfMissing, db, resetDbClient } from '@svc/table';

/**
 * Reconciliation file processing (`processUploadedObject`) over a 100,000-row settlement CSV,
 * beside baselines from the same run, against DynamoDB Local (in memory) and the local S3
 * stand-in (in memory).
 *
 * This process prepares: DynamoDB Local (its own Java process), the S3 stand-in (in this
 * process, no notification handler, so nothing but the measured call processes an upload), the
 * source configuration, 10,000 succeeded card payments written with BatchWriteItem as the
 * payments package builds their items (`paymentItem`), and the CSV uploaded with PutObject.
 * Row i references `syntheticPaymentUuid(i)` with `syntheticAmountMinor(i)` CHF; every tenth row
 * (i % 10 = 0) names a real payment of that amount (matched), the 90,000 others name a uuid that
 * does not exist (payment_not_found), so every batch of 100 lookups finds 10 items.
 *
 * Every measurement runs in a fresh Node process of its own (`--expose-gc`), as a Lambda container
 * would run the processor: its memory holds only the processing (not DynamoDB, the stand-in, the
 * payments written or the CSV generated here), and no phase starts on another's heap. Each first
 * warms up on a 2,000-row file (JIT, connection pools, the SDK's lazily loaded parts), then
 * collects garbage, notes its baseline memory and samples `process.memoryUsage()` every 20 ms:
 *  1. process: `processUploadedObject(key, etag)` on the uploaded file (rows/s, memory peak);
 *  2. parse: `readObject` + `parseCsv` over the same object, counting rows (rows/s, memory peak);
 *  3. lookup: raw BatchGetItem (low-level client, strongly consistent, like the table client) of
 *     the same 100,000 uuids in batches of 100, one in flight, as the matcher sends them.
 * The first round's lookup process then repeats the lookups with 4 batches in flight (what the
 * store could give a matcher that did not wait for each batch). Before the rounds, 400 raw
 * BatchGetItem calls warm DynamoDB Local's JIT (its first few hundred calls are up to twice as
 * slow). The three take turns, each round in another order; each round processes its own copy
 * of the file (its own key, so its own report). Every report is checked (rows, matched,
 * unmatched, errors, matched money, and every per-row result read back from the bucket); so are
 * the parser's row count and the items the lookups found; anything else fails the bench. Last,
 * a fresh process measures what holding all result lines for one PutObject costs: the lines of
 * a real report, held as strings, joined, and uploaded.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const ORGANISATION = '6f1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f60';
const ACCOUNT = '8b3f4e5c-6d7a-4b82-8c93-bd4e5f607182';
const CONFIGURATION = '3d6e9f10-2a4b-4c5d-8e6f-7a8b9c0d1e2f';
const SUPPORTER = '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d';
const TABLE = 'bench-reconciliation';
const BUCKET = 'svc-reconciliation-bench';
const BOOKING_DATE = '2025-03-31';
/** Payments are created on 20 March 2025, eleven days before the rows' booking date. */
const CREATED = Date.UTC(2025, 2, 20, 9, 0, 0) / 1000;
const BATCH = 100;
/** Once, in the first round: the raw lookups with this many batches in flight. */
const PARALLEL_BATCHES = 4;
const WARM_ROWS = 2_000;
const SAMPLE_MS = 20;
const TASK_ENV = 'BENCH_RECONCILIATION_TASK';
const MiB = 1024 * 1024;

type Phase = 'process' | 'parse' | 'lookup';

interface Task {
  phase: Phase | 'lines';
  rows: number;
  key: string;
  etag: string;
  warmKey: string;
  warmEtag: string;
  /** lookup: afterwards, the same lookups with this many batches in flight. */
  alsoInFlight?: number;
}

interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
}

interface MemoryReading {
  baseline: Memory;
  peak: Memory;
  /** VmHWM of /proc/self/status, reset before the phase: the kernel's own peak RSS. */
  kernelPeakRss?: number;
  samples: number;
  /** The longest time between two samples (synchronous work holds the sampler off). */
  maxGapMs: number;
}

interface PhaseResult {
  phase: Phase;
  rows: number;
  ms: number;
  rowsPerSecond: number;
  /** CPU time of the processing process (user + system) during the phase. */
  cpuMs: number;
  memory: MemoryReading;
  /** parse: rows the parser reported as errors; lookup: items found. */
  errors?: number;
  found?: number;
  inFlight?: { inFlight: number; seconds: number; rowsPerSecond: number; found: number };
  /** process: the report and what its SDK calls cost (wall time inside each call, summed). */
  processed?: ProcessedFile;
  calls?: Record<string, { calls: number; ms: number }>;
}

interface LinesResult {
  lines: number;
  bytes: number;
  /** Live heap (after a full GC) with nothing, with the lines held, with lines and joined body. */
  heap: { before: number; withLines: number; withJoined: number };
  upload: MemoryReading;
  uploadMs: number;
}

// Memory sampling, in the processing process.

function memoryNow(): Memory {
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external };
}

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the processing process needs --expose-gc');
  gc();
  gc();
}

function kernelPeakRss(): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return match?.[1] ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function startSampler(): { stop(): MemoryReading } {
  collectGarbage();
  try {
    writeFileSync('/proc/self/clear_refs', '5'); // resets VmHWM to the current RSS (Linux)
  } catch {
    // not Linux, or not allowed: the sampler's peak stands alone
  }
  const baseline = memoryNow();
  const peak = { ...baseline };
  let samples = 0;
  let last = performance.now();
  let maxGapMs = 0;
  const sample = () => {
    const m = memoryNow();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
    peak.external = Math.max(peak.external, m.external);
    const t = performance.now();
    maxGapMs = Math.max(maxGapMs, t - last);
    last = t;
    samples++;
  };
  const timer = setInterval(sample, SAMPLE_MS);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const kernel = kernelPeakRss();
      return { baseline, peak, ...definedFields({ kernelPeakRss: kernel }), samples, maxGapMs };
    },
  };
}

// The phases, in the processing process.

async function parseOnly(key: string): Promise<{ rows: number; errors: number }> {
  const object = await readObject(key);
  if (!object) throw new Error(`${key} is gone`);
  let rows = 0;
  let errors = 0;
  for await (const item of parseCsv(object.body)) {
    rows++;
    if (isRowFailure(item)) errors++;
  }
  return { rows, errors };
}

/**
 * BatchGetItem of `uuids` in batches of 100, `inFlight` at a time (1: the matcher's pace, one
 * batch after another); the number of items found.
 */
async function lookupOnly(client: DynamoDBClient, uuids: readonly string[], inFlight = 1): Promise<number> {
  const table = process.env.SVC_TABLE_NAME as string;
  let found = 0;
  let next = 0;
  const loop = async () => {
    while (next < uuids.length) {
      const start = next;
      next += BATCH;
      let keys: KeysAndAttributes['Keys'] = uuids.slice(start, start + BATCH).map((uuid) => {
        const k = paymentKey(uuid);
        return { pk: { S: k.pk }, sk: { S: k.sk } };
      });
      for (let round = 0; keys && keys.length > 0; round++) {
        if (round > 8) throw new Error('BatchGetItem left keys unprocessed after retries');
        if (round > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** round));
        const out: BatchGetItemCommandOutput = await client.send(
          new BatchGetItemCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } }),
        );
        found += out.Responses?.[table]?.length ?? 0;
        keys = out.UnprocessedKeys?.[table]?.Keys;
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, loop));
  return found;
}

/** Wall time inside each SDK call of the processor's own clients (table and bucket), by command. */
async function meterCalls(): Promise<Record<string, { calls: number; ms: number }>> {
  const calls: Record<string, { calls: number; ms: number }> = {};
  const meter =
    (service: string) =>
    (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
    async (args: unknown) => {
      const name = `${service}:${(context.commandName ?? '?').replace(/Command$/, '')}`;
      const started = performance.now();
      try {
        return await next(args);
      } finally {
        const entry = calls[name] ?? { calls: 0, ms: 0 };
        entry.calls++;
        entry.ms += performance.now() - started;
        calls[name] = entry;
      }
    };
  // biome-ignore lint/suspicious/noExplicitAny: one middleware for two clients' stacks
  db().middlewareStack.add(meter('dynamodb') as any, { step: 'initialize', name: 'benchReconciliationCalls' });
  // biome-ignore lint/suspicious/noExplicitAny: as above
  (await s3()).middlewareStack.add(meter('s3') as any, { step: 'initialize', name: 'benchReconciliationCalls' });
  return calls;
}

async function runPhase(task: Task & { phase: Phase }): Promise<PhaseResult> {
  const uuids = Array.from({ length: task.rows }, (_, i) => syntheticPaymentUuid(i));
  const client = new DynamoDBClient({});
  // Warm-up on the small file, then the measurement.
  if (task.phase === 'parse') await parseOnly(task.warmKey);
  if (task.phase === 'lookup') await lookupOnly(client, uuids.slice(0, WARM_ROWS));
  if (task.phase === 'process') await processUploadedObject(task.warmKey, task.warmEtag);
  const calls = task.phase === 'process' ? await meterCalls() : undefined;
  const sampler = startSampler();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const outcome: Partial<PhaseResult> = {};
  let rows = task.rows;
  if (task.phase === 'parse') {
    const parsed = await parseOnly(task.key);
    rows = parsed.rows;
    outcome.errors = parsed.errors;
  } else if (task.phase === 'lookup') {
    outcome.found = await lookupOnly(client, uuids);
  } else {
    const processed = await processUploadedObject(task.key, task.etag);
    if (!processed) throw new Error(`${task.key} was not processed`);
    outcome.processed = processed;
    rows = processed.report.summary.rows;
  }
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const memory = sampler.stop();
  if (task.phase === 'lookup' && task.alsoInFlight) {
    // The same lookups with several batches in flight: what the store could give a matcher that
    // did not wait for each batch before sending the next.
    const t = performance.now();
    const found = await lookupOnly(client, uuids, task.alsoInFlight);
    const seconds = (performance.now() - t) / 1000;
    outcome.inFlight = { inFlight: task.alsoInFlight, seconds, rowsPerSecond: uuids.length / seconds, found };
  }
  client.destroy();
  return {
    phase: task.phase,
    rows,
    ms,
    rowsPerSecond: rows / (ms / 1000),
    cpuMs: (used.user + used.system) / 1000,
    memory,
    ...outcome,
    ...(calls ? { calls } : {}),
  };
}

/**
 * A report's per-row results as stored: the one object at `results_key`, or, when it names a
 * folder (ending in `/`), every object under it (its parts) in key order, concatenated.
 */
async function resultBytes(resultsKey: string): Promise<Buffer> {
  const bucket = process.env.SVC_RECONCILIATION_BUCKET as string;
  const keys: string[] = [];
  if (resultsKey.endsWith('/')) {
    let token: string | undefined;
    do {
      const page: ListObjectsV2CommandOutput = await (await s3()).send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: resultsKey, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
      token = page.NextContinuationToken;
    } while (token);
    keys.sort();
  } else {
    keys.push(resultsKey);
  }
  const parts: Buffer[] = [];
  for (const key of keys) {
    const out = await (await s3()).send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    parts.push(Buffer.from((await out.Body?.transformToByteArray()) ?? []));
  }
  return Buffer.concat(parts);
}

/** Fresh strings as processing makes them (JSON.stringify of each result), not slices of one text. */
function linesOf(stored: Buffer): string[] {
  return stored
    .toString('utf8')
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.stringify(JSON.parse(line)));
}

/**
 * What holding every result line until one PutObject costs, with the lines of a real report.
 * The big temporaries live in the helpers' frames only: an async function's frame would keep
 * them reachable across its awaits and blur the figures.
 */
async function holdLines(task: Task): Promise<LinesResult> {
  // Kept as bytes (outside the V8 heap) so the heap figures below hold only the lines.
  const stored = await resultBytes(task.key);
  if (stored.length === 0) throw new Error(`${task.key} is empty`);
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const lines = linesOf(stored);
  collectGarbage();
  const withLines = process.memoryUsage().heapUsed;
  const body = `${lines.join('\n')}\n`; // the one body a single PutObject sends
  collectGarbage();
  const withJoined = process.memoryUsage().heapUsed;
  const sampler = startSampler();
  const started = performance.now();
  await writeObject(`${task.key.replace(/\/$/, '')}.all.jsonl`, body, 'application/x-ndjson');
  const uploadMs = performance.now() - started;
  const upload = sampler.stop();
  if (!Buffer.from(body).equals(stored)) throw new Error('the rebuilt results differ from the stored ones');
  return { lines: lines.length, bytes: stored.length, heap: { before, withLines, withJoined }, upload, uploadMs };
}

async function runTask(task: Task): Promise<PhaseResult | LinesResult> {
  return task.phase === 'lines' ? holdLines(task) : runPhase(task as Task & { phase: Phase });
}

/** Runs one task in a fresh Node process (this file, `--expose-gc`) and returns its answer. */
function inFreshProcess<T>(task: Task): Promise<T> {
  return new Promise((done, fail) => {
    const child = fork(import.meta.filename, [], {
      execArgv: ['--import', 'tsx', '--expose-gc'],
      env: { ...process.env, [TASK_ENV]: JSON.stringify(task) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let answer: { ok: true; value: T } | { ok: false; error: string } | undefined;
    const timeout = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('message', (message) => {
      answer = message as typeof answer;
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timeout);
      if (answer?.ok) done(answer.value);
      else {
        const reason = answer?.error ?? `the process exited (${code ?? signal})`;
        fail(new Error(`reconciliation bench, ${task.phase}: ${reason}`));
      }
    });
  });
}

// Preparation, in this process.

/** A succeeded card payment as `POST /payments` stores it, for row `index` of the generated CSV. */
function paymentOf(index: number): PaymentRecord {
  const created = CREATED + (index % 3600);
  const payment: PaymentRecord = {
    uuid: syntheticPaymentUuid(index),
    organisation_uuid: ORGANISATION,
    account_uuid: ACCOUNT,
    created,
    updated: created,
    status: 'succeeded',
    test_mode: false,
    amount_minor: syntheticAmountMinor(index),
    refunded_minor: 0,
    currency: 'CHF',
    payment_method: 'card',
    profile: 'card',
    provider: 'simulated',
    payment_information: {
      brand: 'visa',
      last4: '4242',
      expiry_month: 12,
      expiry_year: 2099,
      fingerprint: 'q3V0x8b2Yc1Zr9T4mWf7Ka',
    },
    supporter_uuid: SUPPORTER,
    refunds: [],
    custom_parameters: { campaign: 'spring-2025' },
    svc_parameters: {},
    version: 1,
    event_sequence: 1,
    events: [],
  };
  payment.events = paymentStatusEvents(payment);
  return payment;
}

/** BatchWriteItem, 25 items a call, 8 calls in flight; unprocessed items go again (bounded). */
async function writePayments(payments: PaymentRecord[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < payments.length) {
        const start = next;
        next += 25;
        let requests = payments.slice(start, start + 25).map((p) => ({ PutRequest: { Item: paymentItem(p) } }));
        for (let round = 0; requests.length > 0; round++) {
          if (round >= 10) throw new Error(`BatchWriteItem left ${requests.length} items unprocessed`);
          if (round > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** round));
          const out = await db().send(new BatchWriteCommand({ RequestItems: { [TABLE]: requests } }));
          requests = (out.UnprocessedItems?.[TABLE] ?? []) as typeof requests;
        }
      }
    }),
  );
}

async function csvOf(rows: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of generateCsv(rows, { bookingDate: BOOKING_DATE })) chunks.push(chunk);
  return Buffer.concat(chunks);
}

const uploadKey = (folder: string, name: string) => `uploads/${ORGANISATION}/${CONFIGURATION}/${folder}/${name}`;

async function upload(key: string, body: Buffer): Promise<{ key: string; etag: string }> {
  return { key, etag: (await writeObject(key, body, 'text/csv')).etag };
}

/**
 * The report of a processed copy is what the file holds: every row read, the paid ones matched
 * (with their amounts), the others payment_not_found, and every per-row result stored in order.
 */
async function verifyReport(processed: ProcessedFile | undefined, rows: number, paid: Set<number>): Promise<void> {
  if (!processed) throw new Error('no report');
  const { report, created } = processed;
  let paidMinor = 0n;
  for (const index of paid) paidMinor += BigInt(syntheticAmountMinor(index));
  const expected = {
    created: true,
    rows,
    matched: paid.size,
    unmatched: rows - paid.size,
    errors: 0,
    matched_amounts: [{ value: paidMinor.toString(), currency: 'CHF' }],
  };
  const got = { created, ...report.summary };
  if (JSON.stringify(got) !== JSON.stringify(expected)) {
    throw new Error(`report ${report.uuid}: ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
  }
  const lines = (await resultBytes(report.results_key)).toString('utf8').split('\n');
  if (lines.pop() !== '' || lines.length !== rows) throw new Error(`report ${report.uuid}: ${lines.length} results`);
  for (const [i, line] of lines.entries()) {
    const result = JSON.parse(line) as { row: number; outcome: string; reason?: string; payment_uuid?: string };
    const ok = paid.has(i)
      ? result.outcome === 'matched' && result.payment_uuid === syntheticPaymentUuid(i)
      : result.outcome === 'unmatched' && result.reason === 'payment_not_found';
    if (!ok || result.row !== i + 2) throw new Error(`report ${report.uuid}, result ${i}: ${line}`);
  }
}

export interface ReconciliationBenchOptions {
  /** Rows of the CSV (100,000). */
  rows: number;
  /** Every n-th row references a real payment (10: 10% matched). */
  paidEvery: number;
  /** Rounds of the three measurements. */
  runs: number;
}

export async function benchReconciliation(options: ReconciliationBenchOptions) {
  const { startDynamoDbLocal, startObjectStore } = await import('@svc/local');
  const saved = { ...process.env };
  const dynamo = await startDynamoDbLocal({});
  let store: ObjectStore | undefined;
  try {
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_REGION: 'eu-central-2',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      SVC_STAGE: 'local',
      SVC_TABLE_NAME: TABLE,
      SVC_RECONCILIATION_BUCKET: BUCKET,
      POWERTOOLS_LOG_LEVEL: 'WARN',
    });
    store = await startObjectStore({
      dataDir: ':memory:',
      buckets: [BUCKET],
      credentials: { local: 'local' },
      now: () => Math.floor(Date.now() / 1000),
    });
    process.env.AWS_ENDPOINT_URL_S3 = store.url;
    resetDbClient();
    resetObjectClient();
    const prepareStarted = performance.now();
    await createTableIfMissing(TABLE);
    await saveSourceConfiguration({
      uuid: CONFIGURATION,
      organisation_uuid: ORGANISATION,
      name: 'PSP settlement (CSV), bench',
      file_type: 'csv',
    });
    const paidIndexes = Array.from(
      { length: Math.ceil(options.rows / options.paidEvery) },
      (_, i) => i * options.paidEvery,
    );
    await writePayments(paidIndexes.map(paymentOf));
    const stored = await findPayment(syntheticPaymentUuid(0));
    if (stored?.amount_minor !== syntheticAmountMinor(0) || stored.status !== 'succeeded') {
      throw new Error(`payment 0 reads back as ${JSON.stringify(stored)}`);
    }
    const csv = await csvOf(options.rows);
    const warmCsv = await csvOf(WARM_ROWS);
    const copies = [];
    for (let run = 1; run <= options.runs; run++) {
      copies.push({
        file: await upload(uploadKey(`bench-${run}`, `settlement-${options.rows}.csv`), csv),
        warm: await upload(uploadKey(`warm-${run}`, `settlement-${WARM_ROWS}.csv`), warmCsv),
      });
    }
    const prepareSeconds = (performance.now() - prepareStarted) / 1000;
    // DynamoDB Local's JIT: its first few hundred BatchGetItem calls are up to twice as slow as
    // later ones; without this the first round's first measurement would pay for it.
    const warmClient = new DynamoDBClient({});
    const warmUuids = Array.from({ length: Math.min(options.rows, 40_000) }, (_, i) => syntheticPaymentUuid(i));
    await lookupOnly(warmClient, warmUuids);
    warmClient.destroy();
    const loadBefore = loadavg()[0] ?? 0;

    const phases: Phase[] = ['process', 'parse', 'lookup'];
    const measured: Record<Phase, PhaseResult[]> = { process: [], parse: [], lookup: [] };
    for (const [round, copy] of copies.entries()) {
      for (let p = 0; p < phases.length; p++) {
        const phase = phases[(p + round) % phases.length] as Phase;
        const result = await inFreshProcess<PhaseResult>({
          phase,
          rows: options.rows,
          key: copy.file.key,
          etag: copy.file.etag,
          warmKey: copy.warm.key,
          warmEtag: copy.warm.etag,
          ...(round === 0 ? { alsoInFlight: PARALLEL_BATCHES } : {}),
        });
        measured[phase].push(result);
      }
    }
    const paid = new Set(paidIndexes);
    for (const r of measured.process) await verifyReport(r.processed, options.rows, paid);
    for (const r of measured.parse) {
      if (r.rows !== options.rows || r.errors !== 0) throw new Error(`parse: ${r.rows} rows, ${r.errors} errors`);
    }
    for (const r of measured.lookup) {
      for (const found of [r.found, r.inFlight?.found ?? paid.size]) {
        if (found !== paid.size) throw new Error(`lookup: ${found} payments found, expected ${paid.size}`);
      }
    }
    const firstReport = measured.process[0]?.processed?.report as ReportRecord;
    const lines = await inFreshProcess<LinesResult>({
      phase: 'lines',
      rows: options.rows,
      key: firstReport.results_key,
      etag: '',
      warmKey: '',
      warmEtag: '',
    });
    const load = { before: loadBefore, after: loadavg()[0] ?? 0 };
    return summarise(options, csv.length, prepareSeconds, load, measured, lines);
  } finally {
    await store?.close();
    resetDbClient();
    resetObjectClient();
    await dynamo.stop();
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

// Figures.

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};
const range = (values: number[]) => ({ min: Math.min(...values), median: median(values), max: Math.max(...values) });
const mib = (bytes: number) => Math.round((bytes / MiB) * 10) / 10;

function memoryFigures(readings: MemoryReading[]) {
  return {
    rss_baseline_mib: range(readings.map((m) => mib(m.baseline.rss))),
    rss_peak_mib: range(readings.map((m) => mib(m.peak.rss))),
    rss_growth_mib: range(readings.map((m) => mib(m.peak.rss - m.baseline.rss))),
    kernel_rss_peak_mib: range(readings.map((m) => mib(m.kernelPeakRss ?? 0))),
    kernel_rss_growth_mib: range(readings.map((m) => mib((m.kernelPeakRss ?? m.baseline.rss) - m.baseline.rss))),
    heap_baseline_mib: range(readings.map((m) => mib(m.baseline.heapUsed))),
    heap_peak_mib: range(readings.map((m) => mib(m.peak.heapUsed))),
    heap_growth_mib: range(readings.map((m) => mib(m.peak.heapUsed - m.baseline.heapUsed))),
    external_growth_mib: range(readings.map((m) => mib(m.peak.external - m.baseline.external))),
    max_sample_gap_ms: Math.max(...readings.map((m) => Math.round(m.maxGapMs))),
  };
}

function summarise(
  options: ReconciliationBenchOptions,
  csvBytes: number,
  prepareSeconds: number,
  load: { before: number; after: number },
  measured: Record<Phase, PhaseResult[]>,
  lines: LinesResult,
) {
  const rate = (phase: Phase) => range(measured[phase].map((r) => r.rowsPerSecond));
  const seconds = (phase: Phase) => range(measured[phase].map((r) => r.ms / 1000));
  const cpuShare = (phase: Phase) => range(measured[phase].map((r) => r.cpuMs / r.ms));
  // Ratios per round (the three measurements of a round ran back to back).
  const perRound = (phase: Phase) =>
    measured.process.map((r, i) => r.rowsPerSecond / (measured[phase][i]?.rowsPerSecond ?? 1));
  const callsOf = (name: string) => range(measured.process.map((r) => (r.calls?.[name]?.ms ?? 0) / r.ms));
  const callCounts = measured.process[0]?.calls ?? {};
  return {
    rows: options.rows,
    csv_bytes: csvBytes,
    payments: Math.ceil(options.rows / options.paidEvery),
    mix: `row i references a payment when i % ${options.paidEvery} = 0 (matched), else a uuid that does not exist (payment_not_found)`,
    runs: options.runs,
    prepare_seconds: prepareSeconds,
    /** One-minute load average of the machine before and after the measurements (2 cores). */
    load_average: load,
    process: {
      rows_per_s: rate('process'),
      seconds: seconds('process'),
      cpu_share: cpuShare('process'),
      memory: memoryFigures(measured.process.map((r) => r.memory)),
      share_of_time_in: {
        batch_get: callsOf('dynamodb:BatchGetItem'),
        s3_put_results: callsOf('s3:PutObject'),
        s3_get_file: callsOf('s3:GetObject'),
        /** Everything else: reading and parsing the CSV, matching, the result lines, the report. */
        other: range(
          measured.process.map(
            (r) =>
              1 -
              ['dynamodb:BatchGetItem', 's3:PutObject', 's3:GetObject'].reduce(
                (t, c) => t + (r.calls?.[c]?.ms ?? 0),
                0,
              ) /
                r.ms,
          ),
        ),
      },
      calls: Object.fromEntries(Object.entries(callCounts).map(([name, c]) => [name, c.calls])),
      report: measured.process[0]?.processed?.report.summary,
      results_bytes: lines.bytes,
      runs_rows_per_s: measured.process.map((r) => r.rowsPerSecond),
    },
    parse_only: {
      rows_per_s: rate('parse'),
      seconds: seconds('parse'),
      cpu_share: cpuShare('parse'),
      memory: memoryFigures(measured.parse.map((r) => r.memory)),
      runs_rows_per_s: measured.parse.map((r) => r.rowsPerSecond),
    },
    lookup_only: {
      rows_per_s: rate('lookup'),
      seconds: seconds('lookup'),
      cpu_share: cpuShare('lookup'),
      memory: memoryFigures(measured.lookup.map((r) => r.memory)),
      batches: Math.ceil(options.rows / BATCH),
      in_flight: 1,
      /** Once (first round): the same lookups with several batches in flight. */
      parallel: measured.lookup[0]?.inFlight && {
        ...measured.lookup[0].inFlight,
        over_one_at_a_time: measured.lookup[0].inFlight.rowsPerSecond / measured.lookup[0].rowsPerSecond,
      },
      runs_rows_per_s: measured.lookup.map((r) => r.rowsPerSecond),
    },
    /** Per round (the three measurements of a round ran back to back), and of the medians. */
    process_over_parse: range(perRound('parse')),
    process_over_lookup: range(perRound('lookup')),
    process_over_parse_medians: rate('process').median / rate('parse').median,
    process_over_lookup_medians: rate('process').median / rate('lookup').median,
    held_result_lines: {
      lines: lines.lines,
      bytes: lines.bytes,
      lines_heap_mib: mib(lines.heap.withLines - lines.heap.before),
      heap_bytes_per_line: Math.round((lines.heap.withLines - lines.heap.before) / lines.lines),
      joined_body_heap_mib: mib(lines.heap.withJoined - lines.heap.withLines),
      upload_rss_growth_mib: mib(lines.upload.peak.rss - lines.upload.baseline.rss),
      upload_external_growth_mib: mib(lines.upload.peak.external - lines.upload.baseline.external),
      upload_heap_growth_mib: mib(lines.upload.peak.heapUsed - lines.upload.baseline.heapUsed),
      upload_ms: lines.uploadMs,
    },
  };
}

export type ReconciliationBench = Awaited<ReturnType<typeof benchReconciliation>>;

/** The compact summary `pnpm bench` prints. */
export function reconciliationSummary(b: ReconciliationBench): string[] {
  const n = (value: number) => value.toFixed(0);
  const span = (r: { min: number; max: number }, f = n) =>
    f(r.min) === f(r.max) ? f(r.min) : `${f(r.min)}–${f(r.max)}`;
  const pct = (r: { min: number; max: number }) => span({ min: r.min * 100, max: r.max * 100 });
  const x = (value: number) => value.toFixed(2);
  const mem = (label: string, m: ReturnType<typeof memoryFigures>) =>
    `${label.padEnd(24)} RSS +${span(m.rss_growth_mib)} MiB (peak ${span(m.rss_peak_mib)}; kernel's peak +${span(m.kernel_rss_growth_mib)}, ${span(m.kernel_rss_peak_mib)}), heap +${span(m.heap_growth_mib)} MiB (peak ${span(m.heap_peak_mib)}), buffers +${span(m.external_growth_mib)} MiB`;
  const rows = (
    label: string,
    p: {
      rows_per_s: { min: number; max: number };
      seconds: { min: number; max: number };
      cpu_share: { min: number; max: number };
    },
  ) =>
    `${label.padEnd(24)} ${span(p.rows_per_s).padStart(13)} rows/s  (${span(p.seconds, (v) => v.toFixed(1))} s, CPU ${pct(p.cpu_share)}% of wall time)`;
  const h = b.held_result_lines;
  const s = b.process.share_of_time_in;
  const parallel = b.lookup_only.parallel;
  return [
    `\nReconciliation, ${b.rows} CSV rows (${mib(b.csv_bytes)} MiB), ${b.payments} real payments referenced; ${b.runs} rounds, each measurement in a fresh process (ranges across rounds; load average ${b.load_average.before.toFixed(1)} before, ${b.load_average.after.toFixed(1)} after):`,
    rows('processUploadedObject', b.process),
    rows('parse only', b.parse_only),
    rows('lookups only (raw)', b.lookup_only),
    ...(parallel
      ? [
          `${`lookups, ${parallel.inFlight} in flight`.padEnd(24)} ${n(parallel.rowsPerSecond).padStart(13)} rows/s  (${parallel.seconds.toFixed(1)} s, first round only: ${x(parallel.over_one_at_a_time)}x one at a time)`,
        ]
      : []),
    `process / parse only = ${x(b.process_over_parse_medians)} (rounds ${span(b.process_over_parse, x)})   process / lookups only = ${x(b.process_over_lookup_medians)} (rounds ${span(b.process_over_lookup, x)}), of the medians`,
    `time in processing: BatchGetItem ${pct(s.batch_get)}%, PutObject of results ${pct(s.s3_put_results)}%, GetObject ${pct(s.s3_get_file)}%, the rest (parse, match, result lines) ${pct(s.other)}%; calls ${JSON.stringify(b.process.calls)}`,
    `Memory (sampled every 20 ms, longest gap ${b.process.memory.max_sample_gap_ms} ms; growth over the baseline after GC):`,
    mem('processUploadedObject', b.process.memory),
    mem('parse only', b.parse_only.memory),
    mem('lookups only (raw)', b.lookup_only.memory),
    `all result lines held for one PutObject, measured on their own: ${h.lines} lines, ${mib(h.bytes)} MiB of JSON: lines ${h.lines_heap_mib} MiB of heap (${h.heap_bytes_per_line} B a line), joined body ${h.joined_body_heap_mib} MiB more; upload RSS +${h.upload_rss_growth_mib} MiB, heap +${h.upload_heap_growth_mib} MiB, buffers +${h.upload_external_growth_mib} MiB`,
    `verified: ${JSON.stringify(b.process.report)} in every round, every per-row result as expected`,
  ];
}

// The processing process: a task from the environment, its answer over IPC.

const taskJson = process.env[TASK_ENV];
if (taskJson && process.send) {
  try {
    const value = await runTask(JSON.parse(taskJson) as Task);
    process.send({ ok: true, value }, () => process.exit(0));
  } catch (error) {
    process.send({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }, () =>
      process.exit(1),
    );
  }
}
