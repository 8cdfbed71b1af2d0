import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_SEED } from '@svc/seed';
import Stripe from 'stripe';
import { startStripeStandIn } from '../test/support/stripe-stand-in';
import { httpPost, type LoadResult, runLoad } from './load';
import { startService, tokenFor } from './service';

/**
 * `POST /payments` on a Stripe profile, through the whole service, against a bare loop of
 * `stripe.paymentIntents.create` (the same confirmed card intent, the same SDK) sent straight to
 * the same Stripe stand-in: what the service costs around the provider call. Rounds alternate,
 * the stand-in runs in this process for both, and all traffic stays on 127.0.0.1.
 */
const ACCOUNT = '9c405f6d-7e8b-4c93-9da4-ce5f60718293';
const CLIENT = { id: 'demo-client', secret: 'demo-secret-change-me' };

export interface StripeBenchResult {
  /** How long the stand-in holds each answer, as Stripe's own processing would. */
  latencyMs: number;
  service: LoadResult[];
  bare: LoadResult[];
  ratio: number;
}

function seedWithStripeProfile(): string {
  const seed = structuredClone(DEMO_SEED) as {
    organisations: Array<{ accounts: Array<{ uuid: string; payment_method_profiles?: unknown[] }> }>;
  };
  for (const organisation of seed.organisations) {
    for (const account of organisation.accounts) {
      if (account.uuid === ACCOUNT) {
        account.payment_method_profiles = [{ name: 'card-stripe', payment_method: 'card', provider: 'stripe' }];
      }
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-stripe-bench-'));
  const file = join(dir, 'seed.json');
  writeFileSync(file, JSON.stringify(seed));
  return file;
}

export async function benchStripe(options: {
  seconds: number;
  concurrency: number;
  rounds: number;
  latencyMs: number;
}): Promise<StripeBenchResult> {
  const stripe = await startStripeStandIn({ latencyMs: options.latencyMs });
  const seedFile = seedWithStripeProfile();
  const service = await startService({
    SVC_SEED_FILE: seedFile,
    SVC_STRIPE_API_BASE: stripe.url,
    SVC_STRIPE_TEST_SECRET_KEY: stripe.secretKey,
    SVC_STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
    SVC_BACKGROUND: 'settle',
    // The stand-in enforces no rate limit (Stripe's test mode allows 25 requests/s): our limiter's
    // share for test mode (20/s) would hold the bench to that, so it is lifted here.
    SVC_PROVIDER_RATE_LIMITS: JSON.stringify({ stripe: { test: 1_000_000 } }),
  });
  try {
    const token = await tokenFor(service.url, CLIENT.id, CLIENT.secret);
    const url = new URL(stripe.url);
    const client = new Stripe(stripe.secretKey, {
      host: url.hostname,
      port: url.port,
      protocol: 'http',
      maxNetworkRetries: 2,
      telemetry: false,
    });
    const headers = { authorization: `Bearer ${token}` };
    const viaService = () =>
      httpPost(`${service.url}/payments`, headers, {
        account_uuid: ACCOUNT,
        payment_method: 'card',
        profile: 'card-stripe',
        amount: { value: '2500', currency: 'CHF' },
        payment_information: { payment_method: 'pm_card_visa' },
        test_mode: true,
      });
    let n = 0;
    const bare = async () => {
      const intent = await client.paymentIntents.create(
        {
          amount: 2500,
          currency: 'chf',
          confirm: true,
          payment_method: 'pm_card_visa',
          return_url: 'https://example.org/return',
          metadata: { svc_reference: `bare-${n}` },
          expand: ['payment_method'],
        },
        { idempotencyKey: `bare-${n++}:payment_intent` },
      );
      return intent.status === 'succeeded';
    };
    // Warm both paths (JIT, connections, DynamoDB Local), then alternate measured rounds.
    await runLoad(viaService, { seconds: 3, concurrency: options.concurrency });
    await runLoad(bare, { seconds: 2, concurrency: options.concurrency });
    const serviceRounds: LoadResult[] = [];
    const bareRounds: LoadResult[] = [];
    for (let round = 0; round < options.rounds; round++) {
      serviceRounds.push(await runLoad(viaService, { seconds: options.seconds, concurrency: options.concurrency }));
      bareRounds.push(await runLoad(bare, { seconds: options.seconds, concurrency: options.concurrency }));
    }
    const rate = (rs: LoadResult[]) => rs.reduce((s, r) => s + r.requests, 0) / rs.reduce((s, r) => s + r.seconds, 0);
    return {
      latencyMs: options.latencyMs,
      service: serviceRounds,
      bare: bareRounds,
      ratio: rate(serviceRounds) / rate(bareRounds),
    };
  } finally {
    service.stop();
    await service.exited;
    await stripe.close();
    rmSync(seedFile, { force: true });
  }
}

export function stripeSummary(result: StripeBenchResult): string[] {
  const line = (label: string, r: LoadResult) =>
    `${label.padEnd(40)} ${r.perSecond.toFixed(0).padStart(6)} req/s   p50 ${r.p50ms.toFixed(1)} ms   p95 ${r.p95ms.toFixed(1)} ms   errors ${r.errors}`;
  return [
    `\nPOST /payments (Stripe profile, card) vs a bare paymentIntents.create loop, both against the Stripe stand-in answering after ${result.latencyMs} ms:`,
    ...result.service.map((r, i) => line(`POST /payments via Stripe (round ${i + 1})`, r)),
    ...result.bare.map((r, i) => line(`bare paymentIntents.create (round ${i + 1})`, r)),
    `service / bare = ${(result.ratio * 100).toFixed(0)}%  (goal >= 50%)`,
  ];
}
