import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { postJson } from '@svc/outbound';
import { selfSignedCertificate } from '@svc/outbound/testing/certificates';
import { type Receiver, startReceiver } from '@svc/outbound/testing/receiver';
import { runLoad } from './load';
import { type BenchService, startService, tokenFor } from './service';

/**
 * The event pipeline's figures, beside a baseline from the same run. The service runs as
 * `pnpm start` does (its own process, in memory, its 500 ms timers driving the pipeline) with
 * NODE_EXTRA_CA_CERTS naming a certificate made for this run; an HTTPS receiver in this process
 * answers 200 at once and notes when each delivery arrived.
 *  1. throughput: N card payments through the API (16 at a time) → N `payment.succeeded`
 *     deliveries; deliveries/s from the first payment request to the last delivery, and
 *     event-to-delivery latency (arrival − the payment's POST response) for each;
 *  2. the same with `POST /_local/settle` called in a loop beside the timers;
 *  3. a trickle: one payment at a time, timers only and with settle after each;
 *  4. the pipeline alone: on a second service whose background work runs only on settle, N
 *     payments are made, then one settle drains them; five such rounds (after four to warm its
 *     new DynamoDB Local), each followed by the bare loop at 10 in flight, give the median ratio;
 *  5. the baseline: a bare loop of signed POSTs (`postJson`, a new TLS connection each, the same
 *     body and signature headers the worker sends) to the same receiver, 10 and 16 in flight.
 * Every run must deliver exactly one event per payment, each once; anything else fails the bench.
 */
const ORGANISATION = '6f1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f60';
const ACCOUNT = '9c405f6d-7e8b-4c93-9da4-ce5f60718293';
const EVENT = 'svc.payments.payment.succeeded';
const HOOK_PATH = '/hooks/bench';
const BARE_PATH = '/bare';
/** The delivery queue's poller hands the worker ten messages at a time, one batch after another. */
const WORKER_IN_FLIGHT = 10;
/** Rounds of the pipeline alone, each followed by the bare loop (the median ratio is reported). */
const ALONE_ROUNDS = 5;
/**
 * Backlogs drained before those rounds. With two, the rounds still rose from first to last in
 * every run (43-45% to 53-59%): DynamoDB Local's JVM was still compiling (a conditional PutItem
 * cost it 4.0, then 1.3, then 0.8 ms over three runs of 3 000); four reach its steady state.
 */
const ALONE_WARM_UP = 4;

const paymentBody = {
  account_uuid: ACCOUNT,
  payment_method: 'card',
  profile: 'card',
  amount: { value: '2500', currency: 'CHF' },
  payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
};

export interface WebhookBenchOptions {
  /** Payments in each throughput run. */
  payments: number;
  /** POST /payments in flight during the throughput runs. */
  concurrency: number;
  /** Payments in each trickle run (one at a time). */
  trickle: number;
  /** Seconds of each bare-loop measurement. */
  bareSeconds: number;
}

// The receiver: one record per pipeline delivery, keyed by the payment it announces.

interface Arrival {
  eventUuid: string;
  paymentUuid: string;
  attempt: string;
  at: number;
}

interface Sink {
  arrivals: Arrival[];
  /** The first delivered request as the worker sent it, the bare loop's template. */
  sample?: { body: string; headers: Record<string, string> };
  bare: number;
  strangers: number;
}

function receive(sink: Sink) {
  return (received: Receiver['requests'][number], response: import('node:http').ServerResponse) => {
    const at = performance.now();
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('ok');
    if (received.url === BARE_PATH) {
      sink.bare += 1;
      return;
    }
    let paymentUuid = '';
    try {
      paymentUuid = String((JSON.parse(received.body) as { event?: { object_uuid?: string } }).event?.object_uuid);
    } catch {
      sink.strangers += 1;
      return;
    }
    if (received.url !== HOOK_PATH) {
      sink.strangers += 1;
      return;
    }
    sink.arrivals.push({
      eventUuid: String(received.headers['x-svc-event-uuid']),
      paymentUuid,
      attempt: String(received.headers['x-svc-delivery-attempt']),
      at,
    });
    sink.sample ??= {
      body: received.body,
      headers: Object.fromEntries(
        Object.entries(received.headers).map(([name, value]) => [name, String(value)] as [string, string]),
      ),
    };
  };
}

// The API, over kept-alive connections.

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function call(
  url: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
  timeoutMs = 30_000,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const payload = Buffer.from(body === undefined ? '' : JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': payload.length,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({ status: res.statusCode ?? 0, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
          } catch (error) {
            reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 200)} (${String(error)})`));
          }
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer in ${timeoutMs / 1000} s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

async function ok(
  url: string,
  token: string,
  method: string,
  path: string,
  body: unknown,
  status: number,
  timeoutMs?: number,
): Promise<Record<string, unknown>> {
  const response = await call(url, method, path, token, body, timeoutMs);
  if (response.status !== status) {
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(response.json).slice(0, 300)}`);
  }
  return response.json;
}

interface Paid {
  uuid: string;
  requestedAt: number;
  respondedAt: number;
}

/** One card payment; it must have succeeded (its event is the one delivered). */
async function pay(url: string, token: string): Promise<Paid> {
  const requestedAt = performance.now();
  const payment = await ok(url, token, 'POST', '/payments', paymentBody, 201);
  const respondedAt = performance.now();
  if (payment.status !== 'succeeded') throw new Error(`payment ${payment.uuid} is ${payment.status}, not succeeded`);
  return { uuid: String(payment.uuid), requestedAt, respondedAt };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/**
 * Waits (bounded) until every payment's delivery arrived (counting from arrival `from`, the
 * run's first), then checks: one delivery per payment,
 * first attempts only, every event uuid once, nothing else arrived. Returns the arrivals in order.
 */
async function collect(
  sink: Sink,
  from: number,
  paid: readonly Paid[],
  label: string,
  timeoutMs: number,
  diagnose: (payments: string[]) => Promise<string>,
) {
  const wanted = new Set(paid.map((p) => p.uuid));
  const deadline = performance.now() + timeoutMs;
  const seen = () => {
    const found = new Set<string>();
    for (let i = from; i < sink.arrivals.length; i++) {
      const payment = sink.arrivals[i]?.paymentUuid ?? '';
      if (wanted.has(payment)) found.add(payment);
    }
    return found.size;
  };
  // A settled pipeline may still have a duplicate in flight: wait a moment past the last one.
  while (seen() < wanted.size && performance.now() < deadline) await sleep(20);
  await sleep(300);
  const arrivals = sink.arrivals.slice(from);
  const byPayment = new Map<string, Arrival[]>();
  const byEvent = new Map<string, number>();
  for (const a of arrivals) {
    byPayment.set(a.paymentUuid, [...(byPayment.get(a.paymentUuid) ?? []), a]);
    byEvent.set(a.eventUuid, (byEvent.get(a.eventUuid) ?? 0) + 1);
  }
  const missing = [...wanted].filter((uuid) => !byPayment.has(uuid)).length;
  const strangers = [...byPayment.keys()].filter((uuid) => !wanted.has(uuid)).length;
  const twice = [...byEvent.values()].filter((n) => n > 1).length;
  const manyEvents = [...byPayment.values()].filter((as) => new Set(as.map((a) => a.eventUuid)).size > 1).length;
  const retries = arrivals.filter((a) => a.attempt !== '1').length;
  if (missing || strangers || twice || manyEvents || retries || byEvent.size !== wanted.size || sink.strangers) {
    const undelivered = [...wanted].filter((uuid) => !byPayment.has(uuid));
    throw new Error(
      `webhooks bench, ${label}: ${wanted.size} payments, ${byEvent.size} distinct events delivered in ${arrivals.length} requests: ${missing} payments undelivered after ${timeoutMs / 1000} s, ${strangers} deliveries of other payments, ${twice} events delivered more than once, ${manyEvents} payments with several events, ${retries} retries, ${sink.strangers} requests on other paths${undelivered.length > 0 ? `\n${await diagnose(undelivered.slice(0, 10))}` : ''}`,
    );
  }
  return arrivals;
}

/** For a failure message: the delivery items of undelivered payments, read from the service's table. */
function diagnoser(dynamo: string) {
  return async (payments: string[]): Promise<string> => {
    const client = new DynamoDBClient({
      endpoint: dynamo,
      region: 'eu-central-2',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      const found = new Map<string, string[]>();
      let cursor: Record<string, import('@aws-sdk/client-dynamodb').AttributeValue> | undefined;
      let pages = 0;
      do {
        const out = await client.send(
          new ScanCommand({
            TableName: 'svc-local',
            ConsistentRead: true,
            FilterExpression: 'entity = :delivery',
            ExpressionAttributeValues: { ':delivery': { S: 'delivery' } },
            ExclusiveStartKey: cursor,
          }),
        );
        for (const raw of out.Items ?? []) {
          const item = unmarshall(raw) as Record<string, unknown> & { event_json?: string };
          const payment = String((JSON.parse(item.event_json ?? '{}') as { object_uuid?: string }).object_uuid ?? '');
          if (!payments.includes(payment)) continue;
          const { status, attempts, lease_until, next_attempt_at, version, created, updated } = item;
          const state = JSON.stringify({ status, attempts, lease_until, next_attempt_at, version, created, updated });
          found.set(payment, [...(found.get(payment) ?? []), state]);
        }
        cursor = out.LastEvaluatedKey;
        pages += 1;
      } while (cursor && pages < 1000);
      return payments
        .map(
          (uuid) =>
            `  payment ${uuid}: ${found.get(uuid)?.join(' ') ?? 'no delivery item (never claimed: fan-out did not see its event, or its message is still queued)'}`,
        )
        .join('\n');
    } catch (error) {
      return `  (could not read the deliveries: ${String(error)})`;
    } finally {
      client.destroy();
    }
  };
}

// Where the CPU goes (Linux /proc; empty elsewhere): the service's Node process, DynamoDB Local's
// JVM (its child), this process (payments, receiver, bare loop) and everything else on the machine.

const TICKS_PER_SECOND = 100;

function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

function descendantsOf(pid: number): number[] {
  const out: number[] = [];
  const visit = (parent: number, depth: number) => {
    if (depth > 5) return;
    try {
      for (const task of readdirSync(`/proc/${parent}/task`)) {
        const children = readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8').trim();
        for (const child of children ? children.split(' ').map(Number) : []) {
          out.push(child);
          visit(child, depth + 1);
        }
      }
    } catch {
      // not Linux, or the process is gone
    }
  };
  visit(pid, 0);
  return out;
}

function machineBusySeconds(): number {
  try {
    const [, ...ticks] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).map(Number);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    return (ticks.reduce((a, b) => a + b, 0) - idle) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

interface CpuSample {
  service: number;
  dynamodbLocal: number;
  bench: number;
  machine: number;
  at: number;
}

function cpuSample(service: BenchService): CpuSample {
  const pid = service.child.pid ?? 0;
  const java = descendantsOf(pid).filter((child) => {
    try {
      return readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('DynamoDBLocal');
    } catch {
      return false;
    }
  });
  const usage = process.cpuUsage();
  return {
    service: processCpuSeconds(pid),
    dynamodbLocal: java.reduce((sum, child) => sum + processCpuSeconds(child), 0),
    bench: (usage.user + usage.system) / 1e6,
    machine: machineBusySeconds(),
    at: performance.now(),
  };
}

/** CPU seconds each used between two samples, and the rest of the machine's. */
function cpuBetween(a: CpuSample, b: CpuSample) {
  const round = (n: number) => Math.round(n * 100) / 100;
  const service = b.service - a.service;
  const dynamodbLocal = b.dynamodbLocal - a.dynamodbLocal;
  const bench = b.bench - a.bench;
  return {
    wall_s: round((b.at - a.at) / 1000),
    service_s: round(service),
    dynamodb_local_s: round(dynamodbLocal),
    bench_s: round(bench),
    other_processes_s: round(Math.max(0, b.machine - a.machine - service - dynamodbLocal - bench)),
  };
}

interface Figures {
  payments: number;
  seconds: number;
  deliveries_per_s: number;
  /** Payments created per second while the pipeline ran beside them. */
  payments_per_s: number;
  /** From the first delivery to the last. */
  delivery_phase_per_s: number;
  /** From the last POST /payments answer to the last delivery. */
  tail_ms: number;
  latency_ms: { p50: number; p99: number; max: number };
  settles?: number;
  cpu?: ReturnType<typeof cpuBetween>;
}

function figuresOf(paid: readonly Paid[], arrivals: readonly Arrival[], started: number): Figures {
  const arrivalOf = new Map(arrivals.map((a) => [a.paymentUuid, a.at]));
  const latencies = paid.map((p) => (arrivalOf.get(p.uuid) ?? Number.NaN) - p.respondedAt).sort((a, b) => a - b);
  const first = Math.min(...arrivals.map((a) => a.at));
  const last = Math.max(...arrivals.map((a) => a.at));
  const lastResponse = Math.max(...paid.map((p) => p.respondedAt));
  const seconds = (last - started) / 1000;
  return {
    payments: paid.length,
    seconds,
    deliveries_per_s: paid.length / seconds,
    payments_per_s: paid.length / ((lastResponse - started) / 1000),
    delivery_phase_per_s: last > first ? (paid.length - 1) / ((last - first) / 1000) : 0,
    tail_ms: last - lastResponse,
    latency_ms: {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies[latencies.length - 1] ?? 0,
    },
  };
}

/** One settle: runs every background task until nothing moves, which under a backlog takes long. */
const SETTLE_TIMEOUT_MS = 180_000;
const settleOnce = (url: string, token: string) =>
  ok(url, token, 'POST', '/_local/settle', undefined, 200, SETTLE_TIMEOUT_MS);

/** A settle loop beside the timers until `stop` is set; the calls made, or the error that ended it. */
async function settleLoop(url: string, token: string, control: { stop: boolean }) {
  let calls = 0;
  const deadline = performance.now() + SETTLE_TIMEOUT_MS;
  try {
    while (!control.stop && performance.now() < deadline) {
      await settleOnce(url, token);
      calls += 1;
    }
    return { calls };
  } catch (error) {
    return { calls, error };
  }
}

/** N payments from `concurrency` loops; the pipeline runs on its timers (and settle, if asked). */
async function throughput(
  service: BenchService,
  token: string,
  sink: Sink,
  options: { payments: number; concurrency: number; settle: boolean },
): Promise<Figures> {
  const paid: Paid[] = [];
  const from = sink.arrivals.length;
  const control = { stop: false };
  const before = cpuSample(service);
  const started = performance.now();
  const settling = options.settle ? settleLoop(service.url, token, control) : Promise.resolve({ calls: 0 });
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (next < options.payments) {
          next += 1;
          paid.push(await pay(service.url, token));
        }
      }),
    );
    const label = `${options.payments} payments, ${options.settle ? 'timers and a settle loop' : 'timers only'}`;
    const arrivals = await collect(sink, from, paid, label, 30_000 + 100 * options.payments, diagnoser(service.dynamo));
    const after = cpuSample(service);
    control.stop = true;
    const settled = await settling;
    if ('error' in settled) throw new Error(`webhooks bench, ${label}: settle failed: ${String(settled.error)}`);
    const cpu = cpuBetween(before, after);
    return { ...figuresOf(paid, arrivals, started), ...(options.settle ? { settles: settled.calls } : {}), cpu };
  } finally {
    control.stop = true;
    await settling;
  }
}

/**
 * One payment at a time. Timers only: 100–300 ms apart (random, so arrivals sample every phase of
 * the 500 ms timers), without waiting for deliveries. With settle: settle until it arrived.
 */
async function trickle(service: BenchService, token: string, sink: Sink, count: number, settle: boolean) {
  const paid: Paid[] = [];
  const from = sink.arrivals.length;
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const payment = await pay(service.url, token);
    paid.push(payment);
    if (settle) {
      const deadline = performance.now() + 10_000;
      while (!sink.arrivals.some((a) => a.paymentUuid === payment.uuid) && performance.now() < deadline) {
        await settleOnce(service.url, token);
      }
    } else {
      await sleep(100 + Math.random() * 200);
    }
  }
  const label = `trickle of ${count}, ${settle ? 'settle' : 'timers only'}`;
  const arrivals = await collect(sink, from, paid, label, 30_000, diagnoser(service.dynamo));
  return figuresOf(paid, arrivals, started);
}

/**
 * The pipeline alone: N payments made while no background work runs (the service started with
 * SVC_BACKGROUND=settle), then one `POST /_local/settle` drains them: stream → bus → fan-out →
 * queue → worker → receiver. Deliveries/s from the settle call to the last arrival.
 */
async function backlog(
  service: BenchService,
  token: string,
  sink: Sink,
  options: { payments: number; concurrency: number },
) {
  const paid: Paid[] = [];
  const from = sink.arrivals.length;
  let next = 0;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (next < options.payments) {
        next += 1;
        paid.push(await pay(service.url, token));
      }
    }),
  );
  // Nothing may move before settle asks: otherwise this would not time the pipeline alone.
  if (sink.arrivals.length !== from) throw new Error('webhooks bench: a delivery arrived before settle was called');
  const before = cpuSample(service);
  const started = performance.now();
  await settleOnce(service.url, token);
  const label = `backlog of ${options.payments}, one settle`;
  const arrivals = await collect(sink, from, paid, label, 30_000 + 100 * options.payments, diagnoser(service.dynamo));
  const last = Math.max(...arrivals.map((a) => a.at));
  const after = cpuSample(service);
  const seconds = (last - started) / 1000;
  return { payments: paid.length, seconds, deliveries_per_s: paid.length / seconds, cpu: cpuBetween(before, after) };
}

/** Starts a service with the bench's receiver trusted (its own NODE_EXTRA_CA_CERTS), an endpoint and a subscription. */
async function serviceWithHook(caFile: string, receiverUrl: string, env: Record<string, string> = {}) {
  // Node reads NODE_EXTRA_CA_CERTS at start-up only: the service process gets it from its start.
  const service = await startService({ ...env, NODE_EXTRA_CA_CERTS: caFile });
  try {
    const token = await tokenFor(service.url, 'demo-client', 'demo-secret-change-me');
    const endpoint = await ok(
      service.url,
      token,
      'POST',
      '/webhooks',
      { organisation_uuid: ORGANISATION, endpoint: `${receiverUrl}${HOOK_PATH}`, alias: 'bench' },
      201,
    );
    await ok(
      service.url,
      token,
      'POST',
      '/event-subscriptions',
      {
        organisation_uuid: ORGANISATION,
        action_configuration_uuid: endpoint.uuid,
        action_type: 'webhook',
        event_name: EVENT,
      },
      201,
    );
    return { service, token, endpoint };
  } catch (error) {
    service.stop();
    throw error;
  }
}

/** The worker's request with fresh signatures, as `requestFor` builds it, to the bare path. */
function bareSender(receiverUrl: string, hmacKey: string, sample: NonNullable<Sink['sample']>, ca: string) {
  const hmac = (content: string) => createHmac('sha256', hmacKey).update(content).digest('hex');
  return async () => {
    const at = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'svc-webhooks/1',
      'x-svc-event-uuid': randomUUID(),
      'x-svc-delivery-attempt': '1',
      'x-hmac': hmac(sample.body),
      'x-svc-signature': `t=${at},v1=${hmac(`${at}.${sample.body}`)}`,
    };
    const result = await postJson(`${receiverUrl}${BARE_PATH}`, sample.body, headers, { allowPrivate: true, ca });
    return result.ok;
  };
}

export async function benchWebhooks(options: WebhookBenchOptions) {
  const certificate = selfSignedCertificate('127.0.0.1');
  const directory = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
  const caFile = join(directory, 'receiver-ca.pem');
  writeFileSync(caFile, certificate.cert);
  const sink: Sink = { arrivals: [], bare: 0, strangers: 0 };
  const loadBefore = loadavg()[0] ?? 0;
  const receiver = await startReceiver(receive(sink), certificate);
  // The receiver keeps every request it saw; the sink has what is needed.
  const trim = setInterval(() => receiver.requests.splice(0), 1000);
  const receiverUrl = `https://127.0.0.1:${receiver.port}`;
  const { service, token, endpoint } = await serviceWithHook(caFile, receiverUrl);
  try {
    // Warm-up: both sides' JIT, the pipeline's clients and the queue, by timers and by settle.
    await throughput(service, token, sink, { payments: 100, concurrency: options.concurrency, settle: false });
    await trickle(service, token, sink, 5, true);
    if (!sink.sample) throw new Error('webhooks bench: no delivery to copy for the bare loop');

    const timers = await throughput(service, token, sink, { ...options, settle: false });
    const settled = await throughput(service, token, sink, { ...options, settle: true });
    const trickleTimers = await trickle(service, token, sink, options.trickle, false);
    const trickleSettled = await trickle(service, token, sink, options.trickle, true);
    // The first service is gone (and its late work with it) before the second one starts.
    service.stop();
    await service.exited;

    // The pipeline alone, on a service whose background work runs only when settle asks, in turns
    // with the bare loop: drift on this shared machine (other tenants, the JVM's compiler) then
    // falls on both sides of each ratio, and the median round is the figure.
    const send = bareSender(receiverUrl, String(endpoint.hmac_key), sink.sample, certificate.cert);
    const quiet = await serviceWithHook(caFile, receiverUrl, { SVC_BACKGROUND: 'settle' });
    const rounds: Array<{ drained: Awaited<ReturnType<typeof backlog>>; bare_per_s: number; ratio: number }> = [];
    try {
      // A new service has a new DynamoDB Local, whose JVM compiles its hot paths over the first
      // several thousand writes: ALONE_WARM_UP backlogs of the measured size warm it (the first
      // service had the throughput runs for that), and two seconds warm the bare loop.
      for (let round = 0; round < ALONE_WARM_UP; round++) await backlog(quiet.service, quiet.token, sink, options);
      await runLoad(send, { seconds: 2, concurrency: WORKER_IN_FLIGHT });
      for (let round = 0; round < ALONE_ROUNDS; round++) {
        const drained = await backlog(quiet.service, quiet.token, sink, options);
        const bareRound = await runLoad(send, { seconds: options.bareSeconds, concurrency: WORKER_IN_FLIGHT });
        if (bareRound.errors > 0) throw new Error(`webhooks bench: bare loop: ${bareRound.errors} errors`);
        rounds.push({
          drained,
          bare_per_s: bareRound.perSecond,
          ratio: drained.deliveries_per_s / bareRound.perSecond,
        });
      }
    } finally {
      quiet.service.stop();
      await quiet.service.exited;
    }
    const median = [...rounds].sort((a, b) => a.ratio - b.ratio)[
      Math.floor(rounds.length / 2)
    ] as (typeof rounds)[number];

    const bare: Record<string, { result: Awaited<ReturnType<typeof runLoad>>; cpu: ReturnType<typeof cpuBetween> }> =
      {};
    for (const inFlight of [WORKER_IN_FLIGHT, options.concurrency]) {
      const before = cpuSample(service);
      const result = await runLoad(send, { seconds: options.bareSeconds, concurrency: inFlight, maxRequests: 100_000 });
      const cpu = cpuBetween(before, cpuSample(service));
      if (result.errors > 0) throw new Error(`webhooks bench: bare loop at ${inFlight}: ${result.errors} errors`);
      bare[String(inFlight)] = { result, cpu };
    }
    const bareWorker = (bare[String(WORKER_IN_FLIGHT)] as (typeof bare)[string]).result;
    return {
      receiver: `${receiverUrl} (TLS, self-signed P-256, IP:127.0.0.1)`,
      body_bytes: Buffer.byteLength(sink.sample.body),
      concurrency: options.concurrency,
      worker_in_flight: WORKER_IN_FLIGHT,
      throughput: { timers, with_settle_loop: settled },
      trickle: { timers: trickleTimers, with_settle: trickleSettled },
      /** The round with the median ratio; every round beside it. */
      backlog: median.drained,
      alone_rounds: rounds.map((r) => ({
        deliveries_per_s: r.drained.deliveries_per_s,
        bare_per_s: r.bare_per_s,
        ratio: r.ratio,
      })),
      bare: Object.fromEntries(
        Object.entries(bare).map(([inFlight, { result: r, cpu }]) => [
          inFlight,
          { requests: r.requests, per_s: r.perSecond, p50_ms: r.p50ms, p95_ms: r.p95ms, cpu },
        ]),
      ),
      ratio: timers.deliveries_per_s / bareWorker.perSecond,
      ratio_with_settle_loop: settled.deliveries_per_s / bareWorker.perSecond,
      /** The pipeline alone (events written before it runs) against the bare loop run right after it: the median round. */
      ratio_pipeline_alone: median.ratio,
      goal_ratio: 0.5,
      /** The machine's 1-minute load average before and after (2 cores): other work skews every figure. */
      load_average: [loadBefore, loadavg()[0] ?? 0],
    };
  } finally {
    clearInterval(trim);
    service.stop();
    await receiver.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

export type WebhookBench = Awaited<ReturnType<typeof benchWebhooks>>;

/** The compact summary `pnpm bench` prints. */
export function webhooksSummary(b: WebhookBench): string[] {
  const f = (n: number, digits = 1) => n.toFixed(digits);
  const row = (label: string, r: Figures) =>
    `${label.padEnd(26)} ${f(r.deliveries_per_s).padStart(6)} deliveries/s (${r.payments} in ${f(r.seconds, 2)} s; payments ${f(r.payments_per_s)}/s, deliveries alone ${f(r.delivery_phase_per_s)}/s, tail ${f(r.tail_ms, 0)} ms)   latency p50 ${f(r.latency_ms.p50, 0)} ms p99 ${f(r.latency_ms.p99, 0)} ms${r.settles === undefined ? '' : `   (${r.settles} settles)`}`;
  const trickleRow = (label: string, r: Figures) =>
    `${label.padEnd(26)} latency p50 ${f(r.latency_ms.p50, 0)} ms p99 ${f(r.latency_ms.p99, 0)} ms max ${f(r.latency_ms.max, 0)} ms (${r.payments} payments)`;
  const cpuRow = (label: string, r: Figures) => {
    const c = r.cpu;
    if (!c) return '';
    const per = (seconds: number) => `${f((seconds * 1000) / r.payments, 2)} ms`;
    return `${`  CPU, ${label}`.padEnd(26)} over ${f(c.wall_s)} s: service ${f(c.service_s)} s, DynamoDB Local ${f(c.dynamodb_local_s)} s, bench ${f(c.bench_s)} s, other processes ${f(c.other_processes_s)} s (per payment+delivery ${per(c.service_s)} / ${per(c.dynamodb_local_s)} / ${per(c.bench_s)})`;
  };
  const bareRows = Object.entries(b.bare).map(
    ([inFlight, r]) =>
      `${`bare signed POSTs, ${inFlight}`.padEnd(26)} ${f(r.per_s).padStart(6)} req/s   p50 ${f(r.p50_ms)} ms p95 ${f(r.p95_ms)} ms   (bench CPU ${f((r.cpu.bench_s * 1000) / r.requests, 2)} ms per request, both ends; other processes ${f(r.cpu.other_processes_s)} s)`,
  );
  const alone = b.backlog;
  const backlogRows = [
    `${'pipeline alone (backlog)'.padEnd(26)} ${f(alone.deliveries_per_s).padStart(6)} deliveries/s (median round: ${alone.payments} events written first, drained by one settle in ${f(alone.seconds, 2)} s)`,
    `${'  rounds, then bare at 10'.padEnd(26)} ${b.alone_rounds.map((r) => `${f(r.deliveries_per_s)}/s vs ${f(r.bare_per_s)}/s = ${(r.ratio * 100).toFixed(0)}%`).join(';  ')}`,
    `${'  CPU, pipeline alone'.padEnd(26)} service ${f(alone.cpu.service_s)} s, DynamoDB Local ${f(alone.cpu.dynamodb_local_s)} s, bench ${f(alone.cpu.bench_s)} s (per delivery ${f((alone.cpu.service_s * 1000) / alone.payments, 2)} / ${f((alone.cpu.dynamodb_local_s * 1000) / alone.payments, 2)} / ${f((alone.cpu.bench_s * 1000) / alone.payments, 2)} ms)`,
  ];
  return [
    `\nWebhooks: ${EVENT} from POST /payments to an HTTPS receiver, ${b.concurrency} payments in flight, body ${b.body_bytes} B:`,
    row('pipeline, timers (500 ms)', b.throughput.timers),
    row('pipeline, + settle loop', b.throughput.with_settle_loop),
    ...[b.throughput.timers, b.throughput.with_settle_loop].map((r, i) =>
      cpuRow(i === 0 ? 'timers' : '+ settle loop', r),
    ),
    ...backlogRows,
    trickleRow('one at a time, timers', b.trickle.timers),
    trickleRow('one at a time, settle', b.trickle.with_settle),
    ...bareRows,
    `load average (1 min) ${f(b.load_average[0] ?? 0, 2)} before, ${f(b.load_average[1] ?? 0, 2)} after, on 2 cores`,
    `pipeline / bare (${b.worker_in_flight} in flight) = ${(b.ratio_pipeline_alone * 100).toFixed(0)}% alone (median of ${b.alone_rounds.length} rounds); with the payments made meanwhile ${(b.ratio * 100).toFixed(0)}% timers, ${(b.ratio_with_settle_loop * 100).toFixed(0)}% with settle loop  (goal >= ${b.goal_ratio * 100}%)`,
  ];
}
