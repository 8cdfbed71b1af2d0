import { createHmac } from 'node:crypto';
import { advanceClock, definedFields, freezeClock, newUuid, now } from '@svc/core';
import { EVENT_NAMES } from '@svc/events';
import { createClient } from '@svc/identity';
import { findPayment, newPaymentWrite, paymentStatusEvents } from '@svc/payments';
import { transactWrite } from '@svc/table';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { type Receiver, startReceiver } from '../../../packages/outbound/src/testing/receiver';
import { type ApiResponse, call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { claimAttempt } from './domain/delivery';
import { sendAttempt } from './domain/delivery-attempt';

let token: string;
let otherToken: string;
let receiver: Receiver;
/** A receiver answer that never comes (the delivery times out). */
const HANG = 0;
/** What the receiver answers next on a path: a status per request, 200 once the list is used up. */
const answers = new Map<string, number[]>();
const answer = (webhook: { endpoint: string }, statuses: number[]) =>
  answers.set(new URL(webhook.endpoint).pathname, statuses);
let tokenAt = 0;

beforeAll(async () => {
  await seedDemo();
  freezeClock(Math.floor(Date.now() / 1000));
  token = await tokenFor(DEMO.client);
  tokenAt = now();
  otherToken = await tokenFor(DEMO.otherClient);
  receiver = await startReceiver((request, response) => {
    const status = answers.get(request.url ?? '')?.shift() ?? 200;
    if (status === HANG) {
      // Never answers in time (the delivery's timeout ends it); closed later, after the test.
      setTimeout(() => response.destroy(), 5_000).unref();
      return;
    }
    response.writeHead(status, { 'content-type': 'text/plain' });
    response.end(status === 200 ? 'thanks' : 'not now');
  }, inject('receiverTls'));
});

// Every test runs on a frozen clock (the shared setup resumes real time after each test).
beforeEach(() => {
  freezeClock(now());
});

afterAll(async () => {
  await receiver.close();
});

/** Tokens live an hour by the service clock, which these tests move by days. */
async function current(as: string): Promise<string> {
  if (as !== token || now() - tokenAt < 1800) return as;
  token = await tokenFor(DEMO.client);
  tokenAt = now();
  return token;
}

const api = async (method: string, path: string, body?: unknown, as = token) =>
  call(method, path, { token: await current(as), ...definedFields({ body }) });

async function ok(method: string, path: string, body?: unknown, status = 200) {
  const response = await api(method, path, body);
  expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
  return response.json;
}

const details = (response: ApiResponse) =>
  response.json.error.message.map(({ code, property }: { code: string; property: string }) => ({ code, property }));

const settle = () => ok('POST', '/_local/settle');
const receiverUrl = () => `https://127.0.0.1:${receiver.port}/hooks`;
let endpoints = 0;
/** Endpoints the running test made: deleted after it, as an organisation has at most 20. */
const made: string[] = [];

/** Each endpoint gets its own path on the receiver, so a test sees only its own deliveries. */
async function endpoint(fields: Record<string, unknown> = {}) {
  endpoints += 1;
  const created = await ok(
    'POST',
    '/webhooks',
    { organisation_uuid: DEMO.org, endpoint: `${receiverUrl()}/${endpoints}`, ...fields },
    201,
  );
  made.push(String(created.uuid));
  return created;
}

afterEach(async () => {
  for (const uuid of made.splice(0)) {
    const deleted = await api('DELETE', `/webhooks/${uuid}`);
    if (deleted.status !== 204 && deleted.status !== 404)
      throw new Error(`DELETE /webhooks/${uuid}: ${deleted.status}`);
  }
});

async function subscribe(webhook: string, eventName: string, fields: Record<string, unknown> = {}) {
  return ok(
    'POST',
    '/event-subscriptions',
    {
      organisation_uuid: DEMO.org,
      action_configuration_uuid: webhook,
      action_type: 'webhook',
      event_name: eventName,
      ...fields,
    },
    201,
  );
}

async function pay(amount = '2500', number = '4242424242424242') {
  return ok(
    'POST',
    '/payments',
    {
      account_uuid: DEMO.secondAccount,
      payment_method: 'card',
      profile: 'card',
      amount: { value: amount, currency: 'CHF' },
      payment_information: { number, expiry_month: 12, expiry_year: 2099, cvv: '123' },
    },
    201,
  );
}

/** A pending monthly subscription charged from a new source with that card. */
async function newSubscription(card: string, amount: number) {
  const source = await ok(
    'POST',
    '/payment-sources',
    {
      account_uuid: DEMO.account,
      payment_method: 'card',
      profile: 'card-test',
      amount: { value: '100', currency: 'CHF' },
      payment_information: { number: card, expiry_month: 12, expiry_year: 2099, cvv: '123' },
    },
    201,
  );
  const supporter = await ok('POST', '/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada' }, 201);
  return ok(
    'POST',
    '/subscriptions',
    {
      account_uuid: DEMO.account,
      payment_source_uuid: source.uuid,
      supporter_uuid: supporter.uuid,
      currency: 'CHF',
      amount,
      recurring_interval: 'monthly',
    },
    201,
  );
}

/** The Webhook Responses of one event at one endpoint, newest first. */
const attemptsLogged = (webhook: { uuid: string }, eventUuid: string) =>
  ok(
    'GET',
    `/webhook-responses?organisation_uuid=${DEMO.org}&event_uuid=${eventUuid}&webhook_configuration_uuid=${webhook.uuid}`,
  );

/** Requests the receiver got for one event. */
const requestsForObject = (objectUuid: string) =>
  receiver.requests.filter(
    (r) => r.url === `/hooks/${endpoints}` && JSON.parse(r.body).event.object_uuid === objectUuid,
  );

describe('webhook endpoints', () => {
  it('creates on both paths, https only, never shows the password, and generates an HMAC key', async () => {
    const created = await endpoint({ alias: 'CRM', username: 'crm', password: 'secret-pass' });
    expect(created).toEqual({
      uuid: expect.any(String),
      organisation_uuid: DEMO.org,
      alias: 'CRM',
      endpoint: `${receiverUrl()}/${endpoints}`,
      username: 'crm',
      hmac_key: expect.stringMatching(/^.{32,}$/),
      // Its pace (contract section 11): the default unless set.
      max_deliveries_per_second: 50,
    });
    const second = await ok(
      'POST',
      '/organisations/webhooks',
      { organisation_uuid: DEMO.org, endpoint: 'https://example.org/b', hmac_key: 'my-key' },
      201,
    );
    expect(second.hmac_key).toBe('my-key');
    expect(JSON.stringify(await ok('GET', `/webhooks/${created.uuid}`))).not.toContain('secret-pass');
    const list = await ok('GET', `/webhooks?organisation_uuid=${DEMO.org}`);
    // The list shows what GET shows but the HMAC key (issue 34: clients find their endpoint by URL).
    const listed = list.find((item: { uuid: string }) => item.uuid === created.uuid);
    expect(listed).toMatchObject({
      uuid: created.uuid,
      organisation_uuid: DEMO.org,
      alias: 'CRM',
      endpoint: created.endpoint,
    });
    expect(listed).not.toHaveProperty('hmac_key');
    expect(JSON.stringify(list)).not.toContain('secret-pass');
    for (const [body, property] of [
      [{ endpoint: 'http://example.org/' }, 'endpoint'],
      [{ endpoint: '' }, 'endpoint'],
      [{ endpoint: 'https://' }, 'endpoint'],
      [{ endpoint: receiverUrl(), surprise: 1 }, 'surprise'],
      [{ endpoint: 'https://user:secret@example.org/' }, 'endpoint'],
      [{ endpoint: 'https://example.org:0/' }, 'endpoint'],
      [{ endpoint: 'https://example.org/', username: 'a:b' }, 'username'],
    ] as const) {
      const refused = await api('POST', '/webhooks', { organisation_uuid: DEMO.org, ...body });
      expect(refused.status).toBe(400);
      expect(details(refused).map((d: { property: string }) => d.property)).toContain(property);
    }
  });

  it('lists by organisation only (400 without it, 403 on another tenant)', async () => {
    const missing = await api('GET', '/webhooks');
    expect(missing.status).toBe(400);
    expect(details(missing)).toEqual([{ code: 'error.validation.not_null', property: 'organisation_uuid' }]);
    expect((await api('GET', `/webhooks?organisation_uuid=${DEMO.org}`, undefined, otherToken)).status).toBe(403);
    const created = await endpoint();
    for (const [method, path, body] of [
      ['GET', `/webhooks/${created.uuid}`, undefined],
      ['PATCH', `/webhooks/${created.uuid}`, { alias: 'x' }],
      ['PUT', `/webhooks/${created.uuid}`, { endpoint: 'https://example.org/' }],
      ['DELETE', `/webhooks/${created.uuid}`, undefined],
    ] as const) {
      expect((await api(method, path, body, otherToken)).status).toBe(403);
    }
  });

  it('replaces, updates and deletes; secrets stay unless sent', async () => {
    const created = await endpoint({ alias: 'A', username: 'u', password: 'p' });
    const patched = await ok('PATCH', `/webhooks/${created.uuid}`, { alias: 'B' });
    expect(patched).toMatchObject({ alias: 'B', username: 'u', hmac_key: created.hmac_key });
    const replaced = await ok('PUT', `/webhooks/${created.uuid}`, { endpoint: 'https://example.org/new' });
    expect(replaced.alias).toBeUndefined();
    expect(replaced.username).toBeUndefined();
    expect(replaced.hmac_key).toBe(created.hmac_key);
    expect((await api('PUT', `/webhooks/${created.uuid}`, { alias: 'no endpoint' })).status).toBe(400);
    expect((await api('DELETE', `/webhooks/${created.uuid}`)).status).toBe(204);
    expect((await api('GET', `/webhooks/${created.uuid}`)).status).toBe(404);
  });

  it('refuses a second endpoint with the same URL when asked to, also under concurrent requests', async () => {
    const url = `https://example.org/unique-${Date.now()}`;
    const attempts = await Promise.all(
      Array.from({ length: 5 }, () =>
        api('POST', '/webhooks', { organisation_uuid: DEMO.org, endpoint: url, prevent_duplicates: true }),
      ),
    );
    expect(attempts.filter((r) => r.status === 201)).toHaveLength(1);
    expect(attempts.filter((r) => r.status === 409)).toHaveLength(4);
    // Without the flag a duplicate is allowed.
    expect((await api('POST', '/webhooks', { organisation_uuid: DEMO.org, endpoint: url })).status).toBe(201);
  });
});

describe('event subscriptions', () => {
  it('creates with canonical names and aliases; shows enabled as text', async () => {
    const webhook = await endpoint();
    const alias = await subscribe(webhook.uuid, 'svc.event.payment_gateway.payment.succeeded');
    expect(alias).toEqual({
      uuid: expect.any(String),
      organisation_uuid: DEMO.org,
      action_configuration_uuid: webhook.uuid,
      action_type: 'webhook',
      event_name: 'svc.event.payment_gateway.payment.succeeded',
      enabled: 'true',
    });
    const disabled = await ok(
      'POST',
      '/organisations/event-subscriptions',
      {
        organisation_uuid: DEMO.org,
        action_configuration_uuid: webhook.uuid,
        action_type: 'webhook',
        event_name: 'svc.subscriptions.invoice.paid',
        enabled: 'false',
        filter: 'event.data["amount"] > 100',
      },
      201,
    );
    expect(disabled).toMatchObject({ enabled: 'false', filter: 'event.data["amount"] > 100' });
    const listed = await ok('GET', `/event-subscriptions?organisation_uuid=${DEMO.org}`);
    expect(listed.map((s: { uuid: string }) => s.uuid)).toEqual(expect.arrayContaining([alias.uuid, disabled.uuid]));
    for (const path of ['/event-subscriptions', '/webhook-responses']) {
      const missing = await api('GET', path);
      expect(missing.status).toBe(400);
      expect(details(missing)).toEqual([{ code: 'error.validation.not_null', property: 'organisation_uuid' }]);
    }
  });

  it.each([
    [{ event_name: 'svc.payments.payment.exploded' }, 'event_name', 'error.validation.not_valid'],
    [{ event_name: '' }, 'event_name', 'error.validation.not_blank'],
    [{ action_type: 'email' }, 'action_type', 'the_value_you_selected_is_not_a_valid_choice'],
    [{ filter: 'event.data["amount" >= 5' }, 'filter', 'error.validation.not_valid'],
    [{ filter: 'event.data.x()' }, 'filter', 'error.validation.not_valid'],
    [
      { action_configuration_uuid: '5b0c7c52-0000-4000-8000-000000000000' },
      'action_configuration_uuid',
      'error.validation.not_valid',
    ],
  ])('refuses %j with a 400', async (fields, property, code) => {
    const webhook = await endpoint();
    const response = await api('POST', '/event-subscriptions', {
      organisation_uuid: DEMO.org,
      action_configuration_uuid: webhook.uuid,
      action_type: 'webhook',
      event_name: 'svc.payments.payment.succeeded',
      ...fields,
    });
    expect(response.status, response.text).toBe(400);
    expect(details(response)[0]).toEqual({ code, property });
    if (property === 'filter') expect(response.json.error.message[0].message).toMatch(/at character \d+/);
  });

  it('replaces, updates and deletes', async () => {
    const webhook = await endpoint();
    const created = await subscribe(webhook.uuid, 'svc.payments.payment.failed', { filter: 'true' });
    const patched = await ok('PATCH', `/event-subscriptions/${created.uuid}`, { enabled: false });
    expect(patched).toMatchObject({ enabled: 'false', filter: 'true' });
    expect(await ok('GET', `/event-subscriptions/${created.uuid}`)).toEqual(patched);
    const replaced = await ok('PUT', `/event-subscriptions/${created.uuid}`, {
      action_configuration_uuid: webhook.uuid,
      action_type: 'webhook',
      event_name: 'svc.payments.refund.succeeded',
    });
    expect(replaced).toMatchObject({ event_name: 'svc.payments.refund.succeeded', enabled: 'true' });
    expect(replaced.filter).toBeUndefined();
    expect((await api('PUT', `/event-subscriptions/${created.uuid}`, { event_name: 'x' })).status).toBe(400);
    expect((await api('GET', `/event-subscriptions/${created.uuid}`, undefined, otherToken)).status).toBe(403);
    expect((await api('DELETE', `/event-subscriptions/${created.uuid}`)).status).toBe(204);
    expect((await api('GET', `/event-subscriptions/${created.uuid}`)).status).toBe(404);
  });
});

describe('delivery', () => {
  it('delivers a payment event signed, with the contract body and headers, and logs the attempt', async () => {
    const webhook = await endpoint({ username: 'crm', password: 'pa:ss', hmac_key: 'shared-key' });
    await subscribe(webhook.uuid, 'svc.event.payment_gateway.payment.succeeded');
    const payment = await pay('3100');
    await settle();
    const [request, ...more] = requestsForObject(payment.uuid);
    expect(more).toHaveLength(0);
    if (!request) throw new Error('not delivered');
    const body = JSON.parse(request.body);
    expect(body).toEqual({
      event: {
        uuid: expect.any(String),
        name: 'svc.payments.payment.succeeded',
        created: expect.any(Number),
        object: 'payment',
        object_uuid: payment.uuid,
        organisation_uuid: DEMO.org,
        account_uuid: DEMO.secondAccount,
        sequence: 1,
        data: await ok('GET', `/payments/${payment.uuid}`),
      },
    });
    // What a receiver computes matches both signature headers.
    const hmac = (content: string) => createHmac('sha256', 'shared-key').update(content).digest('hex');
    expect(request.headers['x-hmac']).toBe(hmac(request.body));
    const signature = String(request.headers['x-svc-signature']);
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature) ?? [];
    expect(v1).toBe(hmac(`${t}.${request.body}`));
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('crm:pa:ss').toString('base64')}`);
    expect(request.headers['x-svc-event-uuid']).toBe(body.event.uuid);
    expect(request.headers['x-svc-delivery-attempt']).toBe('1');
    expect(request.headers['content-type']).toBe('application/json');

    const responses = await ok(
      'GET',
      `/webhook-responses?organisation_uuid=${DEMO.org}&event_uuid=${body.event.uuid}&webhook_configuration_uuid=${webhook.uuid}`,
    );
    expect(responses).toEqual([
      {
        uuid: expect.any(String),
        organisation_uuid: DEMO.org,
        account_uuid: DEMO.secondAccount,
        webhook_configuration_uuid: webhook.uuid,
        event_uuid: body.event.uuid,
        object_uuid: payment.uuid,
        sent_at: expect.any(Number),
        error: 'false',
        status_code: 200,
        reason_phrase: 'OK',
        attempt: 1,
        response_time: expect.any(Number),
        do_not_retry: 'false',
      },
    ]);
    const single = await ok('GET', `/webhook-responses/${responses[0].uuid}`);
    expect(single).toMatchObject({ do_not_retry: 'false', request_body: request.body, response_body: 'thanks' });
    expect(single.response_time).toEqual(expect.any(Number));
    expect(JSON.parse(single.request_headers).authorization).toBe('[redacted]');
    expect(JSON.stringify(single)).not.toContain('pa:ss');
  });

  it('retries on the published schedule until the receiver recovers, then stops', async () => {
    const webhook = await endpoint();
    await subscribe(webhook.uuid, 'svc.payments.payment.succeeded');
    answer(webhook, [500, 503, 502]);
    const payment = await pay('4100');
    await settle();
    expect(requestsForObject(payment.uuid)).toHaveLength(1);
    for (const [wait, expected] of [
      [59, 1],
      [1, 2],
      [299, 2],
      [1, 3],
      [900, 4],
      [3600, 4],
    ] as const) {
      advanceClock(wait);
      await settle();
      expect(requestsForObject(payment.uuid)).toHaveLength(expected);
    }
    const seen = requestsForObject(payment.uuid);
    expect(new Set(seen.map((r) => r.headers['x-svc-event-uuid'])).size).toBe(1);
    expect(seen.map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['1', '2', '3', '4']);
    const eventUuid = String(seen[0]?.headers['x-svc-event-uuid']);
    const logged = await attemptsLogged(webhook, eventUuid);
    expect(logged.map((r: { status_code: number; error: string }) => [r.status_code, r.error])).toEqual([
      [200, 'false'],
      [502, 'true'],
      [503, 'true'],
      [500, 'true'],
    ]);
  });

  it('gets the event to a receiver that refused connections, once it is back', async () => {
    const closed = await startReceiver(() => undefined, inject('receiverTls'));
    const closedPort = closed.port;
    await closed.close();
    const webhook = await endpoint();
    const path = new URL(webhook.endpoint).pathname;
    await ok('PATCH', `/webhooks/${webhook.uuid}`, { endpoint: `https://127.0.0.1:${closedPort}${path}` });
    await subscribe(webhook.uuid, 'svc.payments.payment.succeeded');
    const payment = await pay('4150');
    await settle();
    expect(requestsForObject(payment.uuid)).toHaveLength(0);
    // The receiver is back (at its usual address) and fails once more before it recovers.
    await ok('PATCH', `/webhooks/${webhook.uuid}`, { endpoint: `${receiverUrl()}/${endpoints}` });
    answer(webhook, [503]);
    advanceClock(60);
    await settle();
    advanceClock(300);
    await settle();
    const seen = requestsForObject(payment.uuid);
    expect(seen.map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['2', '3']);
    const eventUuid = String(seen[0]?.headers['x-svc-event-uuid']);
    const logged = await attemptsLogged(webhook, eventUuid);
    expect(logged.map((r: { status_code?: number; error: string }) => [r.status_code, r.error])).toEqual([
      [200, 'false'],
      [503, 'true'],
      [undefined, 'true'],
    ]);
    const refused = await ok('GET', `/webhook-responses/${logged[2].uuid}`);
    expect(refused.error_message).toMatch(/ECONNREFUSED|refused/i);
  });

  it('shows the traffic of an endpoint only to who manages it, and redelivers on request', async () => {
    const webhook = await endpoint();
    await subscribe(webhook.uuid, 'svc.payments.payment.succeeded');
    const payment = await pay('4160');
    await settle();
    const [logged] = await ok(
      'GET',
      `/webhook-responses?organisation_uuid=${DEMO.org}&webhook_configuration_uuid=${webhook.uuid}`,
    );
    expect(logged.object_uuid).toBe(payment.uuid);
    // A client with a grant on the payment's account only does not manage the organisation-wide endpoint.
    const scoped = await createClient({ grants: [{ organisation_uuid: DEMO.org, account_uuid: DEMO.secondAccount }] });
    const scopedToken = await tokenFor({ id: scoped.client_id, secret: scoped.client_secret });
    expect((await api('GET', `/webhooks/${webhook.uuid}`, undefined, scopedToken)).status).toBe(403);
    expect((await api('GET', `/webhook-responses/${logged.uuid}`, undefined, scopedToken)).status).toBe(403);
    expect((await api('POST', `/webhook-responses/${logged.uuid}/redeliver`, undefined, scopedToken)).status).toBe(403);
    const listed = await api(
      'GET',
      `/webhook-responses?organisation_uuid=${DEMO.org}&account_uuid=${DEMO.secondAccount}`,
      undefined,
      scopedToken,
    );
    expect(listed.status).toBe(200);
    expect(listed.json.map((r: { uuid: string }) => r.uuid)).not.toContain(logged.uuid);
    expect((await api('GET', `/webhook-responses/${logged.uuid}`, undefined, otherToken)).status).toBe(403);
    // The owner redelivers, twice in the same second: two new deliveries of the same event.
    const first = await ok('POST', `/webhook-responses/${logged.uuid}/redeliver`, undefined, 202);
    const second = await ok('POST', `/webhook-responses/${logged.uuid}/redeliver`, undefined, 202);
    expect(first.delivery_uuid).not.toBe(second.delivery_uuid);
    await settle();
    const seen = requestsForObject(payment.uuid);
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((r) => r.headers['x-svc-event-uuid'])).size).toBe(1);
  });

  it('gives up after ten attempts, the last marked do_not_retry', async () => {
    const webhook = await endpoint();
    await subscribe(webhook.uuid, 'svc.payments.payment.succeeded');
    answer(
      webhook,
      Array.from({ length: 12 }, () => 500),
    );
    const payment = await pay('4170');
    await settle();
    for (const delay of [60, 300, 900, 3600, 10_800, 21_600, 43_200, 86_400, 86_400, 86_400]) {
      advanceClock(delay);
      await settle();
    }
    const seen = requestsForObject(payment.uuid);
    expect(seen.map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(
      Array.from({ length: 10 }, (_, i) => String(i + 1)),
    );
    const eventUuid = String(seen[0]?.headers['x-svc-event-uuid']);
    const logged = await attemptsLogged(webhook, eventUuid);
    expect(logged).toHaveLength(10);
    expect((await ok('GET', `/webhook-responses/${logged[0].uuid}`)).do_not_retry).toBe('true');
    expect((await ok('GET', `/webhook-responses/${logged[1].uuid}`)).do_not_retry).toBe('false');
    // Eleven settles of every background task (about 5 s alone): more than 30 s on two loaded cores.
  }, 60_000);

  it('gets the event to a receiver that timed out, once it answers in time', async () => {
    const webhook = await endpoint();
    await subscribe(webhook.uuid, 'svc.payments.payment.succeeded');
    answer(webhook, [HANG]);
    process.env.SVC_WEBHOOK_TIMEOUT_MS = '300';
    try {
      const payment = await pay('4180');
      await settle();
      advanceClock(60);
      await settle();
      const seen = requestsForObject(payment.uuid);
      expect(seen.map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['1', '2']);
      const eventUuid = String(seen[0]?.headers['x-svc-event-uuid']);
      const logged = await attemptsLogged(webhook, eventUuid);
      expect(logged.map((r: { status_code?: number; error: string }) => [r.status_code, r.error])).toEqual([
        [200, 'false'],
        [undefined, 'true'],
      ]);
      expect((await ok('GET', `/webhook-responses/${logged[1].uuid}`)).error_message).toMatch(/timed out/i);
    } finally {
      delete process.env.SVC_WEBHOOK_TIMEOUT_MS;
    }
  });

  it('stops at 410 Gone', async () => {
    const webhook = await endpoint();
    await subscribe(webhook.uuid, 'svc.payments.payment.succeeded');
    answer(webhook, [410]);
    const payment = await pay('4200');
    await settle();
    advanceClock(2 * 86_400);
    await settle();
    expect(requestsForObject(payment.uuid)).toHaveLength(1);
    const eventUuid = String(requestsForObject(payment.uuid)[0]?.headers['x-svc-event-uuid']);
    const [logged] = await attemptsLogged(webhook, eventUuid);
    expect((await ok('GET', `/webhook-responses/${logged.uuid}`)).do_not_retry).toBe('true');
  });

  it('a worker that dies after sending is retried; the receiver sees the same event twice', async () => {
    const webhook = await endpoint();
    await subscribe(webhook.uuid, 'svc.payments.payment.succeeded');
    const payment = await pay('4300');
    await settle();
    expect(requestsForObject(payment.uuid)).toHaveLength(1);
    const [first] = await ok(
      'GET',
      `/webhook-responses?organisation_uuid=${DEMO.org}&webhook_configuration_uuid=${webhook.uuid}`,
    );
    // A redelivery of that event, played by a worker that sends and dies before recording.
    const redelivered = await ok('POST', `/webhook-responses/${first.uuid}/redeliver`, undefined, 202);
    const claimed = await claimAttempt(redelivered.delivery_uuid);
    if (!claimed) throw new Error('nothing to claim');
    await sendAttempt(claimed);
    expect(requestsForObject(payment.uuid)).toHaveLength(2);
    await settle();
    expect(requestsForObject(payment.uuid)).toHaveLength(2);
    advanceClock(61);
    await settle();
    const seen = requestsForObject(payment.uuid);
    expect(seen).toHaveLength(3);
    expect(seen.slice(1).map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['1', '2']);
    const eventUuid = String(seen[0]?.headers['x-svc-event-uuid']);
    expect(new Set(seen.map((r) => r.headers['x-svc-event-uuid']))).toEqual(new Set([eventUuid]));
    const logged = await attemptsLogged(webhook, eventUuid);
    expect(logged).toHaveLength(3);
    const singles = await Promise.all(logged.map((r: { uuid: string }) => ok('GET', `/webhook-responses/${r.uuid}`)));
    const lost = singles.filter((r) => /No outcome was recorded/.test(r.error_message ?? ''));
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ attempt: 1, error: 'true' });
  });

  it('evaluates filters per event', async () => {
    const webhook = await endpoint();
    await subscribe(webhook.uuid, 'svc.payments.payment.succeeded', {
      filter: 'event.data["amount"]["value"] >= 5000 and event.data.payment_method == "card"',
    });
    const small = await pay('4999');
    const large = await pay('5000');
    await settle();
    expect(requestsForObject(small.uuid).length).toBe(0);
    expect(requestsForObject(large.uuid).length).toBeGreaterThanOrEqual(1);
  });

  it('refuses private targets when they are not allowed, without connecting', async () => {
    const webhook = await endpoint();
    await subscribe(webhook.uuid, 'svc.payments.payment.succeeded');
    const connections = receiver.connections;
    process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'false';
    try {
      const payment = await pay('4400');
      await settle();
      expect(receiver.connections).toBe(connections);
      const logged = await ok(
        'GET',
        `/webhook-responses?organisation_uuid=${DEMO.org}&webhook_configuration_uuid=${webhook.uuid}`,
      );
      expect(logged.length).toBeGreaterThanOrEqual(1);
      const single = await ok('GET', `/webhook-responses/${logged[0].uuid}`);
      expect(single).toMatchObject({ error: 'true', object_uuid: payment.uuid });
      expect(single.error_message).toMatch(/public|private|not allowed|blocked/i);
    } finally {
      process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'true';
    }
  });

  it('delivers every event name the payments and subscriptions capabilities emit', async () => {
    const webhook = await endpoint();
    // Every name the two capabilities emit with the simulated provider (a failed refund,
    // disputes and revoked mandates come from a real provider's events: test/stripe.test.ts and
    // test/stripe-money-safety.test.ts deliver those).
    const fromRealProviders = new Set([
      'svc.payments.refund.failed',
      'svc.payments.payment.disputed',
      'svc.payments.payment.dispute_closed',
      'svc.payments.payment.dispute_funds_withdrawn',
      'svc.payments.payment.dispute_funds_reinstated',
      'svc.payments.payment_source.deactivated',
    ]);
    const names = EVENT_NAMES.filter(
      (name) => /^svc\.(payments|subscriptions)\./.test(name) && !fromRealProviders.has(name),
    );
    expect(names).toHaveLength(13);
    for (const name of names) await subscribe(webhook.uuid, name);
    const succeeded = await pay('5100');
    await pay('5200', '4000000000000002');
    const pending = await ok(
      'POST',
      '/payments',
      {
        account_uuid: DEMO.secondAccount,
        payment_method: 'twint',
        profile: 'twint',
        amount: { value: '5300', currency: 'CHF' },
      },
      201,
    );
    await ok('POST', `/payments/${pending.uuid}/cancel`);
    await ok('POST', `/payments/${succeeded.uuid}/refunds`, { amount: { value: '100', currency: 'CHF' } });
    const subscription = await newSubscription('4000000000000341', 700);
    await ok('POST', `/subscriptions/${subscription.uuid}/activate`);
    await ok('POST', `/subscriptions/${subscription.uuid}/suspend`);
    await ok('POST', `/subscriptions/${subscription.uuid}/activate`);
    const toClose = await ok('POST', `/subscriptions/${subscription.uuid}/invoices`, {}, 201);
    await ok('POST', `/subscriptions/${subscription.uuid}/invoices/${toClose.uuid}/close`, { status: 'cancelled' });
    const toPay = await ok('POST', `/subscriptions/${subscription.uuid}/invoices`, {}, 201);
    await ok('POST', `/subscriptions/${subscription.uuid}/invoices/${toPay.uuid}/charge-attempts`, undefined, 201);
    await ok('POST', `/subscriptions/${subscription.uuid}/invoices/${toPay.uuid}/close`, { status: 'paid' });
    await ok('PATCH', `/subscriptions/${subscription.uuid}`, { amount: 800 });
    await ok('POST', `/subscriptions/${subscription.uuid}/cancel`);
    await settle();
    const received = receiver.requests
      .filter((r) => r.url === `/hooks/${endpoints}`)
      .map((r) => JSON.parse(r.body).event as { name: string; object: string; object_uuid: string; data: unknown });
    expect(new Set(received.map((e) => e.name))).toEqual(new Set(names));
    const refund = received.find((e) => e.name === 'svc.payments.refund.succeeded');
    expect(refund?.object).toBe('refund');
    expect(refund?.data).toMatchObject({ payment_uuid: succeeded.uuid, amount: { value: '100', currency: 'CHF' } });
    const failedAttempt = received.find((e) => e.name === 'svc.subscriptions.charge_attempt.failed');
    expect(failedAttempt?.data).toMatchObject({ status: 'failed', invoice: { uuid: toPay.uuid } });
    // Who made each subscription change is in its data (contract section 12).
    const updated = received.find((e) => e.name === 'svc.subscriptions.subscription.updated');
    expect(updated?.data).toMatchObject({ amount: 800, changed_by: { actor: 'organisation', channel: 'api' } });
    expect(updated).not.toHaveProperty('changed_by');
  });

  it('a state change whose Lambda died right after writing still produces its event', async () => {
    const webhook = await endpoint();
    await subscribe(webhook.uuid, 'svc.payments.payment.succeeded');
    // The payment item written with its event, and nothing else: no response, no handler code after it.
    const template = await pay('5400');
    await settle();
    const stored = await findPayment(template.uuid);
    if (!stored) throw new Error('setup');
    const orphan = { ...stored, uuid: newUuid(), events: [] as typeof stored.events };
    orphan.events = paymentStatusEvents(orphan);
    await transactWrite([{ item: newPaymentWrite(orphan) }]);
    await settle();
    const [request] = requestsForObject(orphan.uuid);
    expect(JSON.parse(request?.body ?? '{}').event).toMatchObject({
      name: 'svc.payments.payment.succeeded',
      object_uuid: orphan.uuid,
      data: { uuid: orphan.uuid, status: 'succeeded' },
    });
  });

  it('delivers subscription events with the subscription as GET returns it', async () => {
    const webhook = await endpoint();
    await subscribe(webhook.uuid, 'svc.subscriptions.subscription.created');
    const subscription = await newSubscription('4242424242424242', 1000);
    await settle();
    const [request] = requestsForObject(subscription.uuid);
    expect(request).toBeDefined();
    expect(JSON.parse(request?.body ?? '{}').event).toMatchObject({
      name: 'svc.subscriptions.subscription.created',
      object: 'subscription',
      data: await ok('GET', `/subscriptions/${subscription.uuid}`),
    });
    expect(now()).toBeGreaterThan(0);
  });
});
