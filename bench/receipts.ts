import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { PaymentRecord } from '@svc/payments';
import type { ReceiptRecord } from '@svc/receipts';

/**
 * A year's receipt batch over an organisation of N supporters (issue 48: "receipts per second for
 * a batch at 10k supporters, memory flat as the batch grows"), for each N of BENCH_RECEIPTS_SIZES
 * (1,000, 5,000, 10,000), each its own organisation, beside a raw baseline from the same run.
 *
 * Everything runs in one fresh Node process (`--expose-gc`) that holds what a receipts worker
 * holds: the local runtime's stores (`startLocalStores`, in memory: DynamoDB Local in its own Java
 * process, the SQS stand-in the batch sends its next-page messages to, the search engine, PGlite,
 * in this process as the local runtime has it).
 *
 * Seeding (not timed): per organisation, receipt settings (CH, min_total 50.00) and, per
 * supporter, one to three succeeded live CHF payments in 2024 (each at least 50.00, so every
 * supporter gets a receipt), every fifth one a payment of 2023 and every tenth one a failed
 * payment of 2024 (both read past by the gifts query). The payments are built as `POST /payments`
 * stores them (`paymentItem`), written to the table with BatchWriteItem and projected into
 * `payment_search` by the payments projection itself. No supporter items: the batch runs without
 * send_email and never reads them. No provider is called.
 *
 * The batch (timed): the batch item as `POST /receipt-batches` writes it, then `runBatchPage`
 * page after page until it answers that the batch is done, as the queue's worker calls it (each
 * page also sends its next-page message to the SQS stand-in). After every page, outside the
 * timed span, a full GC and `process.memoryUsage().heapUsed` (the live heap after the page);
 * meanwhile a sampler notes heapUsed every 20 ms (the peak, garbage included). Verified: the batch
 * completed, issued N receipts, and the sequence ends at N.
 *
 * The baseline (timed, half just before each batch and half just after): the same number of receipts written as raw
 * TransactWriteItems of the same items, pages of SUPPORTERS_PER_PAGE cut in transactions of
 * ISSUE_CHUNK as `issueReceipts` cuts them (the sequence update, each receipt's Put, each
 * supporter's RECEIPT_OF update, with the same conditions; the receipt items are receipts the
 * warm-up batch wrote, under new uuids), one transaction at a time as the batch sends them: the
 * floor of what issuing costs the table. The ratio is batch receipts/s over raw receipts/s.
 *
 * After seeding, `VACUUM (ANALYZE) payment_search`, as autovacuum does on Aurora (and as
 * bench/search.ts does): without statistics the planner reads the gifts' first statement through
 * the status index, every succeeded row of the organisation for each page (a batch's gifts
 * queries then grow with the square of its supporters); the gifts query alone over the largest
 * organisation is timed before it too, for the record.
 *
 * Where the batch's time goes: the wall time inside each DynamoDB call (SDK middleware on the
 * table client), and the gifts query alone (`giftsOfOrganisation` over the same organisation and
 * year, page after page, timed after the batch).
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const TASK_ENV = 'BENCH_RECEIPTS_TASK';
const YEAR = 2024;
const TABLE = 'svc-local';
const ACCOUNT = '9c405f6d-7e8b-4c93-9da4-ce5f60718293';
const SAMPLE_MS = 20;
const MiB = 1024 * 1024;
/** 2 January 2024, 10:00 UTC: a gift of day d of the year is d days after. */
const YEAR_START = Date.UTC(YEAR, 0, 2, 10, 0, 0) / 1000;
const DAY = 86_400;

const SETTINGS = {
  country: 'CH' as const,
  legal_name: 'Stiftung Beispiel',
  address: { line1: 'Seestrasse 1', postal_code: '8002', city: 'Zürich', country: 'CH' },
  tax_exemption_reference: 'Kantonales Steueramt Zürich, Verfügung vom 1. März 2019',
  signatory: 'Anna Muster, Präsidentin',
  min_total: 5000,
};

export interface ReceiptsBenchOptions {
  /** Supporters of each measured batch (each its own organisation). */
  sizes: number[];
  /** Supporters of the warm-up batch (JIT, pools, DynamoDB Local); its receipts are the baseline's items. */
  warmSupporters: number;
}

interface Calls {
  [command: string]: { calls: number; ms: number };
}

export interface ReceiptsSizeResult {
  supporters: number;
  /** Payment rows of the organisation (all years and statuses) and those counted (succeeded, in the year). */
  payments: number;
  gifts: number;
  batch: {
    pages: number;
    /** Inside runBatchPage only (the GC and heap readings between pages are left out). */
    seconds: number;
    /** Including the GC and readings between pages. */
    wall_seconds: number;
    receipts: number;
    receipts_per_s: number;
    /** CPU of this process (the worker and the in-process search engine) over the timed span. */
    cpu_share: number;
    heap: {
      /** Live heap after a full GC just before the first page. */
      before_mib: number;
      /** The largest live heap after a page (full GC first). */
      max_after_page_mib: number;
      /** Live heap after the first and the last page. */
      first_page_mib: number;
      last_page_mib: number;
      /** The highest heapUsed the 20 ms sampler saw (garbage included). */
      peak_sampled_mib: number;
      rss_after_mib: number;
    };
    calls: Calls;
  };
  gifts_query: { seconds: number; pages: number; share_of_batch: number };
  raw: { transactions: number; items: number; seconds: number; receipts_per_s: number };
  ratio: number;
}

export interface ReceiptsBenchResult {
  sizes: number[];
  seed_seconds: number;
  /** VACUUM (ANALYZE) of payment_search after seeding. */
  vacuum_seconds: number;
  /** The gifts query alone over the largest organisation before that (no planner statistics). */
  gifts_query_without_statistics: { supporters: number; seconds: number; pages: number };
  warm_supporters: number;
  supporters_per_page: number;
  issue_chunk: number;
  load_average: { before: number; after: number };
  total_seconds: number;
  results: ReceiptsSizeResult[];
  /** max_after_page at the largest N over that at the smallest (flat: at most 1.5). */
  heap_growth: number;
}

const mib = (bytes: number) => Math.round((bytes / MiB) * 10) / 10;

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the receipts bench process needs --expose-gc');
  gc();
  gc();
}

/** Supporter uuids in a fixed order of their own (the batch walks them in text order). */
function supportersOf(count: number): string[] {
  return Array.from({ length: count }, () => randomUUID());
}

/** The payments of supporter `i` (see the file's comment). */
function paymentsOf(organisation: string, supporter: string, i: number): PaymentRecord[] {
  const made = (n: number, succeededAt: number, status: 'succeeded' | 'failed'): PaymentRecord => ({
    uuid: randomUUID(),
    organisation_uuid: organisation,
    account_uuid: ACCOUNT,
    created: succeededAt - 5,
    updated: succeededAt,
    status,
    ...(status === 'succeeded' ? { succeeded_at: succeededAt } : {}),
    test_mode: false,
    amount_minor: 5000 + ((i * 7 + n) % 20) * 500,
    refunded_minor: 0,
    currency: 'CHF',
    payment_method: 'card',
    profile: 'card',
    provider: 'simulated',
    payment_information: { brand: 'visa', last4: '4242', expiry_month: 12, expiry_year: 2099 },
    supporter_uuid: supporter,
    refunds: [],
    custom_parameters: { campaign: `appeal-${i % 12}` },
    svc_parameters: {},
    version: 1,
    event_sequence: 1,
    events: [],
  });
  const day = (n: number) => YEAR_START + ((i * 37 + n * 101) % 360) * DAY + (i % 3600);
  const payments = Array.from({ length: 1 + (i % 3) }, (_, n) => made(n, day(n), 'succeeded'));
  if (i % 5 === 0) payments.push(made(9, day(9) - 365 * DAY, 'succeeded'));
  if (i % 10 === 0) payments.push(made(8, day(8), 'failed'));
  return payments;
}

// The bench process.

async function runInProcess(options: ReceiptsBenchOptions): Promise<ReceiptsBenchResult> {
  const benchStarted = performance.now();
  const { startLocalStores } = await import('@svc/local');
  const stores = await startLocalStores({
    port: 0,
    dataDir: ':memory:',
    inMemory: true,
    seedFile: undefined,
    tableName: TABLE,
    background: 'settle',
  });
  try {
    return await measure(options, benchStarted);
  } finally {
    await stores.stop();
  }
}

async function measure(options: ReceiptsBenchOptions, benchStarted: number): Promise<ReceiptsBenchResult> {
  const { SEARCH_PROJECTIONS } = await import('@svc/api');
  const { paymentItem, paymentStatusEvents } = await import('@svc/payments');
  const {
    RECEIPT,
    RECEIPT_BATCH,
    RECEIPT_OF,
    RECEIPT_SEQUENCE,
    RECEIPT_SETTINGS,
    runBatchPage,
    giftsOfOrganisation,
    SUPPORTERS_PER_PAGE,
    ISSUE_CHUNK,
    yearBounds,
  } = await import('@svc/receipts');
  const { db, key, putItems, queryAll, tableName, transactWrite } = await import('@svc/table');
  const { newResourceUuid, now } = await import('@svc/core');
  const { searchDb } = await import('@svc/sql');
  const { sql } = await import('kysely');

  const projection = SEARCH_PROJECTIONS.find((p) => p.name === 'payments');
  if (!projection) throw new Error('no payments projection');

  // Wall time inside each call of the table client, by command.
  let calls: Calls = {};
  // biome-ignore lint/suspicious/noExplicitAny: a middleware on the document client's stack
  const meter: any =
    (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
      const name = (context.commandName ?? '?').replace(/Command$/, '');
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
  db().middlewareStack.add(meter, { step: 'initialize', name: 'benchReceiptsCalls' });

  // Seeding: an organisation per size (and one for the warm-up), its settings, its payments.
  const seedStarted = performance.now();
  const organisations: Array<{ uuid: string; supporters: number; payments: number; gifts: number }> = [];
  for (const supporters of [options.warmSupporters, ...options.sizes]) {
    const organisation = randomUUID();
    await transactWrite([
      RECEIPT_SETTINGS.create({ ...SETTINGS, organisation_uuid: organisation, version: 1, updated: now() }),
    ]);
    const uuids = supportersOf(supporters);
    let payments = 0;
    let gifts = 0;
    for (let start = 0; start < supporters; start += 500) {
      const records: PaymentRecord[] = [];
      for (let i = start; i < Math.min(supporters, start + 500); i++) {
        records.push(...paymentsOf(organisation, uuids[i] as string, i));
      }
      const items = records.map((p) => paymentItem({ ...p, events: paymentStatusEvents(p) }));
      await putItems(items);
      for (let at = 0; at < items.length; at += 200) await projection.project(items.slice(at, at + 200));
      payments += records.length;
      gifts += records.filter((p) => p.status === 'succeeded' && (p.succeeded_at ?? 0) >= YEAR_START).length;
    }
    organisations.push({ uuid: organisation, supporters, payments, gifts });
  }
  const seedSeconds = (performance.now() - seedStarted) / 1000;

  const newBatch = async (organisation: string) => {
    const batch = {
      uuid: newResourceUuid('receipt_batch'),
      organisation_uuid: organisation,
      year: YEAR,
      send_email: false,
      status: 'queued' as const,
      counts: { supporters: 0, issued: 0, below_min_total: 0, already_issued: 0, emailed: 0, without_email: 0 },
      created: now(),
      updated: now(),
      version: 1,
    };
    await transactWrite([RECEIPT_BATCH.create(batch)]);
    return batch.uuid;
  };

  /** A whole batch, page by page, with the heap read after each page (outside the timed span). */
  const runBatch = async (organisation: string, expected: number) => {
    const batchUuid = await newBatch(organisation);
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }, SAMPLE_MS);
    const afterPages: number[] = [];
    let timed = 0;
    let cpu = 0;
    calls = {};
    const wallStarted = performance.now();
    for (let more = true; more; ) {
      const cpuBefore = process.cpuUsage();
      const t = performance.now();
      more = await runBatchPage(batchUuid);
      timed += performance.now() - t;
      const used = process.cpuUsage(cpuBefore);
      cpu += (used.user + used.system) / 1000;
      peak = Math.max(peak, process.memoryUsage().heapUsed);
      collectGarbage();
      afterPages.push(process.memoryUsage().heapUsed);
    }
    const wall = performance.now() - wallStarted;
    clearInterval(sampler);
    const pageCalls = calls;
    const batch = await RECEIPT_BATCH.find(batchUuid);
    const sequence = await RECEIPT_SEQUENCE.find({ organisation_uuid: organisation, year: YEAR });
    if (batch?.status !== 'completed' || batch.counts.issued !== expected || sequence?.last !== expected) {
      throw new Error(
        `batch ${batchUuid}: ${batch?.status}, ${JSON.stringify(batch?.counts)}, sequence ${sequence?.last}; expected ${expected} issued`,
      );
    }
    return {
      pages: afterPages.length,
      seconds: timed / 1000,
      wall_seconds: wall / 1000,
      receipts: batch.counts.issued,
      receipts_per_s: batch.counts.issued / (timed / 1000),
      cpu_share: cpu / timed,
      heap: {
        before_mib: mib(before),
        max_after_page_mib: mib(Math.max(...afterPages)),
        first_page_mib: mib(afterPages[0] ?? 0),
        last_page_mib: mib(afterPages[afterPages.length - 1] ?? 0),
        peak_sampled_mib: mib(peak),
        rss_after_mib: mib(process.memoryUsage().rss),
      },
      calls: Object.fromEntries(
        Object.entries(pageCalls).map(([name, c]) => [name, { calls: c.calls, ms: Math.round(c.ms) }]),
      ),
    };
  };

  /** The gifts query alone, page after page over the organisation's year, as the batch reads it. */
  const giftsOnly = async (organisation: string) => {
    const { from, to } = yearBounds(SETTINGS, YEAR);
    const started = performance.now();
    let pages = 0;
    let rows = 0;
    for await (const page of giftsOfOrganisation(organisation, from, to, undefined, SUPPORTERS_PER_PAGE)) {
      pages++;
      rows += page.length;
    }
    return { seconds: (performance.now() - started) / 1000, pages, rows };
  };

  // The warm-up batch; its receipts are the items the baseline writes again.
  const warm = organisations[0] as (typeof organisations)[number];
  await runBatch(warm.uuid, warm.supporters);
  const stored = await queryAll({ index: 'gsi1', partition: key('ORG', warm.uuid, 'RECEIPTS', YEAR) });
  const samples = (await Promise.all(stored.slice(0, 64).map((item) => RECEIPT.find(String(item.uuid))))).filter(
    (r): r is ReceiptRecord => r !== undefined,
  );
  if (samples.length === 0) throw new Error('the warm-up batch wrote no receipts');

  /** One issuing transaction's items, as issueReceipts sends them, for `count` receipts from `read` on. */
  const table = tableName();
  const transactionOf = (organisation: string, read: number, count: number): TransactWriteCommandInput => {
    const id = { organisation_uuid: organisation, year: YEAR };
    const items: NonNullable<TransactWriteCommandInput['TransactItems']> = [
      {
        Update: {
          TableName: table,
          Key: RECEIPT_SEQUENCE.key(id),
          UpdateExpression: 'SET #last = :next, entity = :entity, organisation_uuid = :org, #year = :year',
          ConditionExpression: read === 0 ? 'attribute_not_exists(pk)' : '#last = :read',
          ExpressionAttributeNames: { '#last': 'last', '#year': 'year' },
          ExpressionAttributeValues: {
            ':next': read + count,
            ':entity': RECEIPT_SEQUENCE.description.name,
            ':org': organisation,
            ':year': YEAR,
            ...(read === 0 ? {} : { ':read': read }),
          },
        },
      },
    ];
    for (let n = 0; n < count; n++) {
      const sample = samples[(read + n) % samples.length] as ReceiptRecord;
      const receipt = {
        ...sample,
        uuid: randomUUID(),
        organisation_uuid: organisation,
        supporter_uuid: randomUUID(),
        sequence: read + n + 1,
      };
      const put = RECEIPT.create(receipt).item as {
        Put: { Item: Record<string, unknown>; ConditionExpression: string };
      };
      items.push({ Put: { TableName: table, ...put.Put } });
      items.push({
        Update: {
          TableName: table,
          Key: RECEIPT_OF.key({ ...id, supporter_uuid: receipt.supporter_uuid }),
          UpdateExpression:
            'SET receipt_uuid = :receipt, entity = :entity, organisation_uuid = :org, #year = :year, supporter_uuid = :supporter, #version = if_not_exists(#version, :zero) + :one',
          ConditionExpression: 'attribute_not_exists(receipt_uuid)',
          ExpressionAttributeNames: { '#year': 'year', '#version': 'version' },
          ExpressionAttributeValues: {
            ':receipt': receipt.uuid,
            ':entity': RECEIPT_OF.description.name,
            ':org': organisation,
            ':year': YEAR,
            ':supporter': receipt.supporter_uuid,
            ':zero': 0,
            ':one': 1,
          },
        },
      });
    }
    return { TransactItems: items };
  };

  /** `receipts` receipts as raw transactions (built before the clock starts), one at a time. */
  const rawBaseline = async (receipts: number) => {
    const organisation = randomUUID();
    const transactions: TransactWriteCommandInput[] = [];
    let read = 0;
    for (let page = 0; page < receipts; page += SUPPORTERS_PER_PAGE) {
      const inPage = Math.min(SUPPORTERS_PER_PAGE, receipts - page);
      for (let start = 0; start < inPage; start += ISSUE_CHUNK) {
        const count = Math.min(ISSUE_CHUNK, inPage - start);
        transactions.push(transactionOf(organisation, read, count));
        read += count;
      }
    }
    const items = transactions.reduce((sum, t) => sum + (t.TransactItems?.length ?? 0), 0);
    const client = db();
    const started = performance.now();
    for (const transaction of transactions) await client.send(new TransactWriteCommand(transaction));
    const seconds = (performance.now() - started) / 1000;
    const sequence = await RECEIPT_SEQUENCE.find({ organisation_uuid: organisation, year: YEAR });
    if (sequence?.last !== receipts) throw new Error(`raw baseline: sequence ${sequence?.last}, expected ${receipts}`);
    return { transactions: transactions.length, items, seconds, receipts_per_s: receipts / seconds };
  };

  await rawBaseline(Math.min(400, options.warmSupporters));
  await giftsOnly(warm.uuid);
  // The gifts query over the largest organisation before the engine has statistics (PGlite runs
  // no autovacuum): the planner's choice then, for the record.
  const largest = organisations[organisations.length - 1] as (typeof organisations)[number];
  const unanalysed = await giftsOnly(largest.uuid);
  // What autovacuum does on Aurora after a bulk load (as bench/search.ts does): statistics for the
  // planner, and the visibility map.
  const vacuuming = performance.now();
  await sql`VACUUM (ANALYZE) payment_search`.execute(searchDb());
  const vacuumSeconds = (performance.now() - vacuuming) / 1000;

  const loadBefore = loadavg()[0] ?? 0;
  const results: ReceiptsSizeResult[] = [];
  for (const organisation of organisations.slice(1)) {
    // The baseline in two halves, one either side of the batch: the machine's load drifts.
    const half = Math.ceil(organisation.supporters / 2);
    const before = await rawBaseline(half);
    const batch = await runBatch(organisation.uuid, organisation.supporters);
    const after = await rawBaseline(organisation.supporters - half);
    const rawSeconds = before.seconds + after.seconds;
    const raw = {
      transactions: before.transactions + after.transactions,
      items: before.items + after.items,
      seconds: rawSeconds,
      receipts_per_s: organisation.supporters / rawSeconds,
    };
    const gifts = await giftsOnly(organisation.uuid);
    if (gifts.rows !== organisation.gifts) {
      throw new Error(`gifts query: ${gifts.rows} gifts, expected ${organisation.gifts}`);
    }
    const result: ReceiptsSizeResult = {
      supporters: organisation.supporters,
      payments: organisation.payments,
      gifts: organisation.gifts,
      batch,
      gifts_query: { seconds: gifts.seconds, pages: gifts.pages, share_of_batch: gifts.seconds / batch.seconds },
      raw,
      ratio: batch.receipts_per_s / raw.receipts_per_s,
    };
    results.push(result);
    // Progress on stderr: the answer goes over IPC.
    console.error(
      `receipts bench: ${organisation.supporters} supporters, ${batch.receipts_per_s.toFixed(0)} receipts/s (raw ${raw.receipts_per_s.toFixed(0)}), heap max ${batch.heap.max_after_page_mib} MiB`,
    );
  }
  const first = results[0];
  const last = results[results.length - 1];
  return {
    sizes: options.sizes,
    seed_seconds: seedSeconds,
    vacuum_seconds: vacuumSeconds,
    gifts_query_without_statistics: {
      supporters: largest.supporters,
      seconds: unanalysed.seconds,
      pages: unanalysed.pages,
    },
    warm_supporters: options.warmSupporters,
    supporters_per_page: SUPPORTERS_PER_PAGE,
    issue_chunk: ISSUE_CHUNK,
    load_average: { before: loadBefore, after: loadavg()[0] ?? 0 },
    total_seconds: (performance.now() - benchStarted) / 1000,
    results,
    heap_growth: first && last ? last.batch.heap.max_after_page_mib / first.batch.heap.max_after_page_mib : 0,
  };
}

// This process: the bench process forked, its answer over IPC.

export function benchReceipts(options: ReceiptsBenchOptions): Promise<ReceiptsBenchResult> {
  return new Promise((done, fail) => {
    const child = fork(import.meta.filename, [], {
      execArgv: ['--import', 'tsx', '--expose-gc'],
      env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'ERROR', [TASK_ENV]: JSON.stringify(options) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let answer: { ok: true; value: ReceiptsBenchResult } | { ok: false; error: string } | undefined;
    // Bounded: 20 minutes for the whole run.
    const timeout = setTimeout(() => child.kill('SIGKILL'), 1_200_000);
    child.on('message', (message) => {
      answer = message as typeof answer;
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timeout);
      if (answer?.ok) done(answer.value);
      else fail(new Error(`receipts bench: ${answer?.error ?? `the process exited (${code ?? signal})`}`));
    });
  });
}

export function receiptsSummary(b: ReceiptsBenchResult): string[] {
  const n = (v: number) => v.toFixed(0);
  const pct = (v: number) => (v * 100).toFixed(0);
  const rows = b.results.map((r) => {
    const tx = r.batch.calls.TransactWriteItems;
    const get = r.batch.calls.GetItem;
    const dynamoMs = Object.values(r.batch.calls).reduce((sum, c) => sum + c.ms, 0);
    return [
      `${String(r.supporters).padStart(7)} ${String(r.batch.pages).padStart(5)} ${r.batch.seconds.toFixed(1).padStart(7)} s ${n(r.batch.receipts_per_s).padStart(9)} ${n(r.raw.receipts_per_s).padStart(9)} ${`${pct(r.ratio)}%`.padStart(6)}   ${String(r.batch.heap.before_mib).padStart(6)} ${String(r.batch.heap.first_page_mib).padStart(6)} ${String(r.batch.heap.last_page_mib).padStart(6)} ${String(r.batch.heap.max_after_page_mib).padStart(6)} ${String(r.batch.heap.peak_sampled_mib).padStart(7)}`,
      `${''.padStart(7)} time: TransactWrite ${pct((tx?.ms ?? 0) / 1000 / r.batch.seconds)}% (${tx?.calls ?? 0} calls, ${((tx?.ms ?? 0) / Math.max(1, tx?.calls ?? 1)).toFixed(1)} ms each), GetItem ${pct((get?.ms ?? 0) / 1000 / r.batch.seconds)}% (${get?.calls ?? 0}), all DynamoDB ${pct(dynamoMs / 1000 / r.batch.seconds)}%, gifts query alone ${pct(r.gifts_query.share_of_batch)}% (${r.gifts_query.seconds.toFixed(1)} s); CPU ${pct(r.batch.cpu_share)}% of the span; raw: ${r.raw.transactions} transactions, ${r.raw.items} items, ${r.raw.seconds.toFixed(1)} s (${((r.raw.seconds * 1000) / r.raw.transactions).toFixed(1)} ms each)`,
    ];
  });
  return [
    `\nReceipt batches (runBatchPage page after page, ${b.supporters_per_page} supporters a page, ${b.issue_chunk} receipts a transaction), vs raw TransactWriteItems of the same items, one at a time; seeded in ${b.seed_seconds.toFixed(0)} s; load average ${b.load_average.before.toFixed(1)} before, ${b.load_average.after.toFixed(1)} after:`,
    'supporters pages   batch   receipts/s  raw/s  batch/raw   heap MiB: before first  last  max-after-page peak(sampled)',
    ...rows.flat(),
    `gifts query alone at ${b.gifts_query_without_statistics.supporters} before VACUUM (ANALYZE) (no planner statistics): ${b.gifts_query_without_statistics.seconds.toFixed(1)} s over ${b.gifts_query_without_statistics.pages} pages (VACUUM took ${b.vacuum_seconds.toFixed(1)} s)`,
    `heap: max after a page at ${b.results[b.results.length - 1]?.supporters} = ${b.heap_growth.toFixed(2)}x that at ${b.results[0]?.supporters} (goal <= 1.5x); whole bench ${b.total_seconds.toFixed(0)} s`,
  ];
}

const taskJson = process.env[TASK_ENV];
if (taskJson && process.send) {
  try {
    const value = await runInProcess(JSON.parse(taskJson) as ReceiptsBenchOptions);
    process.send({ ok: true, value }, () => process.exit(0));
  } catch (error) {
    process.send({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }, () =>
      process.exit(1),
    );
  }
}
