import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import createFetchClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from './openapi';

export type { components, paths, webhooks } from './openapi';

export interface SvcClientOptions {
  /** The API's base address, e.g. `https://api.example.org` or `http://127.0.0.1:3000`. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Another fetch (tests hand in one that answers in-process); the global fetch by default. */
  fetch?: typeof globalThis.fetch;
  /** Seconds before a token's expiry at which a new one is fetched (default 60). */
  refreshMarginSeconds?: number;
  /** The clock, in Unix seconds (tests move it). */
  now?: () => number;
}

export type SvcClient = Client<paths> & {
  /** The current access token, fetched or refreshed as needed (for calls made without the client). */
  token(): Promise<string>;
};

const seconds = () => Math.floor(Date.now() / 1000);

/**
 * A typed client of the API, generated from `/openapi.json` (openapi-typescript) and calling it
 * with openapi-fetch: paths, parameters, bodies and answers are typed by the description. It gets
 * its own token with the client credentials and gets a new one shortly before it expires, and
 * sends an `Idempotency-Key` with every POST that has none (a retry of the same call can pass
 * the same key in `headers`).
 */
export function createSvcClient(options: SvcClientOptions): SvcClient {
  const fetchFn = options.fetch ?? globalThis.fetch;
  const now = options.now ?? seconds;
  const margin = options.refreshMarginSeconds ?? 60;
  const base = options.baseUrl.replace(/\/+$/, '');
  let current: { token: string; expiresAt: number } | undefined;
  let pending: Promise<string> | undefined;

  async function fetchToken(): Promise<string> {
    const response = await fetchFn(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: options.clientId,
        client_secret: options.clientSecret,
      }).toString(),
    });
    const body = (await response.json()) as { access_token?: string; expires_in?: number; message?: string };
    if (response.status !== 200 || !body.access_token || !body.expires_in) {
      throw new Error(`No token: /oauth2/token answered ${response.status}${body.message ? ` (${body.message})` : ''}`);
    }
    current = { token: body.access_token, expiresAt: now() + body.expires_in };
    return body.access_token;
  }

  async function token(): Promise<string> {
    if (current && now() < current.expiresAt - margin) return current.token;
    // One request for a new token, however many calls wait for it.
    pending ??= fetchToken().finally(() => {
      pending = undefined;
    });
    return pending;
  }

  const auth: Middleware = {
    async onRequest({ request, schemaPath }) {
      if (schemaPath !== '/oauth2/token') request.headers.set('authorization', `Bearer ${await token()}`);
      if (request.method === 'POST' && !request.headers.has('idempotency-key')) {
        request.headers.set('idempotency-key', randomUUID());
      }
      return request;
    },
  };
  const client = createFetchClient<paths>({ baseUrl: base, fetch: fetchFn });
  client.use(auth);
  return Object.assign(client, { token });
}

export interface WebhookSignatureCheck {
  /** The request body exactly as received (the signature covers these bytes). */
  body: string | Buffer;
  /** The `X-Svc-Signature` header: `t=<unix seconds>,v1=<hex>`. */
  signature: string | undefined;
  /** The endpoint's `hmac_key`. */
  hmacKey: string;
  /** How far `t` may be from now, in seconds (default 300): an old request replayed is refused. */
  toleranceSeconds?: number;
  /** The clock, in Unix seconds. */
  now?: number;
}

/**
 * Whether a webhook request is ours and recent: HMAC-SHA256 over `<t>.<body>` with the
 * endpoint's key, compared in constant time, and `t` within the tolerance.
 */
export function verifyWebhookSignature(check: WebhookSignatureCheck): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(check.signature ?? '');
  if (!match) return false;
  const at = Number(match[1]);
  if (Math.abs((check.now ?? seconds()) - at) > (check.toleranceSeconds ?? 300)) return false;
  const expected = createHmac('sha256', check.hmacKey).update(`${at}.`).update(check.body).digest();
  return timingSafeEqual(expected, Buffer.from(match[2] as string, 'hex'));
}
