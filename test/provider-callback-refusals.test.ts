import HmacValidator from '@adyen/api-library/lib/src/utils/hmacValidator';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { advanceClock, freezeClock, now } from '@svc/core';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { receiveAdyenNotifications } from '../services/payments/src/providers/adyen/adyen-notifications';
import { KEY_REREAD_SECONDS } from '../services/payments/src/providers/key-reread';
import { receiveStripeEvent } from '../services/payments/src/providers/stripe/stripe-events';

/**
 * Callbacks refused for their signature, basic auth or a missing key (issue 46, point 3): each is
 * counted (ProviderCallbacksRefused, EMF, per provider and reason) for the alarm, and a refusal
 * reads the providers' secret again, at most once per KEY_REREAD_SECONDS per container, so a key
 * rolled in the secret is taken without a new container. The secret is Secrets Manager's answer,
 * stood in for at the SDK client's `send`.
 */
const OLD_HMAC = 'AA'.repeat(32);
const NEW_HMAC = 'BB'.repeat(32);
const OLD_WHSEC = 'whsec_old_0000000000000000';
const NEW_WHSEC = 'whsec_new_1111111111111111';

let secret: Record<string, string> = {};
let reads = 0;
let printed: string[] = [];
const saved = { ...process.env };

beforeAll(() => {
  process.env.SVC_STRIPE_SECRET_ARN = 'arn:aws:secretsmanager:eu-central-2:000000000000:secret:svc-providers';
  vi.spyOn(SecretsManagerClient.prototype, 'send').mockImplementation((async () => {
    reads += 1;
    return { SecretString: JSON.stringify(secret) };
  }) as never);
  // Metrics on (the run has them off), their EMF lines kept.
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  const write = process.stdout.write.bind(process.stdout);
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (!text.includes('"CloudWatchMetrics"')) return write(chunk, ...(rest as []));
    printed.push(...text.split('\n').filter((line) => line.includes('"CloudWatchMetrics"')));
    return true;
  });
});

afterAll(() => {
  vi.restoreAllMocks();
  process.env = saved;
});

let at = Math.floor(Date.now() / 1000);
beforeEach(() => {
  // The clock is the real one again after each test: each test starts a day on from the last.
  at += 86_400;
  freezeClock(at);
});

afterEach(() => {
  printed = [];
});

/**
 * The secret holds `value` from now on, and this container has read it: a window later, a refused
 * callback of each provider makes it read again (the only way it reads again); no metric kept.
 */
async function secretHolds(value: Record<string, string>): Promise<void> {
  secret = value;
  advanceClock(KEY_REREAD_SECONDS);
  await receiveAdyenNotifications(adyenBatch('CC'.repeat(32)), undefined).catch(() => undefined);
  await receiveStripeEvent('{}', 't=1,v1=00').catch(() => undefined);
  printed = [];
}

/** The ProviderCallbacksRefused data points printed, as their dimensions and value. */
function refusals() {
  return printed.flatMap((line) => {
    const emf = JSON.parse(line) as Record<string, unknown> & {
      _aws: { CloudWatchMetrics: Array<{ Dimensions: string[][]; Metrics: Array<{ Name: string }> }> };
    };
    return emf._aws.CloudWatchMetrics.flatMap((directive) =>
      directive.Metrics.filter((metric) => metric.Name === 'ProviderCallbacksRefused').map(() => ({
        dimensions: Object.fromEntries((directive.Dimensions[0] ?? []).map((key) => [key, emf[key]])),
        value: emf.ProviderCallbacksRefused,
      })),
    );
  });
}

/** A batch of one Adyen notification Adyen would send, signed with `key` (Adyen's own HMAC code). */
function adyenBatch(key: string): string {
  const item = {
    pspReference: `PSP${now()}${Math.floor(Math.random() * 1e6)}`,
    merchantAccountCode: 'CharityECOM',
    merchantReference: 'not-ours',
    amount: { value: 500, currency: 'EUR' },
    eventCode: 'REPORT_AVAILABLE',
    success: 'true',
    eventDate: '2026-11-29T05:00:00+01:00',
    reason: '',
    additionalData: {} as Record<string, string>,
  };
  item.additionalData.hmacSignature = new HmacValidator().calculateHmac(item as never, key);
  return JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: item }] });
}

/** An event Stripe would deliver (one this endpoint ignores), signed with `secret` by the SDK. */
function stripeDelivery(webhookSecret: string): { body: string; signature: string } {
  const body = JSON.stringify({
    id: `evt_${now()}${Math.floor(Math.random() * 1e6)}`,
    object: 'event',
    type: 'balance.available',
    livemode: false,
    created: now(),
    api_version: '2026-10-28.endive',
    data: { object: { object: 'balance' } },
  });
  const signature = Stripe.webhooks.generateTestHeaderString({
    payload: body,
    secret: webhookSecret,
    timestamp: now(),
  });
  return { body, signature };
}

describe('Adyen notifications refused', () => {
  it('are counted per provider and reason: a bad signature, a missing key, bad basic auth', async () => {
    await secretHolds({ adyen_hmac_key: OLD_HMAC });
    await expect(receiveAdyenNotifications(adyenBatch(NEW_HMAC), undefined)).rejects.toThrow(/HMAC signature/);
    expect(refusals()).toEqual([{ dimensions: { service: 'svc', provider: 'adyen', reason: 'signature' }, value: 1 }]);

    printed = [];
    await secretHolds({});
    await expect(receiveAdyenNotifications(adyenBatch(OLD_HMAC), undefined)).rejects.toThrow(/No Adyen HMAC key/);
    expect(refusals()).toEqual([{ dimensions: { service: 'svc', provider: 'adyen', reason: 'no_key' }, value: 1 }]);

    printed = [];
    await secretHolds({
      adyen_hmac_key: OLD_HMAC,
      adyen_notification_username: 'adyen',
      adyen_notification_password: 'pw',
    });
    await expect(receiveAdyenNotifications(adyenBatch(OLD_HMAC), 'Basic bm9ib2R5Om5vbmU=')).rejects.toThrow(
      /basic auth/,
    );
    expect(refusals()).toEqual([{ dimensions: { service: 'svc', provider: 'adyen', reason: 'basic_auth' }, value: 1 }]);
    const auth = `Basic ${Buffer.from('adyen:pw').toString('base64')}`;
    await expect(receiveAdyenNotifications(adyenBatch(OLD_HMAC), auth)).resolves.toBeDefined();
  });

  it('take a rolled HMAC key after a failed check, without a new container, reading the secret once a window', async () => {
    await secretHolds({ adyen_hmac_key: OLD_HMAC });
    await receiveAdyenNotifications(adyenBatch(OLD_HMAC), undefined);
    // An hour on, the key is rolled at Adyen and in the secret.
    advanceClock(3600);
    secret = { adyen_hmac_key: NEW_HMAC };
    const before = reads;
    await expect(receiveAdyenNotifications(adyenBatch(NEW_HMAC), undefined)).resolves.toBeDefined();
    expect(reads - before).toBe(1);
    expect(refusals()).toEqual([]);

    // A flood of bad signatures reads the secret at most once per window.
    const flood = reads;
    for (let i = 0; i < 50; i += 1)
      await expect(receiveAdyenNotifications(adyenBatch(OLD_HMAC), undefined)).rejects.toThrow(/HMAC/);
    expect(reads - flood).toBe(0);
    expect(refusals()).toHaveLength(50);
    advanceClock(KEY_REREAD_SECONDS - 1);
    await expect(receiveAdyenNotifications(adyenBatch(OLD_HMAC), undefined)).rejects.toThrow(/HMAC/);
    expect(reads - flood).toBe(0);
    advanceClock(1);
    for (let i = 0; i < 20; i += 1)
      await expect(receiveAdyenNotifications(adyenBatch(OLD_HMAC), undefined)).rejects.toThrow(/HMAC/);
    expect(reads - flood).toBe(1);
    // The good ones still pass, from the cache.
    await expect(receiveAdyenNotifications(adyenBatch(NEW_HMAC), undefined)).resolves.toBeDefined();
    expect(reads - flood).toBe(1);
  });
});

describe('Stripe event deliveries refused', () => {
  it('are counted as Adyen’s are: a bad signature, a missing header, a missing secret', async () => {
    await secretHolds({ webhook_secret: OLD_WHSEC });
    const bad = stripeDelivery(NEW_WHSEC);
    await expect(receiveStripeEvent(bad.body, bad.signature)).rejects.toThrow(/does not match/);
    await expect(receiveStripeEvent(bad.body, undefined)).rejects.toThrow(/missing/);
    expect(refusals()).toEqual([
      { dimensions: { service: 'svc', provider: 'stripe', reason: 'signature' }, value: 1 },
      { dimensions: { service: 'svc', provider: 'stripe', reason: 'signature' }, value: 1 },
    ]);
    printed = [];
    await secretHolds({});
    await expect(receiveStripeEvent(bad.body, bad.signature)).rejects.toThrow(/No Stripe webhook secret/);
    expect(refusals()).toEqual([{ dimensions: { service: 'svc', provider: 'stripe', reason: 'no_key' }, value: 1 }]);
  });

  it('take a rolled webhook secret after a failed check, reading the secret at most once a window', async () => {
    await secretHolds({ webhook_secret: OLD_WHSEC });
    const old = stripeDelivery(OLD_WHSEC);
    await expect(receiveStripeEvent(old.body, old.signature)).resolves.toMatchObject({ received: true });
    // An hour on, the endpoint's secret is rolled at Stripe and in the secret.
    advanceClock(3600);
    secret = { webhook_secret: NEW_WHSEC };
    const before = reads;
    const rolled = stripeDelivery(NEW_WHSEC);
    await expect(receiveStripeEvent(rolled.body, rolled.signature)).resolves.toMatchObject({ received: true });
    expect(reads - before).toBe(1);
    expect(refusals()).toEqual([]);

    const flood = reads;
    for (let i = 0; i < 50; i += 1) {
      const bad = stripeDelivery(OLD_WHSEC);
      await expect(receiveStripeEvent(bad.body, bad.signature)).rejects.toThrow(/does not match/);
    }
    expect(reads - flood).toBe(0);
    advanceClock(KEY_REREAD_SECONDS);
    for (let i = 0; i < 20; i += 1) {
      const bad = stripeDelivery(OLD_WHSEC);
      await expect(receiveStripeEvent(bad.body, bad.signature)).rejects.toThrow(/does not match/);
    }
    expect(reads - flood).toBe(1);
    expect(refusals()).toHaveLength(70);
  });
});
