import { deferred, now, sdkClient } from '@svc/core';
import type Stripe from 'stripe';
import * as z from 'zod';
import { KEY_REREAD_SECONDS } from '../key-reread';

/**
 * Stripe's keys and where its API is.
 *
 * - Deployed stages: one Secrets Manager secret per stage (`SVC_STRIPE_SECRET_ARN`, JSON
 *   `{"test_secret_key", "live_secret_key", "webhook_secret"}`, each optional), read once per
 *   container and never logged, and read again after a refused event delivery
 *   (stripeKeysAfterRefusal, at most once per KEY_REREAD_SECONDS). `pnpm ops stripe:configure` puts the values in.
 * - Locally: `SVC_STRIPE_TEST_SECRET_KEY`, `SVC_STRIPE_LIVE_SECRET_KEY`, `SVC_STRIPE_WEBHOOK_SECRET`.
 * - `SVC_STRIPE_API_BASE` (a URL, default Stripe's own) points the SDK's host, port and protocol
 *   at another server speaking Stripe's API: the tests' stand-in.
 * `test_mode` payments use the test key, all others the live key.
 */
export interface StripeKeys {
  testSecretKey?: string | undefined;
  liveSecretKey?: string | undefined;
  /**
   * Comma-separated signing secrets: the platform endpoint's and a Connect endpoint's (events of
   * connected accounts come from their own endpoint), or an old and a new one while rolling.
   */
  webhookSecret?: string | undefined;
}

const secretSchema = deferred(() =>
  z.object({
    test_secret_key: z.string().min(1).optional(),
    live_secret_key: z.string().min(1).optional(),
    webhook_secret: z.string().min(1).optional(),
  }),
);

/**
 * The providers secret's fields this reader takes: the stack names each in the secret's
 * description (infra/stacks/service-stack.ts, checked by infra/test/stripe.test.ts). Builds the
 * schema: for tests and tools, not for a handler's load.
 */
export const stripeSecretFields = (): string[] => Object.keys(secretSchema.unwrap().shape);

let fromSecret: Promise<StripeKeys> | undefined;
/** When (service time) this container last read the secret for Stripe's keys. */
let readAt: number | undefined;

/**
 * A refused event delivery may be signed with a webhook secret rolled since this container read
 * the secret: the keys read again, at most once per KEY_REREAD_SECONDS per container, or
 * undefined when not read again (too soon, or keys from the environment, read every time).
 */
export async function stripeKeysAfterRefusal(): Promise<StripeKeys | undefined> {
  if (!process.env.SVC_STRIPE_SECRET_ARN) return undefined;
  // A clock moved back (the local runtime's, the tests') is no reason to wait.
  if (readAt !== undefined && now() >= readAt && now() - readAt < KEY_REREAD_SECONDS) return undefined;
  fromSecret = undefined;
  return stripeKeys();
}

export async function stripeKeys(): Promise<StripeKeys> {
  const secretArn = process.env.SVC_STRIPE_SECRET_ARN;
  if (!secretArn) {
    return {
      testSecretKey: process.env.SVC_STRIPE_TEST_SECRET_KEY || undefined,
      liveSecretKey: process.env.SVC_STRIPE_LIVE_SECRET_KEY || undefined,
      webhookSecret: process.env.SVC_STRIPE_WEBHOOK_SECRET || undefined,
    };
  }
  fromSecret ??= (async () => {
    readAt = now();
    const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
    const out = await sdkClient(new SecretsManagerClient({})).send(new GetSecretValueCommand({ SecretId: secretArn }));
    const parsed = secretSchema.safeParse(JSON.parse(out.SecretString ?? '{}'));
    if (!parsed.success)
      throw new Error('The Stripe secret is not {"test_secret_key", "live_secret_key", "webhook_secret"}');
    return {
      testSecretKey: parsed.data.test_secret_key,
      liveSecretKey: parsed.data.live_secret_key,
      webhookSecret: parsed.data.webhook_secret,
    };
  })();
  fromSecret.catch(() => {
    fromSecret = undefined;
  });
  return fromSecret;
}

/** The environment variable that holds the key a mode needs (for the 400 that names it). */
export function keyName(testMode: boolean): string {
  return testMode ? 'SVC_STRIPE_TEST_SECRET_KEY' : 'SVC_STRIPE_LIVE_SECRET_KEY';
}

/**
 * The API version every call and our webhook endpoint are pinned to: the one stripe-node 23.1.0
 * was generated for (`ApiVersion` in the SDK's apiVersion.js). Behaviour that depends on it:
 * automatic payment methods are on by default (since 2023-08-16), so a confirmation without the
 * donor names its `payment_method_types`; TWINT can be set up for off-session use (since
 * 2026-05-27). Upgrading the SDK means re-reading both and changing this constant.
 */
export const STRIPE_API_VERSION = '2026-10-28.endive';

/**
 * Time budget of one request to the payments function, in milliseconds. API Gateway's HTTP APIs
 * end an integration after 30 s at most (a hard quota, "Integration timeout: 30 seconds"), so the
 * function's timeout is 29 s (infra: PAYMENTS_FUNCTION_TIMEOUT) and the slowest path, a
 * Customer then a confirmed PaymentIntent, must end inside it with room for the table's writes:
 *
 * | call                                   | timeout | SDK retries | worst case           |
 * |----------------------------------------|---------|-------------|----------------------|
 * | customer, setup intent, list, retrieve | 4 s     | 1           | 2 × 4 s + ≤ 2 s wait |
 * | PaymentIntent / SetupIntent confirm    | 18 s    | 0           | 18 s (+ one re-send of a closed socket, which the SDK always makes) |
 *
 * 10 s + 18 s = 28 s < 29 s. A card authorisation may take Stripe up to 80 s (the SDK's own
 * default timeout is 80 s for that reason): one slower than 18 s is an unknown outcome, the
 * payment stays pending (`provider_unavailable`) and the resolver finds Stripe's result by the
 * intent's id or a list of intents, never by creating another.
 */
export const STRIPE_TIMEOUT_MS = 4_000;
export const STRIPE_RETRIES = 1;
export const STRIPE_CONFIRM_TIMEOUT_MS = 18_000;
export const STRIPE_CONFIRM_RETRIES = 0;

const clients = new Map<string, Stripe>();

/**
 * How many times the SDK sent a request under each idempotency key (its `request` event fires per
 * attempt). The SDK re-sends a request whose connection closed once even without retries
 * ("these codes can also surface after the API processed the request", stripe-node
 * RequestSender._shouldRetry), so a failure is proof that Stripe did nothing only when its key
 * was sent exactly once. Only keys being watched are counted.
 */
const attempts = new Map<string, number>();

/** Counts the attempts under a key while `work` runs; `work` gets the count so far. */
export async function withAttemptsCounted<T>(
  idempotencyKey: string,
  work: (sent: () => number) => Promise<T>,
): Promise<T> {
  attempts.set(idempotencyKey, 0);
  try {
    return await work(() => attempts.get(idempotencyKey) ?? 0);
  } finally {
    attempts.delete(idempotencyKey);
  }
}

function apiLocation(): Pick<Stripe.StripeConfig, 'host' | 'port' | 'protocol'> {
  const base = process.env.SVC_STRIPE_API_BASE;
  if (!base) return {};
  const url = new URL(base);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: url.port || (protocol === 'http' ? 80 : 443), protocol };
}

/** One SDK client per key and API location, made on first use. */
export async function stripeClient(testMode: boolean): Promise<Stripe | undefined> {
  const keys = await stripeKeys();
  const key = testMode ? keys.testSecretKey : keys.liveSecretKey;
  if (!key) return undefined;
  const location = apiLocation();
  const id = `${key}\u0000${JSON.stringify(location)}`;
  let client = clients.get(id);
  if (!client) {
    const StripeSdk = await stripeSdk();
    // The SDK retries connection failures and 409/429/5xx itself, with the same idempotency key.
    client = new StripeSdk(key, {
      ...location,
      apiVersion: STRIPE_API_VERSION,
      maxNetworkRetries: STRIPE_RETRIES,
      timeout: STRIPE_TIMEOUT_MS,
      telemetry: false,
    });
    client.on('request', (event: { idempotency_key?: string }) => {
      const key = event.idempotency_key;
      if (key && attempts.has(key)) attempts.set(key, (attempts.get(key) ?? 0) + 1);
    });
    clients.set(id, client);
  }
  return client;
}

/**
 * The SDK, loaded on first use: a container that takes no Stripe payment (most of the payments
 * function's requests, every simulated one) does not pay for loading it at cold start.
 */
async function stripeSdk(): Promise<typeof Stripe> {
  return (await import('stripe')).default;
}

/** Stripe's webhook helpers (the SDK's own signature check on the raw body). */
export async function stripeWebhooks(): Promise<typeof Stripe.webhooks> {
  return (await stripeSdk()).webhooks;
}
