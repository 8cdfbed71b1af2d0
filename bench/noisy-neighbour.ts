import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfSignedCertificate } from '@svc/outbound/testing/certificates';
import { startReceiver, startSilentServer } from '@svc/outbound/testing/receiver';
import { type BenchService, startService, tokenFor } from './service';

/**
 * Issue 44, point 3: one organisation's dead webhook endpoints must not slow another's deliveries.
 * One service as `pnpm start` runs it (its own process, its 500 ms timers driving the pipeline),
 * with two organisations of the demo seed:
 *  - B (Other Charity) has one endpoint at an HTTPS receiver in this process that answers 200 at
 *    once; its delivery latency is (arrival at the receiver) − (its payment's POST response);
 *  - A (Demo Foundation) gets, in the second phase only, 20 endpoints at a TCP server on 127.0.0.1
 *    that accepts and never answers (no TLS handshake), each subscribed to the same event.
 * Each phase makes the same interleaved trickle of payments (one of A's, then one of B's, ~200 ms
 * apart), so the two phases differ only by A's 20 dead endpoints. Figures: B's latency p50/p99
 * without and with them, and the ratio of the p99s (goal <= 2). Bounded: `payments` of B's per
 * phase, each phase's wait for arrivals capped; undelivered payments are reported, not waited for.
 */
const ORG_A = '6f1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f60';
const ACCOUNT_A = '9c405f6d-7e8b-4c93-9da4-ce5f60718293';
const ORG_B = '7a2e3d4b-5c6f-4a71-9b82-ac3d4e5f6071';
const ACCOUNT_B = 'ad516a7e-8f9c-4da4-aeb5-df60718293a4';
const EVENT = 'svc.payments.payment.succeeded';
const DEAD_ENDPOINTS = 20;

export interface NoisyNeighbourOptions {
  /** B's payments (and as many of A's) per phase. */
  payments: number;
  /** Longest wait for a phase's deliveries after its last payment, in seconds. */
  waitSeconds: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

function call(url: string, method: string, path: string, token: string, body: unknown) {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise<{ status: number; json: Record<string, unknown> }>((resolve, reject) => {
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
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

async function ok(url: string, token: string, method: string, path: string, body: unknown, status: number) {
  const response = await call(url, method, path, token, body);
  if (response.status !== status) {
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(response.json).slice(0, 300)}`);
  }
  return response.json;
}

/** An endpoint of `organisation` at `target`, subscribed to the payment event. */
async function hook(url: string, token: string, organisation: string, target: string, alias: string) {
  const endpoint = await ok(
    url,
    token,
    'POST',
    '/webhooks',
    { organisation_uuid: organisation, endpoint: target, alias },
    201,
  );
  await ok(
    url,
    token,
    'POST',
    '/event-subscriptions',
    {
      organisation_uuid: organisation,
      action_configuration_uuid: endpoint.uuid,
      action_type: 'webhook',
      event_name: EVENT,
    },
    201,
  );
}

async function pay(url: string, token: string, account: string) {
  const body = {
    account_uuid: account,
    payment_method: 'card',
    profile: 'card',
    amount: { value: '2500', currency: 'CHF' },
    payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
  };
  const payment = await ok(url, token, 'POST', '/payments', body, 201);
  if (payment.status !== 'succeeded') throw new Error(`payment ${payment.uuid} is ${payment.status}, not succeeded`);
  return { uuid: String(payment.uuid), respondedAt: performance.now() };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

interface Phase {
  payments: number;
  delivered: number;
  /** B's event-to-delivery latency, ms (undelivered payments are left out and counted in `undelivered`). */
  latency_ms: { p50: number; p99: number; max: number };
  undelivered: number;
  /** Connections A's dead endpoints' server accepted during the phase. */
  dead_connections: number;
}

async function phase(
  service: BenchService,
  tokens: { a: string; b: string },
  arrivals: Map<string, number>,
  dead: { connections(): number },
  options: NoisyNeighbourOptions,
): Promise<Phase> {
  const connectionsBefore = dead.connections();
  const paid: Array<{ uuid: string; respondedAt: number }> = [];
  for (let i = 0; i < options.payments; i++) {
    await pay(service.url, tokens.a, ACCOUNT_A);
    await sleep(100);
    paid.push(await pay(service.url, tokens.b, ACCOUNT_B));
    await sleep(100);
  }
  const deadline = performance.now() + options.waitSeconds * 1000;
  while (paid.some((p) => !arrivals.has(p.uuid)) && performance.now() < deadline) await sleep(50);
  const latencies = paid
    .flatMap((p) => {
      const at = arrivals.get(p.uuid);
      return at === undefined ? [] : [at - p.respondedAt];
    })
    .sort((x, y) => x - y);
  return {
    payments: paid.length,
    delivered: latencies.length,
    latency_ms: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? Number.NaN },
    undelivered: paid.length - latencies.length,
    dead_connections: dead.connections() - connectionsBefore,
  };
}

export async function benchNoisyNeighbour(options: NoisyNeighbourOptions) {
  const certificate = selfSignedCertificate('127.0.0.1');
  const directory = mkdtempSync(join(tmpdir(), 'bench-noisy-'));
  const caFile = join(directory, 'receiver-ca.pem');
  writeFileSync(caFile, certificate.cert);
  const loadBefore = loadavg()[0] ?? 0;
  // B's deliveries by payment, first arrival only.
  const arrivals = new Map<string, number>();
  const receiver = await startReceiver((received, response) => {
    const at = performance.now();
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('ok');
    try {
      const payment = (JSON.parse(received.body) as { event?: { object_uuid?: string } }).event?.object_uuid;
      if (payment !== undefined && !arrivals.has(payment)) arrivals.set(payment, at);
    } catch {
      // not a delivery
    }
  }, certificate);
  const trim = setInterval(() => receiver.requests.splice(0), 1000);
  const silent = await startSilentServer();
  const dead = { connections: () => silent.connections };
  // Node reads NODE_EXTRA_CA_CERTS at start-up only: the service process gets it from its start.
  const service = await startService({ NODE_EXTRA_CA_CERTS: caFile });
  try {
    const tokens = {
      a: await tokenFor(service.url, 'demo-client', 'demo-secret-change-me'),
      b: await tokenFor(service.url, 'other-client', 'other-secret-change-me'),
    };
    await hook(service.url, tokens.b, ORG_B, `https://127.0.0.1:${receiver.port}/hooks/b`, 'b');
    // Warm-up (JIT on both sides, the pipeline's clients), not measured.
    await phase(service, tokens, arrivals, dead, { payments: 5, waitSeconds: 30 });
    const quiet = await phase(service, tokens, arrivals, dead, options);
    for (let i = 0; i < DEAD_ENDPOINTS; i++) {
      await hook(service.url, tokens.a, ORG_A, `https://127.0.0.1:${silent.port}/hooks/a${i}`, `dead-${i}`);
    }
    const noisy = await phase(service, tokens, arrivals, dead, options);
    return {
      dead_endpoints: DEAD_ENDPOINTS,
      without: quiet,
      with: noisy,
      ratio_p99: noisy.latency_ms.p99 / quiet.latency_ms.p99,
      ratio_p50: noisy.latency_ms.p50 / quiet.latency_ms.p50,
      goal_ratio_p99: 2,
      load_average: [loadBefore, loadavg()[0] ?? 0],
    };
  } finally {
    clearInterval(trim);
    service.stop();
    await service.exited;
    await receiver.close();
    await silent.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

export type NoisyNeighbourBench = Awaited<ReturnType<typeof benchNoisyNeighbour>>;

export function noisyNeighbourSummary(b: NoisyNeighbourBench): string[] {
  const row = (label: string, p: Phase) =>
    `${label.padEnd(34)} p50 ${p.latency_ms.p50.toFixed(0)} ms  p99 ${p.latency_ms.p99.toFixed(0)} ms  max ${p.latency_ms.max.toFixed(0)} ms  (${p.delivered}/${p.payments} delivered; ${p.dead_connections} connections to the dead server)`;
  return [
    `\nNoisy neighbour: organisation B's ${EVENT} latency (payment response → delivery), A's payments interleaved:`,
    row('without A endpoints', b.without),
    row(`with ${b.dead_endpoints} dead endpoints of A`, b.with),
    `p99 with / without = ${b.ratio_p99.toFixed(2)}x (goal <= ${b.goal_ratio_p99}x); p50 ${b.ratio_p50.toFixed(2)}x; load average ${b.load_average.map((n) => n.toFixed(2)).join(' → ')} on 2 cores`,
  ];
}
