import { deferred, sdkClient } from '@svc/core';
import type Stripe from 'stripe';
import * as z from 'zod';

/**
 * Stripe's keys and where its API is.
 *
 * - Deployed stages: one Secrets Manager secret per stage (`SVC_STRIPE_SECRET_ARN`, JSON
 *   `{"test_secret_key", "live_secret_key", "webhook_secret"}`, each optional), read once per
 *   container and never logged. `pnpm ops stripe:configure` puts the values in.
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

let fromSecret: Promise<StripeKeys> | undefined;

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
 * Timeout of one Stripe call, and the SDK's retries of it: together well inside the Lambda's 15 s,
 * so an answer that does not come is handled (an unknown outcome, resolved later) instead of the
 * function being killed mid-call.
 */
export const STRIPE_TIMEOUT_MS = 6_000;
export const STRIPE_RETRIES = 1;

const clients = new Map<string, Stripe>();

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
      maxNetworkRetries: STRIPE_RETRIES,
      timeout: STRIPE_TIMEOUT_MS,
      telemetry: false,
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
