import { advanceClock, freezeClock, now } from '@svc/core';
import { forgetProviderHealth } from '@svc/payments';
import { applySeed, DEMO_SEED, parseSeed } from '@svc/seed';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdyenFault, type AdyenStandIn, startAdyenStandIn } from './support/adyen-stand-in';
import { type ApiResponse, call, DEMO, seedDemo, tokenFor } from './support/api';
import { DONOR_MANDATE } from './support/stripe-harness';
import { type Fault, type Params, type StripeStandIn, startStripeStandIn } from './support/stripe-stand-in';

/**
 * Fail-over under faults, over both providers' stand-ins at once: SEPA debits (the method both
 * take with the same fields) on two routed profiles, Stripe first or Adyen first. Each payment
 * meets a random fault at its first provider (refused connections, 429s, timeouts, lost answers,
 * 5xx, slow answers that complete later), or a whole provider is down for the scenario; debits
 * settle either way, early or late; Stripe's events and Adyen's notifications arrive in any
 * order, repeated; the background work runs over three days. Whatever happens: at most one
 * payment is made across the providers for each of ours, every payment ends in the state the
 * provider that has it says, and while a provider is down every new payment is made at the other.
 */
const ACCOUNT = DEMO.secondAccount;
const MERCHANT = 'CharityECOM';
const CLOSED_PORT = 'http://127.0.0.1:9';
let stripe: StripeStandIn;
let adyen: AdyenStandIn;
let token: string;

beforeAll(async () => {
  freezeClock(Math.floor(Date.now() / 1000));
  stripe = await startStripeStandIn({ clock: now });
  adyen = await startAdyenStandIn({ clock: now });
  Object.assign(process.env, {
    SVC_STRIPE_API_BASE: stripe.url,
    SVC_STRIPE_TEST_SECRET_KEY: stripe.secretKey,
    SVC_STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
    SVC_ADYEN_API_BASE: adyen.url,
    SVC_ADYEN_API_KEY: adyen.apiKey,
    SVC_ADYEN_HMAC_KEY: adyen.hmacKey,
    SVC_ADYEN_TIMEOUT_MS: '300',
  });
  await seedDemo();
  const seed = structuredClone(DEMO_SEED) as {
    organisations: Array<{ accounts: Array<{ uuid: string; payment_method_profiles?: unknown[] }> }>;
  };
  for (const organisation of seed.organisations)
    for (const account of organisation.accounts)
      if (account.uuid === ACCOUNT)
        account.payment_method_profiles = [
          {
            name: 'sepa-stripe-first',
            payment_method: 'sepa_dd',
            route: [{ provider: 'stripe' }, { provider: 'adyen', merchant_account: MERCHANT }],
          },
          {
            name: 'sepa-adyen-first',
            payment_method: 'sepa_dd',
            route: [{ provider: 'adyen', merchant_account: MERCHANT }, { provider: 'stripe' }],
          },
        ];
  await applySeed(parseSeed(seed));
  forgetProviderHealth();
  token = await tokenFor(DEMO.client);
});

afterAll(async () => {
  await Promise.all([stripe.close(), adyen.close()]);
  for (const name of [
    'SVC_STRIPE_API_BASE',
    'SVC_STRIPE_TEST_SECRET_KEY',
    'SVC_STRIPE_WEBHOOK_SECRET',
    'SVC_ADYEN_API_BASE',
    'SVC_ADYEN_API_KEY',
    'SVC_ADYEN_HMAC_KEY',
    'SVC_ADYEN_TIMEOUT_MS',
  ])
    delete process.env[name];
});

type StripeFault = Fault | 'none' | 'down';
type AdyenFaultPlan = Exclude<AdyenFault, null> | 'none' | 'slow';

const scenario = fc.record({
  /** A provider down for the whole scenario (its connections refused). */
  outage: fc.constantFrom<'none' | 'stripe' | 'adyen'>('none', 'none', 'stripe', 'adyen'),
  payments: fc.array(
    fc.record({
      first: fc.constantFrom<'stripe' | 'adyen'>('stripe', 'adyen'),
      stripeFault: fc.constantFrom<StripeFault>(
        'none',
        'rate_limit',
        'drop',
        'server_error',
        'server_error_after_work',
        'down',
      ),
      adyenFault: fc.constantFrom<AdyenFaultPlan>(
        'none',
        'rate_limit',
        'lose_answer',
        'error',
        'timeout',
        'slow',
        'refuse',
      ),
      /** The donor's bank pays the debit. */
      paid: fc.boolean(),
      /** It settles before the background work's first passes, or only days later. */
      settlesEarly: fc.boolean(),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  /** Adyen's notifications: shuffled and repeated per delivery by these picks. */
  shuffle: fc.array(fc.nat(), { minLength: 0, maxLength: 12 }),
  /** Stripe's events: delivered in this order (indices into what was recorded), repeats allowed. */
  stripeDeliveries: fc.array(fc.nat(), { maxLength: 10 }),
});

const authorised = (value: string) => ({ authorization: `Bearer ${value}` });

async function pay(profile: string): Promise<ApiResponse> {
  return call('POST', '/payments', {
    headers: { ...authorised(token), 'user-agent': 'donor-browser/1.0' },
    body: {
      account_uuid: ACCOUNT,
      payment_method: 'sepa_dd',
      profile,
      amount: { value: '2500', currency: 'EUR' },
      test_mode: true,
      payment_information: { ...DONOR_MANDATE, iban: 'DE89370400440532013000', account_holder: 'Ada Lovelace' },
    },
  });
}

const stripeCharges = (uuid: string): Params[] =>
  stripe.charges().filter((intent) => (intent.metadata as Record<string, string>)?.svc_reference === uuid);

/** Delivers Adyen's queued notifications in an order and with repeats picked by `picks`. */
async function deliverAdyen(picks: number[]): Promise<void> {
  const batch = adyen.takeNotifications();
  const items = batch.notificationItems;
  if (items.length === 0) return;
  const order = [...items];
  for (const [i, pick] of picks.entries()) {
    const a = i % order.length;
    const b = pick % order.length;
    [order[a], order[b]] = [order[b] as (typeof order)[number], order[a] as (typeof order)[number]];
  }
  const repeated = [...order, ...picks.slice(0, 3).map((pick) => order[pick % order.length] as (typeof order)[number])];
  // In two batches, as Adyen's retries split them.
  const half = Math.ceil(repeated.length / 2);
  for (const part of [repeated.slice(0, half), repeated.slice(half)]) {
    if (part.length === 0) continue;
    const response = await call('POST', '/providers/adyen/notifications', {
      rawBody: JSON.stringify({ live: 'false', notificationItems: part }),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status, response.text).toBe(200);
    expect(response.text).toBe('[accepted]');
  }
}

async function deliverStripe(indices: number[]): Promise<void> {
  const recorded = [...stripe.events];
  for (const index of indices) {
    const event = recorded[index % Math.max(1, recorded.length)];
    if (!event) continue;
    const signed = stripe.signed(event);
    const response = await call('POST', '/providers/stripe/events', {
      rawBody: signed.body,
      headers: { 'content-type': 'application/json', 'stripe-signature': signed.signature },
    });
    expect(response.status, response.text).toBe(200);
  }
}

/** Settles the debit at whichever provider has it. */
function settleAt(uuid: string, paid: boolean): void {
  for (const intent of stripeCharges(uuid)) {
    const current = stripe.intents.get(String(intent.id));
    if (current?.status === 'processing') stripe.settle(String(intent.id), paid);
  }
  for (const payment of adyen.byReference(uuid)) {
    if (payment.status === 'received') adyen.settle(payment.pspReference, paid ? 'success' : 'failure');
  }
}

/** Where the payment is in truth, and what our record must say of it. */
function truth(uuid: string): { provider?: string; status: string; made: number } {
  const atStripe = stripeCharges(uuid).map((intent) => String(stripe.intents.get(String(intent.id))?.status));
  const atAdyen = adyen.byReference(uuid).map((payment) => payment.status);
  const made = atStripe.length + atAdyen.length;
  const stripeStatus: Record<string, string> = {
    succeeded: 'succeeded',
    processing: 'pending',
    requires_payment_method: 'failed',
    canceled: 'failed',
  };
  const adyenStatus: Record<string, string> = {
    authorised: 'succeeded',
    received: 'pending',
    refused: 'failed',
    cancelled: 'failed',
    expired: 'failed',
  };
  if (atStripe[0]) return { provider: 'stripe', status: stripeStatus[atStripe[0]] ?? atStripe[0], made };
  if (atAdyen[0]) return { provider: 'adyen', status: adyenStatus[atAdyen[0]] ?? atAdyen[0], made };
  return { status: 'failed', made };
}

describe('two providers under faults (property)', () => {
  it('makes every payment at most once across providers, ends each as its provider has it, and fails over while one is down', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ outage, payments, shuffle, stripeDeliveries }) => {
        // A new window for the circuits: each scenario starts with both closed.
        advanceClock(3600);
        forgetProviderHealth();
        await fresh();
        const made: Array<{ uuid: string; paid: boolean; settlesEarly: boolean; first: string }> = [];
        if (outage === 'adyen') adyen.fault('refuse');
        try {
          for (const plan of payments) {
            const stripeDown =
              outage === 'stripe' || (outage === 'none' && plan.first === 'stripe' && plan.stripeFault === 'down');
            if (stripeDown) process.env.SVC_STRIPE_API_BASE = CLOSED_PORT;
            // During an outage the provider that is up meets no other fault: the outage is the test.
            if (
              outage === 'none' &&
              plan.first === 'stripe' &&
              plan.stripeFault !== 'none' &&
              plan.stripeFault !== 'down'
            )
              stripe.failNextMatching(
                (r) => r.method === 'POST' && r.path === '/v1/payment_intents',
                plan.stripeFault,
                2,
              );
            const adyenPlan = plan.first === 'adyen' && outage === 'none' ? plan.adyenFault : 'none';
            if (adyenPlan === 'slow') adyen.fault('timeout', { times: 1, completesAtReset: true });
            else if (adyenPlan === 'refuse') adyen.fault('refuse');
            else if (adyenPlan !== 'none') adyen.fault(adyenPlan, { times: 1 });
            try {
              const response = await pay(plan.first === 'stripe' ? 'sepa-stripe-first' : 'sepa-adyen-first');
              expect(response.status, response.text).toBe(201);
              made.push({
                uuid: response.json.uuid,
                paid: plan.paid,
                settlesEarly: plan.settlesEarly,
                first: plan.first,
              });
              if (outage !== 'none') {
                // While a provider is down, new payments are made at the other.
                const other = outage === 'stripe' ? 'adyen' : 'stripe';
                expect(response.json.provider, response.text).toBe(other);
              }
            } finally {
              if (stripeDown) process.env.SVC_STRIPE_API_BASE = stripe.url;
              if (adyenPlan === 'slow' || adyenPlan === 'refuse') adyen.fault(null);
              // A fault armed for two requests (the SDK's own retry) that met one, because the
              // payment moved on after a 429, must not meet the next payment's request.
              stripe.clearFaults();
            }
          }
        } finally {
          if (outage === 'adyen') adyen.fault(null);
        }

        for (const entry of made) if (entry.settlesEarly) settleAt(entry.uuid, entry.paid);
        await deliverAdyen(shuffle);
        await deliverStripe(stripeDeliveries);
        // The background work: a minute, a quarter of an hour, an hour, a day, three days on; the
        // late debits settle after the first day.
        for (const [pass, seconds] of [61, 15 * 60, 3600, 86_400, 3 * 86_400].entries()) {
          advanceClock(seconds);
          await call('POST', '/_local/settle');
          if (pass === 3) for (const entry of made) if (!entry.settlesEarly) settleAt(entry.uuid, entry.paid);
          await deliverAdyen(shuffle);
          await deliverStripe([...stripe.events.keys()].slice(-6));
        }

        for (const entry of made) {
          const payment = (await call('GET', `/payments/${entry.uuid}`, { headers: authorised(await fresh()) })).json;
          const actual = truth(entry.uuid);
          // Never made twice, nor at both providers.
          expect(actual.made, `${entry.uuid} was made ${actual.made} times`).toBeLessThanOrEqual(1);
          // As the provider that has it says.
          expect(payment.status, `${entry.uuid} (${JSON.stringify(actual)})`).toBe(actual.status);
          if (actual.provider) expect(payment.provider).toBe(actual.provider);
        }
      }),
      { numRuns: 10 },
    );
  }, 300_000);
});

async function fresh(): Promise<string> {
  token = await tokenFor(DEMO.client);
  return token;
}
