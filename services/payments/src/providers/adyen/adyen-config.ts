import type { CheckoutAPI } from '@adyen/api-library';
import { deferred, hexKeys, now, sdkClient } from '@svc/core';
import * as z from 'zod';
import { KEY_REREAD_SECONDS } from '../key-reread';
import { adyenHttpClient } from './adyen-http';

/**
 * Adyen's keys and where its Checkout API is.
 *
 * - Deployed stages: the same Secrets Manager secret as Stripe's keys (`SVC_STRIPE_SECRET_ARN`,
 *   JSON fields `adyen_api_key`, `adyen_hmac_key`, `adyen_live_url_prefix`,
 *   `adyen_notification_username`, `adyen_notification_password`, each optional), read once per
 *   container and never logged, and read again after a refused notification
 *   (adyenKeysAfterRefusal, at most once per KEY_REREAD_SECONDS), so a rolled key is taken
 *   without a new container.
 * - Locally: `SVC_ADYEN_API_KEY`, `SVC_ADYEN_HMAC_KEY`, `SVC_ADYEN_LIVE_URL_PREFIX`,
 *   `SVC_ADYEN_NOTIFICATION_USERNAME`, `SVC_ADYEN_NOTIFICATION_PASSWORD`.
 * - `SVC_ADYEN_API_BASE` (a URL up to the API version, e.g. `https://checkout-test.adyen.com/v72`)
 *   points every Checkout call at another server speaking Adyen's API: the tests' stand-in. By
 *   default `test_mode` payments go to Adyen's test endpoint and the others to the live one,
 *   which Adyen names per merchant (`https://{prefix}-checkout-live.adyenpayments.com/checkout`,
 *   https://docs.adyen.com/development-resources/live-endpoints): live payments need the prefix.
 *
 * One API key serves a stage: Adyen's test and live accounts are separate companies with separate
 * keys, so a stage takes either test or live Adyen payments, never both (the key decides).
 * The HMAC keys (hex) may be several, comma-separated, while one is rolled.
 */
export interface AdyenKeys {
  apiKey?: string | undefined;
  hmacKeys: string[];
  liveUrlPrefix?: string | undefined;
  notificationUsername?: string | undefined;
  notificationPassword?: string | undefined;
}

const secretSchema = deferred(() =>
  z.object({
    adyen_api_key: z.string().min(1).optional(),
    adyen_hmac_key: z.string().min(1).optional(),
    adyen_live_url_prefix: z.string().min(1).optional(),
    adyen_notification_username: z.string().min(1).optional(),
    adyen_notification_password: z.string().min(1).optional(),
  }),
);

/**
 * The providers secret's fields this reader takes: the stack names each in the secret's
 * description (infra/stacks/service-stack.ts, checked by infra/test/stripe.test.ts). Builds the
 * schema: for tests and tools, not for a handler's load.
 */
export const adyenSecretFields = (): string[] => Object.keys(secretSchema.unwrap().shape);

let fromSecret: Promise<AdyenKeys> | undefined;
/** When (service time) this container last read the secret for Adyen's keys. */
let readAt: number | undefined;

/**
 * A refused notification may be a rolled key this container has not seen (the secret is read once
 * per container): the keys read again, at most once per KEY_REREAD_SECONDS per container, or
 * undefined when not read again (too soon, or keys from the environment, which are read every
 * time). See KEY_REREAD_SECONDS (../key-reread.ts) for the window.
 */
export async function adyenKeysAfterRefusal(): Promise<AdyenKeys | undefined> {
  if (!process.env.SVC_STRIPE_SECRET_ARN) return undefined;
  // A clock moved back (the local runtime's, the tests') is no reason to wait.
  if (readAt !== undefined && now() >= readAt && now() - readAt < KEY_REREAD_SECONDS) return undefined;
  fromSecret = undefined;
  return adyenKeys();
}

/**
 * The HMAC keys, each an even-length hexadecimal string, or an error. Adyen's library turns the key
 * into bytes with `Buffer.from(key, "hex")` (@adyen/api-library lib/src/utils/hmacValidator.js,
 * `calculateHmac`), which stops silently at the first character that is not hex: a key mistyped,
 * or pasted as base64, becomes a short or empty key, and with an empty key anyone can sign a
 * notification. So a key not in that form is refused (the providers' configuration fails to
 * load: no Adyen call or notification is taken with it, and `pnpm start` does not start).
 * Adyen's keys are 64 hex characters (https://docs.adyen.com/development-resources/webhooks/verify-hmac-signatures/
 * shows one); we ask for at least 16 bytes.
 */
export function hmacList(value: string | undefined): string[] {
  return hexKeys(value, 'The Adyen HMAC key (SVC_ADYEN_HMAC_KEY / adyen_hmac_key)');
}

export async function adyenKeys(): Promise<AdyenKeys> {
  const secretArn = process.env.SVC_STRIPE_SECRET_ARN;
  if (!secretArn) {
    return {
      apiKey: process.env.SVC_ADYEN_API_KEY || undefined,
      hmacKeys: hmacList(process.env.SVC_ADYEN_HMAC_KEY),
      liveUrlPrefix: process.env.SVC_ADYEN_LIVE_URL_PREFIX || undefined,
      notificationUsername: process.env.SVC_ADYEN_NOTIFICATION_USERNAME || undefined,
      notificationPassword: process.env.SVC_ADYEN_NOTIFICATION_PASSWORD || undefined,
    };
  }
  fromSecret ??= (async () => {
    readAt = now();
    const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
    const out = await sdkClient(new SecretsManagerClient({})).send(new GetSecretValueCommand({ SecretId: secretArn }));
    const parsed = secretSchema.safeParse(JSON.parse(out.SecretString ?? '{}'));
    if (!parsed.success) throw new Error('The providers secret has Adyen fields of the wrong type');
    return {
      apiKey: parsed.data.adyen_api_key,
      hmacKeys: hmacList(parsed.data.adyen_hmac_key),
      liveUrlPrefix: parsed.data.adyen_live_url_prefix,
      notificationUsername: parsed.data.adyen_notification_username,
      notificationPassword: parsed.data.adyen_notification_password,
    };
  })();
  fromSecret.catch(() => {
    fromSecret = undefined;
  });
  return fromSecret;
}

/**
 * Time budget of one Adyen call, in milliseconds, inside the payments function's 29 s (see
 * STRIPE_CONFIRM_TIMEOUT_MS): an authorisation may wait on the issuer, so 18 s; other calls 6 s.
 * No call is re-sent by the client: a call not answered in time is an unknown outcome.
 */
export const ADYEN_PAYMENT_TIMEOUT_MS = 18_000;
export const ADYEN_TIMEOUT_MS = 6_000;

/** `SVC_ADYEN_TIMEOUT_MS` shortens every call's timeout (tests that make Adyen's stand-in hang). */
function timeoutOf(defaultMs: number): number {
  const configured = Number(process.env.SVC_ADYEN_TIMEOUT_MS);
  return Number.isFinite(configured) && configured > 0 ? Math.min(configured, defaultMs) : defaultMs;
}

/** Why Adyen cannot take payments in this mode, or undefined when it can. */
export async function adyenUnusable(testMode: boolean): Promise<string | undefined> {
  const keys = await adyenKeys();
  if (!keys.apiKey) return 'The adyen provider has no API key configured (SVC_ADYEN_API_KEY)';
  if (!testMode && !process.env.SVC_ADYEN_API_BASE && !keys.liveUrlPrefix)
    return 'Live Adyen payments need the live endpoint prefix (SVC_ADYEN_LIVE_URL_PREFIX)';
  return undefined;
}

const clients = new Map<string, CheckoutAPI>();

/** One Checkout API per key, mode, location and timeout, made on first use. */
export async function adyenCheckout(testMode: boolean, timeoutMs = ADYEN_TIMEOUT_MS): Promise<CheckoutAPI> {
  const keys = await adyenKeys();
  if (!keys.apiKey) throw new Error('No Adyen API key (SVC_ADYEN_API_KEY)');
  const base = process.env.SVC_ADYEN_API_BASE || undefined;
  const timeout = timeoutOf(timeoutMs);
  const id = [keys.apiKey, testMode, base, keys.liveUrlPrefix, timeout].join('\u0000');
  let checkout = clients.get(id);
  if (!checkout) {
    // Loaded on first use: a container that takes no Adyen payment does not pay for it at cold start.
    const { Client, CheckoutAPI: Checkout, EnvironmentEnum } = await import('@adyen/api-library');
    const client = new Client({
      apiKey: keys.apiKey,
      environment: testMode || base ? EnvironmentEnum.TEST : EnvironmentEnum.LIVE,
      ...(keys.liveUrlPrefix ? { liveEndpointUrlPrefix: keys.liveUrlPrefix } : {}),
    });
    client.httpClient = adyenHttpClient({ base, timeoutMs: timeout });
    checkout = new Checkout(client);
    clients.set(id, checkout);
  }
  return checkout;
}
