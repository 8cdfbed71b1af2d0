import { createSvcClient, verifyWebhookSignature } from '@svc/client';
import { hmacHex } from '@svc/webhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { cardPaymentBody, DEMO, gatewayFetch, seedDemo } from './support/api';

/**
 * @svc/client, the typed client generated from /openapi.json, against the service (in-process):
 * its types come from the description, so a description that lies fails here at compile time or
 * in the response check every answer goes through.
 */
beforeAll(async () => {
  await seedDemo();
});

/** A fetch that counts token requests on the way to the gateway. */
function counting() {
  const seen = { tokens: 0, keys: [] as Array<string | null> };
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    if (new URL(request.url).pathname === '/oauth2/token') seen.tokens += 1;
    if (request.method === 'POST') seen.keys.push(request.headers.get('idempotency-key'));
    return gatewayFetch(request);
  };
  return { seen, fetch };
}

const card = () => cardPaymentBody() as never;

describe('@svc/client', () => {
  it('takes a payment and reads it back, typed by the description', async () => {
    const { fetch } = counting();
    const client = createSvcClient({
      baseUrl: 'http://127.0.0.1:3000',
      clientId: DEMO.client.id,
      clientSecret: DEMO.client.secret,
      fetch,
    });
    const created = await client.POST('/payments', { body: card() });
    expect(created.response.status).toBe(201);
    const payment = created.data;
    if (!payment) throw new Error('no payment');
    expect(payment.status).toBe('succeeded');
    expect(payment.amount).toEqual({ value: '1200', currency: 'CHF' });
    const read = await client.GET('/payments/{payment_uuid}', { params: { path: { payment_uuid: payment.uuid } } });
    expect(read.data?.uuid).toBe(payment.uuid);
    const missing = await client.GET('/payments/{payment_uuid}', {
      params: { path: { payment_uuid: '00000000-0000-4000-8000-00000000abcd' } },
    });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ error: { http_code: 404 } });
  });

  it('gets one token for many calls, and a new one shortly before it expires', async () => {
    let clock = 1_800_000_000;
    const { seen, fetch } = counting();
    const client = createSvcClient({
      baseUrl: 'http://127.0.0.1:3000',
      clientId: DEMO.client.id,
      clientSecret: DEMO.client.secret,
      fetch,
      now: () => clock,
    });
    await Promise.all([client.GET('/organisations'), client.GET('/accounts'), client.GET('/organisations')]);
    expect(seen.tokens).toBe(1);
    clock += 3600 - 61;
    await client.GET('/organisations');
    expect(seen.tokens).toBe(1);
    clock += 2;
    const after = await client.GET('/organisations');
    expect(after.response.status).toBe(200);
    expect(seen.tokens).toBe(2);
  });

  it('sends an idempotency key with every POST: its own, or the one given, which replays', async () => {
    const { seen, fetch } = counting();
    const client = createSvcClient({
      baseUrl: 'http://127.0.0.1:3000',
      clientId: DEMO.client.id,
      clientSecret: DEMO.client.secret,
      fetch,
    });
    const first = await client.POST('/payments', { body: card() });
    const second = await client.POST('/payments', { body: card() });
    expect(first.data?.uuid).not.toBe(second.data?.uuid);
    const keys = seen.keys.filter((key) => key !== null);
    expect(new Set(keys).size).toBe(2);
    const key = 'client-test-retry-1';
    const again = [
      await client.POST('/payments', { body: card(), headers: { 'idempotency-key': key } }),
      await client.POST('/payments', { body: card(), headers: { 'idempotency-key': key } }),
    ];
    expect(again[1]?.data?.uuid).toBe(again[0]?.data?.uuid);
    expect(again[1]?.response.headers.get('idempotent-replayed')).toBe('true');
  });

  it('says why when the credentials are wrong', async () => {
    const client = createSvcClient({
      baseUrl: 'http://127.0.0.1:3000',
      clientId: DEMO.client.id,
      clientSecret: 'wrong',
      fetch: gatewayFetch,
    });
    await expect(client.GET('/organisations')).rejects.toThrow(/\/oauth2\/token answered 401/);
  });
});

describe('verifyWebhookSignature', () => {
  const hmacKey = 'a'.repeat(48);
  const body = JSON.stringify({ event: { uuid: 'e1', name: 'svc.payments.payment.succeeded' } });
  const at = 1_800_000_000;
  // Signed as the delivery worker signs: the same function.
  const signature = `t=${at},v1=${hmacHex(hmacKey, `${at}.${body}`)}`;

  it('accepts the delivery worker’s signature over the body as received', () => {
    expect(verifyWebhookSignature({ body, signature, hmacKey, now: at + 10 })).toBe(true);
    expect(verifyWebhookSignature({ body: Buffer.from(body), signature, hmacKey, now: at })).toBe(true);
  });

  it('refuses a changed body, another key, an old request and a malformed header', () => {
    expect(verifyWebhookSignature({ body: `${body} `, signature, hmacKey, now: at })).toBe(false);
    expect(verifyWebhookSignature({ body, signature, hmacKey: 'b'.repeat(48), now: at })).toBe(false);
    expect(verifyWebhookSignature({ body, signature, hmacKey, now: at + 301 })).toBe(false);
    expect(verifyWebhookSignature({ body, signature: `t=${at},v1=zz`, hmacKey, now: at })).toBe(false);
    expect(verifyWebhookSignature({ body, signature: undefined, hmacKey, now: at })).toBe(false);
  });
});
