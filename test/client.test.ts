import { createSvcClient, verifyWebhookSignature } from '@svc/client';
import { now } from '@svc/core';
import { hmacHex } from '@svc/webhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, cardPaymentBody, DEMO, gatewayFetch, seedDemo } from './support/api';

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

describe("the README's first session, through @svc/client", () => {
  it('takes a donation, refunds part, finds it, starts a monthly donation and bills a month of it', async () => {
    const client = createSvcClient({
      baseUrl: 'http://127.0.0.1:3000',
      clientId: DEMO.client.id,
      clientSecret: DEMO.client.secret,
      fetch: gatewayFetch,
      // The service's clock, which the control endpoint moves below (a real client and server share real time).
      now,
    });
    const organisations = await client.GET('/organisations');
    expect(organisations.data?.map((organisation) => organisation.uuid)).toContain(DEMO.org);
    const billing = await client.GET('/accounts/{account_uuid}/billing-data', {
      params: { path: { account_uuid: DEMO.account } },
    });
    expect(billing.response.status).toBe(200);

    const campaign = `spring-${Date.now()}`;
    const donation = await client.POST('/payments', {
      body: cardPaymentBody({ amount: { value: '2500', currency: 'CHF' }, custom_parameters: { campaign } }) as never,
    });
    const payment = donation.data;
    if (!payment) throw new Error(`no payment: ${JSON.stringify(donation.error)}`);
    expect(payment.payment_information).toMatchObject({ last4: '4242' });
    const refund = await client.POST('/payments/{payment_uuid}/refunds', {
      params: { path: { payment_uuid: payment.uuid } },
      body: { amount: { value: '500', currency: 'CHF' } } as never,
    });
    expect(refund.response.status).toBe(200);
    // Read-your-writes: the next search of this client finds the payment, refund included.
    const found = await client.POST('/search/payments', {
      body: {
        query: { $match: { 'custom_parameters.campaign': campaign } },
        aggs: { total: { type: 'sum', field: 'amount.value' } },
      } as never,
    });
    expect(found.response.status).toBe(200);
    const hits = found.data as unknown as {
      hits: Array<{ uuid: string; refunded_amount: unknown }>;
      aggregations: unknown;
    };
    expect(hits.hits.map((hit) => hit.uuid)).toEqual([payment.uuid]);
    expect(hits.hits[0]?.refunded_amount).toEqual({ value: '500', currency: 'CHF' });
    expect(JSON.stringify(hits.aggregations)).toContain('2500');

    const monthly = await client.POST('/payments', {
      body: cardPaymentBody({
        amount: { value: '2000', currency: 'CHF' },
        create_payment_source: true,
        subscription: { recurring_interval: 'monthly', timezone: 'Europe/Zurich' },
      }) as never,
    });
    const subscriptionUuid = monthly.data?.subscription_uuid;
    if (!subscriptionUuid) throw new Error(`no subscription: ${JSON.stringify(monthly.error ?? monthly.data)}`);
    const subscription = await client.GET('/subscriptions/{subscription_uuid}', {
      params: { path: { subscription_uuid: subscriptionUuid } },
    });
    expect(subscription.data?.subscription_status).toBe('active');
    try {
      // 32 days on by the service clock, then the billing run (the local control endpoints).
      expect((await call('POST', '/_local/clock', { body: { advance_seconds: 32 * 86_400 } })).status).toBe(200);
      const run = await call('POST', '/_local/billing-run');
      expect(run.json).toMatchObject({ invoices_created: expect.any(Number), succeeded: expect.any(Number) });
      // The client's token has expired by now: it gets a new one on its own.
      const invoices = await client.GET('/subscriptions/{subscription_uuid}/invoices', {
        params: { path: { subscription_uuid: subscriptionUuid } },
      });
      expect(invoices.response.status).toBe(200);
      expect(JSON.stringify(invoices.data)).toContain('"paid"');
    } finally {
      await call('POST', '/_local/clock', { body: { now: null } });
    }
  });
});
