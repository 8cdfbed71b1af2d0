import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { benchBilling, billingSummary } from './billing';
import { benchFailover, failoverSummary } from './failover';
import { benchIdempotencyCrash, crashSummary } from './idempotency-crash';
import { measureInit } from './init-time';
import { type LoadResult, runLoad } from './load';
import { benchNoisyNeighbour, noisyNeighbourSummary } from './noisy-neighbour';
import { benchCapacity, benchInitialiseThroughput, benchSearch } from './payments';
import { benchPortal, PORTAL_BENCH_ENV } from './portal';
import { benchReceipts, receiptsSummary } from './receipts';
import { benchReconciliation, reconciliationSummary } from './reconciliation';
import { benchSearchEngine, searchEngineSummary } from './search';
import { ROOT, startService, tokenFor } from './service';
import { benchStripe, stripeSummary } from './stripe';
import { benchTelethon, telethonSummary } from './telethon';
import { benchWebhooks, webhooksSummary } from './webhooks';

/**
 * `pnpm bench`: every figure beside a baseline measured in the same run. All traffic goes to
 * 127.0.0.1; every loop is bounded in time and count. BENCH_ONLY=reads|payments|search|init|billing|
 * webhooks|noisy-neighbour|reconciliation|idempotency-crash|stripe|failover|telethon|portal|receipts runs one part (BENCH_CRASH_PAYMENTS sizes the last); BENCH_SECONDS, BENCH_CONCURRENCY, BENCH_SEARCH_SIZES,
 * BENCH_BILLING_CONCURRENCY, BENCH_WEBHOOK_PAYMENTS, BENCH_TELETHON_DONATIONS, BENCH_RECONCILIATION_ROWS and
 * BENCH_RECONCILIATION_RUNS, BENCH_RECEIPTS_SIZES tune it. To see where a service process's time goes:
 * BENCH_SERVICE_CPU_PROF=<directory> writes its V8 CPU profile there when it stops, and
 * BENCH_SERVICE_IMPORT=<module> preloads a module into it (a counter of SDK calls, say).
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SEARCH_SIZES = (process.env.BENCH_SEARCH_SIZES ?? '10000,100000').split(',').map(Number);
const ONLY = process.env.BENCH_ONLY;
const ORG = '6f1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f60';
const wants = (part: string) => !ONLY || ONLY === part;

function line(label: string, r: LoadResult): string {
  return `${label.padEnd(34)} ${r.perSecond.toFixed(0).padStart(7)} req/s   p50 ${r.p50ms.toFixed(1)} ms   p95 ${r.p95ms.toFixed(1)} ms   errors ${r.errors}`;
}

const results: Record<string, unknown> = { when: new Date().toISOString(), node: process.version };

async function benchReads(url: string, dynamo: string, token: string) {
  const headers = { authorization: `Bearer ${token}` };
  const { httpGet } = await import('./load');
  const client = new DynamoDBClient({
    endpoint: dynamo,
    region: 'eu-central-2',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const rawGet = async () =>
    (
      await client.send(
        new GetItemCommand({
          TableName: 'svc-local',
          Key: { pk: { S: `ORG#${ORG}` }, sk: { S: 'ORG' } },
          ConsistentRead: true,
        }),
      )
    ).Item !== undefined;
  const apiGet = () => httpGet(`${url}/organisations/${ORG}`, headers);
  // Warm both paths (JIT on both sides, connection pools), then measure them alternately.
  await runLoad(rawGet, { seconds: 4, concurrency: CONCURRENCY });
  await runLoad(apiGet, { seconds: 4, concurrency: CONCURRENCY });
  // One loop each: no two requests overlap, so nothing is coalesced across requests; the cost of
  // one request as a Lambda container would serve it.
  const rawSerial = await runLoad(rawGet, { seconds: SECONDS / 2, concurrency: 1 });
  const apiSerial = await runLoad(apiGet, { seconds: SECONDS / 2, concurrency: 1 });
  const raw: LoadResult[] = [];
  const api: LoadResult[] = [];
  for (let round = 0; round < 2; round++) {
    raw.push(await runLoad(rawGet, { seconds: SECONDS / 2, concurrency: CONCURRENCY }));
    api.push(await runLoad(apiGet, { seconds: SECONDS / 2, concurrency: CONCURRENCY }));
  }
  client.destroy();
  const rate = (rs: LoadResult[]) => rs.reduce((n, r) => n + r.requests, 0) / rs.reduce((s, r) => s + r.seconds, 0);
  const ratio = rate(api) / rate(raw);
  console.log(
    `\nGET /organisations/{uuid} vs raw GetItem, ${CONCURRENCY} concurrent loops, ${SECONDS} s each (2 rounds):`,
  );
  for (const [i, r] of raw.entries()) console.log(line(`raw GetItem (round ${i + 1})`, r));
  for (const [i, r] of api.entries()) console.log(line(`GET /organisations/{uuid} (round ${i + 1})`, r));
  console.log(`gateway / raw = ${(ratio * 100).toFixed(0)}%  (goal >= 70%)`);
  console.log('One request at a time:');
  console.log(line('raw GetItem', rawSerial));
  console.log(line('GET /organisations/{uuid}', apiSerial));
  console.log(`gateway / raw = ${((apiSerial.perSecond / rawSerial.perSecond) * 100).toFixed(0)}%`);
  results.reads = {
    concurrency: CONCURRENCY,
    raw_per_s: rate(raw),
    api_per_s: rate(api),
    ratio,
    serial_ratio: apiSerial.perSecond / rawSerial.perSecond,
  };
}

async function main() {
  if (wants('reads') || wants('payments') || wants('search-http')) {
    const service = await startService();
    try {
      const token = await tokenFor(service.url, 'demo-client', 'demo-secret-change-me');
      if (wants('reads')) await benchReads(service.url, service.dynamo, token);
      if (wants('payments')) {
        const throughput = await benchInitialiseThroughput(service, token, SECONDS, CONCURRENCY);
        console.log(
          `\nPOST /payments vs raw PutItem of a same-sized item, ${CONCURRENCY} concurrent loops, ${SECONDS} s:`,
        );
        console.log(line('raw PutItem', throughput.raw));
        console.log(line('POST /payments (sepa_dd)', throughput.api));
        console.log(`gateway / raw = ${(throughput.ratio * 100).toFixed(0)}%  (goal >= 50%)`);
        const capacity = await benchCapacity(service);
        console.log('\nCapacity units per operation (ReturnConsumedCapacity, DynamoDB Local) vs the minimum:');
        for (const [name, c] of Object.entries(capacity)) {
          console.log(
            `${name.padEnd(11)} ${String(c.units).padStart(4)} CU  minimum ${c.minimum}  (${(c.units / c.minimum).toFixed(2)}x; goal <= 1.5x)  ${JSON.stringify(c.byCommand)}`,
          );
          console.log(`${''.padEnd(11)} minimum: ${c.minimumIs}`);
        }
        results.payments = {
          throughput: {
            raw_per_s: throughput.raw.perSecond,
            api_per_s: throughput.api.perSecond,
            ratio: throughput.ratio,
          },
          capacity,
        };
      }
      if (wants('search-http')) {
        const search = await benchSearch(service, SEARCH_SIZES, Number(process.env.BENCH_SEARCH_RUNS ?? 7));
        console.log('\nPOST /search/payments, one organisation (sequential requests):');
        for (const s of search) {
          console.log(
            `${String(s.payments).padStart(7)} payments (loaded in ${s.loadSeconds.toFixed(0)} s): first search ${s.firstMs.toFixed(0)} ms; selective p50 ${s.selective.p50ms.toFixed(0)} ms p95 ${s.selective.p95ms.toFixed(0)} ms; aggregation p50 ${s.aggregation.p50ms.toFixed(0)} ms p95 ${s.aggregation.p95ms.toFixed(0)} ms`,
          );
        }
        results.search = search;
      }
    } finally {
      service.stop();
    }
  }
  if (wants('init')) {
    console.log('\nModule init (median of 15 cold imports, fresh Node process each):');
    const init = await measureInit();
    for (const f of init) {
      console.log(
        `${f.bundle.padEnd(22)} ${(f.bytes / 1024).toFixed(0).padStart(6)} KiB  ${f.initMs.toFixed(1).padStart(7)} ms  ${f.ratio.toFixed(2)}x bare  ${f.ratio <= 2 ? '' : '(over the 2x goal)'}` +
          (f.tracedInitMs === undefined
            ? ''
            : `  with calls traced (staging, prod) ${f.tracedInitMs.toFixed(1)} ms ${f.tracedRatio?.toFixed(2)}x bare, ${f.tracedToTracedBare?.toFixed(2)}x traced bare`),
      );
    }
    results.init = init;
  }
  if (wants('billing')) {
    const billing = await benchBilling({
      runs: 5,
      concurrency: Number(process.env.BENCH_BILLING_CONCURRENCY ?? 6),
      rawSeconds: 5,
    });
    for (const text of billingSummary(billing)) console.log(text);
    results.billing = billing;
  }
  if (wants('webhooks')) {
    const webhooks = await benchWebhooks({
      payments: Number(process.env.BENCH_WEBHOOK_PAYMENTS ?? 1000),
      concurrency: CONCURRENCY,
      trickle: 50,
      bareSeconds: 5,
    });
    for (const text of webhooksSummary(webhooks)) console.log(text);
    results.webhooks = webhooks;
  }
  if (wants('noisy-neighbour')) {
    const noisy = await benchNoisyNeighbour({
      payments: Number(process.env.BENCH_NOISY_PAYMENTS ?? 60),
      waitSeconds: 120,
    });
    for (const text of noisyNeighbourSummary(noisy)) console.log(text);
    results.noisy_neighbour = noisy;
  }
  if (wants('reconciliation')) {
    const reconciliation = await benchReconciliation({
      rows: Number(process.env.BENCH_RECONCILIATION_ROWS ?? 100_000),
      paidEvery: 10,
      runs: Number(process.env.BENCH_RECONCILIATION_RUNS ?? 3),
    });
    for (const text of reconciliationSummary(reconciliation)) console.log(text);
    results.reconciliation = reconciliation;
  }
  if (wants('search')) {
    const engine = await benchSearchEngine({
      payments: Number(process.env.BENCH_SEARCH_PAYMENTS ?? 1_000_000),
      others: Number(process.env.BENCH_SEARCH_OTHERS ?? 200_000),
      organisations: 20,
      runs: Number(process.env.BENCH_SEARCH_RUNS ?? 8),
      probes: Number(process.env.BENCH_SEARCH_PROBES ?? 5),
    });
    for (const text of searchEngineSummary(engine)) console.log(text);
    results.searchEngine = engine;
  }
  if (wants('stripe')) {
    // With Stripe's own processing time (a confirmed card intent takes a few hundred ms there),
    // then with none: the second shows the service's whole cost around the call.
    const stripeRuns = [];
    for (const latencyMs of [Number(process.env.BENCH_STRIPE_LATENCY_MS ?? 150), 0]) {
      const stripe = await benchStripe({ seconds: SECONDS / 2, concurrency: CONCURRENCY, rounds: 3, latencyMs });
      for (const text of stripeSummary(stripe)) console.log(text);
      stripeRuns.push(stripe);
    }
    results.stripe = stripeRuns;
  }
  if (wants('failover')) {
    const failover = await benchFailover({
      seconds: SECONDS,
      // Past the circuit's 30 s cool-down, so a half-open probe (which times out) is in the figures.
      outageSeconds: Number(process.env.BENCH_OUTAGE_SECONDS ?? 40),
      concurrency: CONCURRENCY,
      timeoutMs: Number(process.env.BENCH_ADYEN_TIMEOUT_MS ?? 3000),
    });
    for (const text of failoverSummary(failover)) console.log(text);
    results.failover = failover;
  }
  if (wants('portal')) {
    const service = await startService(PORTAL_BENCH_ENV);
    try {
      const token = await tokenFor(service.url, 'demo-client', 'demo-secret-change-me');
      const portal = await benchPortal(service, token, SECONDS, CONCURRENCY);
      console.log(
        `\nThe donor portal (session cookie) vs raw GetItem, ${CONCURRENCY} concurrent loops, ${SECONDS} s each:`,
      );
      console.log(line('raw GetItem', portal.raw));
      console.log(line('GET /portal/home (HTML)', portal.page));
      console.log(line('GET /portal/api/subscriptions', portal.api));
      console.log(
        `page / raw = ${((portal.page.perSecond / portal.raw.perSecond) * 100).toFixed(0)}%   api / raw = ${((portal.api.perSecond / portal.raw.perSecond) * 100).toFixed(0)}%`,
      );
      results.portal = {
        raw_per_s: portal.raw.perSecond,
        page_per_s: portal.page.perSecond,
        api_per_s: portal.api.perSecond,
        page_ratio: portal.page.perSecond / portal.raw.perSecond,
        api_ratio: portal.api.perSecond / portal.raw.perSecond,
      };
    } finally {
      service.stop();
      await service.exited;
    }
  }
  if (wants('telethon')) {
    const telethon = await benchTelethon({
      donations: Number(process.env.BENCH_TELETHON_DONATIONS ?? 3000),
      seconds: SECONDS * 8,
      concurrency: CONCURRENCY,
    });
    for (const text of telethonSummary(telethon)) console.log(text);
    results.telethon = telethon;
  }
  if (wants('receipts')) {
    const receipts = await benchReceipts({
      sizes: (process.env.BENCH_RECEIPTS_SIZES ?? '1000,5000,10000').split(',').map(Number),
      warmSupporters: 400,
    });
    for (const text of receiptsSummary(receipts)) console.log(text);
    results.receipts = receipts;
  }
  if (wants('idempotency-crash')) {
    const payments = Number(process.env.BENCH_CRASH_PAYMENTS ?? 200);
    const crash = await benchIdempotencyCrash({
      payments,
      concurrency: CONCURRENCY,
      killAfter: Math.floor(payments / 3),
    });
    for (const text of crashSummary(crash)) console.log(text);
    results.idempotencyCrash = crash;
  }
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'latest.json'), JSON.stringify(results, null, 2));
}

await main();
process.exit(0);
