import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_SEED } from '@svc/seed';
import { adyenCard, startAdyenStandIn } from '../test/support/adyen-stand-in';
import { httpPostJson } from './load';
import { startService, tokenFor } from './service';

/**
 * Fail-over under an outage: new card payments on a routed profile (Adyen first, the simulated
 * provider second) through the whole service, first with both up, then with Adyen answering
 * every call with a timeout (its stand-in holds each request and never answers). Figures: the
 * share of payments that succeed, once the circuit has opened and overall, and the latency
 * (p50, p99), beside the same figures with both up in the same run. Adyen's call timeout is
 * BENCH_ADYEN_TIMEOUT_MS (default 3 s; deployed it is 18 s): it is what each payment caught in
 * the outage before the circuit opens, and each half-open probe, waits.
 */
const ACCOUNT = '9c405f6d-7e8b-4c93-9da4-ce5f60718293';
const CLIENT = { id: 'demo-client', secret: 'demo-secret-change-me' };

interface Outcome {
  at: number;
  ms: number;
  status: number;
  paymentStatus?: string;
  provider?: string;
  skipped: boolean;
}

export interface PhaseResult {
  payments: number;
  seconds: number;
  succeeded: number;
  p50ms: number;
  p99ms: number;
}

export interface FailoverResult {
  timeoutMs: number;
  bothUp: PhaseResult;
  outage: PhaseResult & {
    /** Seconds into the outage when the first payment skipped Adyen (its circuit open). */
    openedAfterSeconds: number | undefined;
    /** Payments caught before the circuit opened, and probes: pending at Adyen (resolved there later). */
    unknownAtAdyen: number;
    afterOpen: PhaseResult;
  };
}

function seedFile(): string {
  const seed = structuredClone(DEMO_SEED) as {
    organisations: Array<{ accounts: Array<{ uuid: string; payment_method_profiles?: unknown[] }> }>;
  };
  for (const organisation of seed.organisations)
    for (const account of organisation.accounts)
      if (account.uuid === ACCOUNT)
        account.payment_method_profiles = [
          {
            name: 'card-route',
            payment_method: 'card',
            raw_card_data: true,
            route: [{ provider: 'adyen', merchant_account: 'CharityECOM' }, { provider: 'simulated' }],
          },
        ];
  const file = join(mkdtempSync(join(tmpdir(), 'svc-failover-bench-')), 'seed.json');
  writeFileSync(file, JSON.stringify(seed));
  return file;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);

function summarise(outcomes: Outcome[], seconds: number): PhaseResult {
  const latencies = outcomes.map((o) => o.ms).sort((a, b) => a - b);
  return {
    payments: outcomes.length,
    seconds,
    succeeded: outcomes.filter((o) => o.paymentStatus === 'succeeded').length,
    p50ms: percentile(latencies, 50),
    p99ms: percentile(latencies, 99),
  };
}

async function drive(pay: () => Promise<Outcome>, seconds: number, concurrency: number): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline && outcomes.length < 200_000) outcomes.push(await pay());
    }),
  );
  return outcomes;
}

export async function benchFailover(options: {
  seconds: number;
  outageSeconds: number;
  concurrency: number;
  timeoutMs: number;
}): Promise<FailoverResult> {
  const adyen = await startAdyenStandIn();
  const service = await startService({
    SVC_SEED_FILE: seedFile(),
    SVC_ADYEN_API_BASE: adyen.url,
    SVC_ADYEN_API_KEY: adyen.apiKey,
    SVC_ADYEN_HMAC_KEY: adyen.hmacKey,
    SVC_ADYEN_TIMEOUT_MS: String(options.timeoutMs),
    SVC_BACKGROUND: 'settle',
  });
  try {
    const token = await tokenFor(service.url, CLIENT.id, CLIENT.secret);
    const headers = { authorization: `Bearer ${token}` };
    let phaseStart = performance.now();
    const pay = async (): Promise<Outcome> => {
      const t = performance.now();
      const response = await httpPostJson(`${service.url}/payments`, headers, {
        account_uuid: ACCOUNT,
        payment_method: 'card',
        profile: 'card-route',
        amount: { value: '2500', currency: 'CHF' },
        payment_information: adyenCard('4111111145551142'),
        test_mode: true,
      });
      const json = response.json as
        | { status?: string; provider?: string; providers_tried?: Array<{ reason: string }> }
        | undefined;
      return {
        at: (t - phaseStart) / 1000,
        ms: performance.now() - t,
        status: response.status,
        ...(json?.status ? { paymentStatus: json.status } : {}),
        ...(json?.provider ? { provider: json.provider } : {}),
        skipped: json?.providers_tried?.some((tried) => tried.reason === 'circuit_open') ?? false,
      };
    };
    // Warm-up, then both up.
    await drive(pay, 2, options.concurrency);
    phaseStart = performance.now();
    const up = await drive(pay, options.seconds, options.concurrency);
    // Adyen now holds every call and never answers.
    adyen.fault('timeout');
    phaseStart = performance.now();
    const down = await drive(pay, options.outageSeconds, options.concurrency);
    const opened = down.filter((o) => o.skipped).sort((a, b) => a.at - b.at)[0]?.at;
    const afterOpen = opened === undefined ? [] : down.filter((o) => o.at >= opened);
    return {
      timeoutMs: options.timeoutMs,
      bothUp: summarise(up, options.seconds),
      outage: {
        ...summarise(down, options.outageSeconds),
        openedAfterSeconds: opened,
        unknownAtAdyen: down.filter((o) => o.provider === 'adyen' && o.paymentStatus === 'pending').length,
        afterOpen: summarise(afterOpen, options.outageSeconds - (opened ?? 0)),
      },
    };
  } finally {
    service.stop();
    await service.exited;
    await adyen.close();
  }
}

export function failoverSummary(r: FailoverResult): string[] {
  const pct = (p: PhaseResult) => (p.payments === 0 ? 'n/a' : `${((p.succeeded / p.payments) * 100).toFixed(2)}%`);
  const row = (label: string, p: PhaseResult) =>
    `${label.padEnd(34)} ${String(p.payments).padStart(6)} payments  succeeded ${pct(p).padStart(7)}  p50 ${p.p50ms.toFixed(1)} ms  p99 ${p.p99ms.toFixed(1)} ms`;
  return [
    `\nNew card payments on a route (Adyen, then simulated); Adyen's call timeout ${r.timeoutMs} ms:`,
    row('both up', r.bothUp),
    row('Adyen timing out (all)', r.outage),
    row('  after its circuit opened', r.outage.afterOpen),
    `circuit opened ${r.outage.openedAfterSeconds?.toFixed(1) ?? 'never'} s into the outage; ${r.outage.unknownAtAdyen} payments caught at Adyen before it opened or as probes (pending, resolved at Adyen)`,
    `share succeeding after the circuit opened: ${pct(r.outage.afterOpen)} (goal >= 99%)`,
  ];
}
