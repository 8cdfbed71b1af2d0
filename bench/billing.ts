import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, DeleteCommand, ScanCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { freezeClock, resumeRealTime } from '@svc/core';
import { createGateway, type Gateway, startDynamoDbLocal } from '@svc/local';
import { findPaymentSource, type PaymentSourceRecord, paymentItem } from '@svc/payments';
import { addDays, localDateOf } from '@svc/schedule';
import { applySeed, DEMO_SEED, parseSeed } from '@svc/seed';
import { findSubscription, processBillingBatch } from '@svc/subscriptions';
import {
  type DueEntry,
  dueBefore,
  invoiceItem,
  newInvoice,
  openAttempt,
  runBilling,
  type SubscriptionRecord,
  subscriptionItem,
  subscriptionKey,
} from '@svc/subscriptions/testing';
import { createTableIfMissing, db, resetDbClient } from '@svc/table';
import type { SQSEvent } from 'aws-lambda';
import { runLoad } from './load';

/**
 * The billing figures, each beside a baseline from the same run, on a DynamoDB Local of its own
 * (in memory) with the service code in this process and the service clock frozen:
 *  1. a billing run (`runBilling`, the due index) over 1,000 and over 10,000 active subscriptions
 *     of which the same 100 are due: read capacity and time, beside a full Scan of each table;
 *  2. the worker (`processBillingBatch`, batches of 10, several at once) charging 1,000 due
 *     subscriptions: charges per second and capacity per charge, beside raw 3-item
 *     TransactWriteItems at the same number of writes in flight. Every invoice is counted after.
 */
const AT = Date.UTC(2030, 0, 15, 9, 0, 0) / 1000; // Tuesday 15 January 2030, 09:00 UTC
const ORGANISATION = '6f1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f60';
const ACCOUNT = '8b3f4e5c-6d7a-4b82-8c93-bd4e5f607182';
const DUE = 100;
const SMALL = 1_000;
const LARGE = 10_000;
const WORKER_DUE = 1_000;
const SOURCES = 4;
const BATCH = 10;
const TABLES = {
  small: 'bench-billing-1k',
  large: 'bench-billing-10k',
  worker: 'bench-billing-worker',
  raw: 'bench-billing-raw',
};

// Capacity: every data-plane call of the table client asks for ConsumedCapacity (INDEXES) and the
// answer is added up here, split into table and index units and by command.

interface Capacity {
  CapacityUnits?: number;
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
}

const DATA_PLANE = /^(Get|BatchGet|Query|Scan|Put|Update|Delete|BatchWrite|TransactWrite|TransactGet)/;
const READS = /^(Get|BatchGet|Query|Scan|TransactGet)/;

const meter = { read: 0, write: 0, indexWrite: 0, byCommand: new Map<string, { calls: number; units: number }>() };

function resetMeter(): void {
  meter.read = 0;
  meter.write = 0;
  meter.indexWrite = 0;
  meter.byCommand.clear();
}

function meterReading() {
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return {
    read: round(meter.read),
    write: round(meter.write),
    indexWrite: round(meter.indexWrite),
    byCommand: Object.fromEntries([...meter.byCommand].map(([name, c]) => [name, { ...c, units: round(c.units) }])),
  };
}

function installMeter(): void {
  db().middlewareStack.add(
    (next, context) => async (args) => {
      const command = (context.commandName ?? '?').replace(/Command$/, '');
      if (!DATA_PLANE.test(command)) return next(args);
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'INDEXES';
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: Capacity | Capacity[] }).ConsumedCapacity;
      const records = consumed === undefined ? [] : Array.isArray(consumed) ? consumed : [consumed];
      let units = 0;
      for (const record of records) {
        units += record.CapacityUnits ?? 0;
        if (!READS.test(command)) {
          for (const index of Object.values(record.GlobalSecondaryIndexes ?? {})) {
            meter.indexWrite += index.CapacityUnits ?? 0;
          }
        }
      }
      if (READS.test(command)) meter.read += units;
      else meter.write += units;
      const entry = meter.byCommand.get(command) ?? { calls: 0, units: 0 };
      entry.calls += 1;
      entry.units += units;
      meter.byCommand.set(command, entry);
      return result;
    },
    { step: 'initialize', name: 'benchBillingCapacity' },
  );
}

// Tables: the demo seed, real payment sources and a real subscription made through the API (the
// template every generated subscription is copied from), then subscriptions written directly.

interface PreparedTable {
  name: string;
  sources: string[];
  template: SubscriptionRecord;
  today: string;
}

type Call = (method: string, url: string, body?: unknown, token?: string) => Promise<Record<string, unknown>>;

function apiOf(gateway: Gateway): Call {
  return async (method, url, body, token) => {
    const response = await gateway.handle({
      method,
      url,
      headers: {
        host: '127.0.0.1',
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: Buffer.from(body === undefined ? '' : JSON.stringify(body)),
      sourceIp: '127.0.0.1',
    });
    const text = response.body.toString();
    if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
}

async function prepareTable(name: string, call: Call): Promise<PreparedTable> {
  process.env.SVC_TABLE_NAME = name;
  await createTableIfMissing(name);
  await applySeed(parseSeed(DEMO_SEED));
  const { access_token: token } = (await call('POST', '/oauth2/token', {
    grant_type: 'client_credentials',
    client_id: 'demo-client',
    client_secret: 'demo-secret-change-me',
  })) as { access_token: string };
  const sources: string[] = [];
  for (let i = 0; i < SOURCES; i++) {
    const source = await call(
      'POST',
      '/payment-sources',
      {
        account_uuid: ACCOUNT,
        payment_method: 'card',
        profile: 'card-test',
        amount: { value: '100', currency: 'CHF' },
        payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
      },
      token,
    );
    if (source.status !== 'active') throw new Error(`payment source ${source.uuid} is ${source.status}`);
    sources.push(String(source.uuid));
  }
  const supporter = await call('POST', '/supporters', { organisation_uuid: ORGANISATION, first_name: 'Ada' }, token);
  const created = await call(
    'POST',
    '/subscriptions',
    {
      account_uuid: ACCOUNT,
      payment_source_uuid: sources[0],
      supporter_uuid: supporter.uuid,
      currency: 'CHF',
      amount: 2500,
      recurring_interval: 'monthly',
      status: 'active',
    },
    token,
  );
  const template = await findSubscription(String(created.uuid));
  if (!template?.next_due_day) throw new Error(`subscription ${created.uuid} has no next due day`);
  // The template is only a shape to copy: remove it so the population is exactly what is written.
  await db().send(new DeleteCommand({ TableName: name, Key: subscriptionKey(template.uuid) }));
  return { name, sources, template, today: localDateOf(AT, template.timezone) };
}

/** A copy of the template: due today, or first due `inDays` days from today. */
function subscriptionOf(table: PreparedTable, uuid: string, i: number, inDays = 0): SubscriptionRecord {
  const day = addDays(table.today, inDays);
  return {
    ...structuredClone(table.template),
    uuid,
    payment_source_uuid: table.sources[i % table.sources.length] ?? table.template.payment_source_uuid,
    anchor: day,
    next_due_day: day,
    events: [],
  };
}

/** BatchWriteItem, 25 items a call, 8 calls in flight; unprocessed items go again (bounded). */
async function writeSubscriptions(table: string, records: SubscriptionRecord[]): Promise<void> {
  const batches: SubscriptionRecord[][] = [];
  for (let i = 0; i < records.length; i += 25) batches.push(records.slice(i, i + 25));
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < batches.length) {
        let requests = (batches[next++] ?? []).map((r) => ({ PutRequest: { Item: subscriptionItem(r) } }));
        for (let round = 0; requests.length > 0; round++) {
          if (round >= 10) throw new Error(`BatchWriteItem left ${requests.length} items unprocessed`);
          if (round > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** round));
          const out = await db().send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
          requests = (out.UnprocessedItems?.[table] ?? []) as typeof requests;
        }
      }
    }),
  );
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

// 1. The billing run, and a Scan as the baseline.

/**
 * Billing runs on each table, taking turns (so drift on a shared machine hits both alike), after
 * three warm-up runs each; every run must find exactly the expected entries.
 */
async function measureRuns(tables: string[], expected: ReadonlySet<string>, runs: number) {
  const once = async (table: string) => {
    process.env.SVC_TABLE_NAME = table;
    resetMeter();
    const entries: DueEntry[] = [];
    const started = performance.now();
    const { due } = await runBilling(async (page) => {
      entries.push(...page);
    });
    const ms = performance.now() - started;
    const found = new Set(entries.map((e) => e.subscription_uuid));
    const missing = [...expected].filter((uuid) => !found.has(uuid)).length;
    if (due !== expected.size || found.size !== expected.size || missing > 0) {
      throw new Error(`billing run on ${table} found ${due} due (${missing} of the expected missing)`);
    }
    const reading = meterReading();
    return { due, ms, rcu: reading.read, queries: reading.byCommand.Query?.calls ?? 0 };
  };
  for (let i = 0; i < 3; i++) for (const table of tables) await once(table);
  const samples = tables.map(() => [] as Array<Awaited<ReturnType<typeof once>>>);
  for (let i = 0; i < runs; i++) {
    for (const [t, table] of tables.entries()) samples[t]?.push(await once(table));
  }
  return samples.map((runsOf, t) => {
    const rcus = new Set(runsOf.map((s) => s.rcu));
    if (rcus.size !== 1) throw new Error(`billing run on ${tables[t]}: capacity differs between runs: ${[...rcus]}`);
    return {
      due: runsOf[0]?.due ?? 0,
      rcu: runsOf[0]?.rcu ?? 0,
      queries: runsOf[0]?.queries ?? 0,
      ms: median(runsOf.map((s) => s.ms)),
      msRuns: runsOf.map((s) => Math.round(s.ms * 10) / 10),
    };
  });
}

/** What a run without the index would do: read the whole table, keep what is due. */
async function measureScan(table: string, expected: number, runs: number) {
  const once = async () => {
    resetMeter();
    let found = 0;
    let pages = 0;
    let cursor: Record<string, unknown> | undefined;
    const started = performance.now();
    do {
      const out = await db().send(
        new ScanCommand({
          TableName: table,
          FilterExpression: 'entity = :subscription AND duesk < :before',
          ExpressionAttributeValues: { ':subscription': 'subscription', ':before': dueBefore(AT) },
          ProjectionExpression: 'pk, duesk',
          ExclusiveStartKey: cursor,
        }),
      );
      found += out.Count ?? 0;
      pages += 1;
      cursor = out.LastEvaluatedKey;
    } while (cursor && pages < 10_000);
    const ms = performance.now() - started;
    if (found !== expected) throw new Error(`scan of ${table} found ${found} due, expected ${expected}`);
    return { found, pages, ms, rcu: meterReading().read };
  };
  await once();
  const samples = [];
  for (let i = 0; i < runs; i++) samples.push(await once());
  return {
    found: samples[0]?.found ?? 0,
    pages: samples[0]?.pages ?? 0,
    rcu: samples[0]?.rcu ?? 0,
    ms: median(samples.map((s) => s.ms)),
  };
}

// 2. The worker, and raw transactions as the baseline.

/**
 * One TransactWriteItems of the three items the worker's open step writes (subscription, invoice,
 * payment): same sizes and index attributes, each guarded by attribute_not_exists like the worker's.
 */
function rawWriter(table: PreparedTable, source: PaymentSourceRecord) {
  return async () => {
    const subscription = subscriptionOf(table, randomUUID(), 0);
    const invoice = newInvoice(subscription, AT, { period: table.today });
    const { payment } = openAttempt(invoice, subscription, source, true, AT);
    await db().send(
      new TransactWriteCommand({
        TransactItems: [subscriptionItem(subscription), invoiceItem(invoice), paymentItem(payment)].map((Item) => ({
          Put: { TableName: TABLES.raw, Item, ConditionExpression: 'attribute_not_exists(pk)' },
        })),
      }),
    );
    return true;
  };
}

async function rawTransactions(write: () => Promise<boolean>, seconds: number, inFlight: number) {
  resetMeter();
  const result = await runLoad(write, { seconds, concurrency: inFlight, maxRequests: 200_000 });
  const reading = meterReading();
  return {
    inFlight,
    perSecond: result.perSecond,
    transactions: result.requests,
    errors: result.errors,
    p50ms: result.p50ms,
    wcuPerTransaction: result.requests > 0 ? reading.write / result.requests : 0,
  };
}

async function runWorker(entries: DueEntry[], concurrency: number) {
  const batches: SQSEvent[] = [];
  for (let i = 0; i < entries.length; i += BATCH) {
    const records = entries
      .slice(i, i + BATCH)
      .map((entry, k) => ({ messageId: `m-${i + k}`, body: JSON.stringify(entry) }));
    batches.push({ Records: records } as unknown as SQSEvent);
  }
  const outcome = { invoices_created: 0, charge_attempts_created: 0, succeeded: 0, failed: 0, messageFailures: 0 };
  const batchMs: number[] = [];
  let next = 0;
  resetMeter();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < batches.length) {
        const batch = batches[next++] as SQSEvent;
        const t = performance.now();
        const { response, outcome: o } = await processBillingBatch(batch);
        batchMs.push(performance.now() - t);
        outcome.invoices_created += o.invoices_created;
        outcome.charge_attempts_created += o.charge_attempts_created;
        outcome.succeeded += o.succeeded;
        outcome.failed += o.failed;
        outcome.messageFailures += response.batchItemFailures.length;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { ...outcome, seconds, batches: batches.length, batchMs: median(batchMs), capacity: meterReading() };
}

/** Every due subscription has exactly one invoice, paid, and one payment, succeeded; nothing is left due. */
async function verifyWorkerTable(
  table: string,
  due: ReadonlySet<string>,
): Promise<{ invoices: number; payments: number; dueAfter: number }> {
  const invoicesOf = new Map<string, number>();
  const paymentsOf = new Map<string, number>();
  const problems: string[] = [];
  let cursor: Record<string, unknown> | undefined;
  let pages = 0;
  do {
    const out = await db().send(
      new ScanCommand({
        TableName: table,
        ConsistentRead: true,
        FilterExpression: 'entity IN (:invoice, :payment)',
        ExpressionAttributeValues: { ':invoice': 'invoice', ':payment': 'payment' },
        ProjectionExpression: 'entity, #document',
        ExpressionAttributeNames: { '#document': 'document' },
        ExclusiveStartKey: cursor,
      }),
    );
    for (const item of out.Items ?? []) {
      const document = JSON.parse(String(item.document)) as { subscription_uuid?: string; status?: string };
      const subscription = document.subscription_uuid ?? '?';
      const counts = item.entity === 'invoice' ? invoicesOf : paymentsOf;
      counts.set(subscription, (counts.get(subscription) ?? 0) + 1);
      const wanted = item.entity === 'invoice' ? 'paid' : 'succeeded';
      if (document.status !== wanted && problems.length < 5) {
        problems.push(`${item.entity} of ${subscription} is ${document.status}`);
      }
    }
    cursor = out.LastEvaluatedKey;
    pages += 1;
  } while (cursor && pages < 10_000);
  for (const [name, counts] of [
    ['invoice', invoicesOf],
    ['payment', paymentsOf],
  ] as const) {
    const duplicates = [...counts].filter(([, n]) => n > 1).length;
    const missing = [...due].filter((uuid) => !counts.has(uuid)).length;
    const strangers = [...counts.keys()].filter((uuid) => !due.has(uuid)).length;
    if (duplicates || missing || strangers) {
      problems.push(
        `${name}s: ${duplicates} subscriptions with more than one, ${missing} without, ${strangers} of others`,
      );
    }
  }
  process.env.SVC_TABLE_NAME = table;
  const { due: dueAfter } = await runBilling(async () => undefined);
  if (dueAfter !== 0) problems.push(`${dueAfter} entries still due after the worker`);
  const count = (counts: Map<string, number>) => [...counts.values()].reduce((n, c) => n + c, 0);
  if (count(invoicesOf) !== due.size) problems.push(`${count(invoicesOf)} invoices, expected ${due.size}`);
  if (problems.length > 0) throw new Error(`billing worker bench: ${problems.join('; ')}`);
  return { invoices: count(invoicesOf), payments: count(paymentsOf), dueAfter };
}

export interface BillingBenchOptions {
  /** Measured billing runs per population (median reported), after one warm-up run. */
  runs: number;
  /** Worker batches processed at once (Lambda's concurrent invocations). */
  concurrency: number;
  /** Seconds of each raw TransactWriteItems measurement. */
  rawSeconds: number;
}

export async function benchBilling(options: BillingBenchOptions) {
  const saved = { ...process.env };
  const dynamo = await startDynamoDbLocal({});
  try {
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_REGION: 'eu-central-2',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      SVC_DATA_DIR: ':memory:',
      SVC_STAGE: 'local',
      SVC_TABLE_NAME: TABLES.small,
    });
    resetDbClient();
    installMeter();
    freezeClock(AT);
    const call = apiOf(await createGateway({ enableControl: false }));
    const prepareStarted = performance.now();

    // Every table is created, and written to, before any is filled: in DynamoDB Local each write
    // to a streamed table pays for the stream records other tables wrote before its first one (a
    // 3-item transaction took ~8 ms in a table written early, ~100-150 ms in one first written
    // after the 11,000 subscriptions), an emulator artefact that would swamp the worker figures.
    const worker = await prepareTable(TABLES.worker, call);
    const source = await findPaymentSource(worker.sources[0] ?? '');
    if (!source) throw new Error('worker table: payment source missing');
    const rawWrite = rawWriter(worker, source);
    await createTableIfMissing(TABLES.raw);
    await rawWrite(); // its first stream records, before the populations' (see above)
    const small = await prepareTable(TABLES.small, call);
    const large = await prepareTable(TABLES.large, call);

    // The same 100 due subscriptions in both populations; the 900 others of the small one are
    // the first 900 of the large one's 9,900, first due 1 to 365 days from today.
    const dueUuids = Array.from({ length: DUE }, () => randomUUID());
    const laterUuids = Array.from({ length: LARGE - DUE }, () => randomUUID());
    for (const [table, size] of [
      [small, SMALL],
      [large, LARGE],
    ] as const) {
      await writeSubscriptions(table.name, [
        ...dueUuids.map((uuid, i) => subscriptionOf(table, uuid, i)),
        ...laterUuids.slice(0, size - DUE).map((uuid, i) => subscriptionOf(table, uuid, i, 1 + (i % 365))),
      ]);
    }
    const workerUuids = Array.from({ length: WORKER_DUE }, () => randomUUID());
    await writeSubscriptions(
      TABLES.worker,
      workerUuids.map((uuid, i) => subscriptionOf(worker, uuid, i)),
    );
    const prepareSeconds = (performance.now() - prepareStarted) / 1000;

    const runs = await measureRuns([TABLES.small, TABLES.large], new Set(dueUuids), options.runs);
    const [smallRun, largeRun] = runs as [(typeof runs)[number], (typeof runs)[number]];
    const smallScan = await measureScan(TABLES.small, DUE, options.runs);
    const largeScan = await measureScan(TABLES.large, DUE, options.runs);

    // The worker's input is what a billing run on its table finds (1,000 entries, also measured).
    process.env.SVC_TABLE_NAME = TABLES.worker;
    const entries: DueEntry[] = [];
    resetMeter();
    const runStarted = performance.now();
    await runBilling(async (page) => {
      entries.push(...page);
    });
    const workerRun = { due: entries.length, ms: performance.now() - runStarted, rcu: meterReading().read };
    if (entries.length !== WORKER_DUE) throw new Error(`worker table: ${entries.length} due, expected ${WORKER_DUE}`);

    const inFlight = options.concurrency * BATCH;
    await rawTransactions(rawWrite, 2, inFlight); // warm
    const raw = await rawTransactions(rawWrite, options.rawSeconds, inFlight);
    const rawNarrow = await rawTransactions(rawWrite, options.rawSeconds, options.concurrency);
    const run = await runWorker(entries, options.concurrency);
    const verified = await verifyWorkerTable(TABLES.worker, new Set(workerUuids));
    if (run.succeeded !== WORKER_DUE || run.messageFailures > 0) {
      throw new Error(`billing worker: ${run.succeeded} charges succeeded, ${run.messageFailures} messages failed`);
    }
    const perSecond = run.succeeded / run.seconds;
    const perCharge = (n: number) => n / run.succeeded;
    return {
      frozen_at: new Date(AT * 1000).toISOString(),
      prepare_seconds: prepareSeconds,
      run: {
        small: { subscriptions: SMALL, ...smallRun },
        large: { subscriptions: LARGE, ...largeRun },
        rcu_ratio: largeRun.rcu / smallRun.rcu,
        ms_ratio: largeRun.ms / smallRun.ms,
        goal_ratio: 1.2,
      },
      scan: { small: smallScan, large: largeScan },
      worker: {
        concurrency: options.concurrency,
        batch_size: BATCH,
        charges: run.succeeded,
        failed: run.failed,
        invoices_created: run.invoices_created,
        seconds: run.seconds,
        charges_per_s: perSecond,
        batch_p50_ms: run.batchMs,
        capacity_per_charge: {
          read: perCharge(run.capacity.read),
          write: perCharge(run.capacity.write),
          write_of_indexes: perCharge(run.capacity.indexWrite),
          total: perCharge(run.capacity.read + run.capacity.write),
        },
        capacity_by_command: run.capacity.byCommand,
        billing_run_over_1000_due: workerRun,
        verified,
      },
      raw_transact_3_items: {
        same_in_flight: raw,
        one_per_batch: rawNarrow,
      },
      charges_per_raw_transaction: perSecond / raw.perSecond,
    };
  } finally {
    resumeRealTime();
    resetDbClient();
    await dynamo.stop();
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

export type BillingBench = Awaited<ReturnType<typeof benchBilling>>;

/** The compact summary `pnpm bench` prints. */
export function billingSummary(b: BillingBench): string[] {
  const f = (n: number, digits = 1) => n.toFixed(digits);
  const runLine = (label: string, r: BillingBench['run']['small'], s: BillingBench['scan']['small']) =>
    `${label.padEnd(22)} due ${r.due}  index ${f(r.rcu)} RCU ${f(r.ms)} ms (${r.queries} queries)   full Scan ${f(s.rcu)} RCU ${f(s.ms, 0)} ms (${s.pages} pages)`;
  const w = b.worker;
  const c = w.capacity_per_charge;
  return [
    `\nBilling run (runBilling, due index), median of ${b.run.small.msRuns.length} runs, clock frozen at ${b.frozen_at}:`,
    runLine(`${b.run.small.subscriptions} subscriptions`, b.run.small, b.scan.small),
    runLine(`${b.run.large.subscriptions} subscriptions`, b.run.large, b.scan.large),
    `10k / 1k: RCU ${f(b.run.rcu_ratio, 2)}x, time ${f(b.run.ms_ratio, 2)}x  (goal <= ${b.run.goal_ratio}x); full Scan ${f(b.scan.large.rcu / b.scan.small.rcu, 2)}x RCU`,
    `Billing worker (processBillingBatch), ${w.charges} due, batches of ${w.batch_size}, ${w.concurrency} at once:`,
    `${'charges'.padEnd(22)} ${f(w.charges_per_s)} /s  (${w.charges} in ${f(w.seconds, 2)} s, batch p50 ${f(w.batch_p50_ms, 0)} ms)`,
    `${'per charge'.padEnd(22)} ${f(c.read, 2)} RCU + ${f(c.write, 2)} WCU (${f(c.write_of_indexes, 2)} of it indexes) = ${f(c.total, 2)} CU`,
    `${'raw TransactWrite (3)'.padEnd(22)} ${f(b.raw_transact_3_items.same_in_flight.perSecond)} /s at ${b.raw_transact_3_items.same_in_flight.inFlight} in flight, ${f(b.raw_transact_3_items.one_per_batch.perSecond)} /s at ${b.raw_transact_3_items.one_per_batch.inFlight}; ${f(b.raw_transact_3_items.same_in_flight.wcuPerTransaction, 1)} WCU each`,
    `charges / raw transactions = ${(b.charges_per_raw_transaction * 100).toFixed(0)}%   verified: ${w.verified.invoices} invoices, ${w.verified.payments} payments, ${w.verified.dueAfter} still due`,
  ];
}
