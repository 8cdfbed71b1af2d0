import { SQSClient } from '@aws-sdk/client-sqs';
import { advanceClock, definedFields, freezeClock, now } from '@svc/core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { type Receiver, startReceiver } from '../../../packages/outbound/src/testing/receiver';
import { call, cardPaymentBody, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { DEFAULT_DELIVERIES_PER_SECOND, MAX_DELIVERIES_PER_SECOND, throttleFloorSeconds } from './domain/pacing';
import { sweepDueDeliveries } from './handlers/delivery-sweeper';
import { findDelivery } from './repository/webhook-repository';

/**
 * Webhook pacing (contract section 11, domain/pacing.ts): an endpoint receives at most its
 * `max_deliveries_per_second` by the service clock, the rest wait and arrive later, none failed
 * or dropped; a 429, or a 503 with Retry-After, pauses it, and such an answer is no failed
 * attempt.
 */
let token: string;
let receiver: Receiver;
/** What the receiver answers on a path, request by request (200 once used up). */
const answers = new Map<string, Array<{ status: number; headers?: Record<string, string> }>>();
/** The service-clock second each request arrived in, by path. */
const arrivals = new Map<string, number[]>();

beforeAll(async () => {
  await seedDemo();
  freezeClock(Math.floor(Date.now() / 1000));
  token = await tokenFor(DEMO.client);
  receiver = await startReceiver((request, response) => {
    const path = request.url ?? '';
    arrivals.set(path, [...(arrivals.get(path) ?? []), now()]);
    const answer = answers.get(path)?.shift() ?? { status: 200 };
    response.writeHead(answer.status, { 'content-type': 'text/plain', ...(answer.headers ?? {}) });
    response.end(answer.status === 200 ? 'thanks' : 'not now');
  }, inject('receiverTls'));
});

beforeEach(() => {
  freezeClock(now());
});

/** Endpoints made by the running test: deleted after it, so no later test's payments also fan out to them. */
const made: string[] = [];

afterEach(async () => {
  for (const uuid of made.splice(0)) expect((await api('DELETE', `/webhooks/${uuid}`)).status).toBe(204);
});

afterAll(async () => {
  await receiver.close();
});

async function api(method: string, path: string, body?: unknown) {
  return call(method, path, { token, ...definedFields({ body }) });
}

async function ok(method: string, path: string, body?: unknown, status = 200) {
  const response = await api(method, path, body);
  expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
  return response.json;
}

const settle = () => ok('POST', '/_local/settle');
let paths = 0;

/** A new endpoint (its own receiver path) subscribed to payment.succeeded. */
async function endpoint(fields: Record<string, unknown> = {}) {
  paths += 1;
  const path = `/paced/${paths}`;
  const webhook = await ok(
    'POST',
    '/webhooks',
    { organisation_uuid: DEMO.org, endpoint: `https://127.0.0.1:${receiver.port}${path}`, ...fields },
    201,
  );
  await ok(
    'POST',
    '/event-subscriptions',
    {
      organisation_uuid: DEMO.org,
      action_configuration_uuid: webhook.uuid,
      action_type: 'webhook',
      event_name: 'svc.payments.payment.succeeded',
    },
    201,
  );
  made.push(webhook.uuid as string);
  // Earlier tests' deliveries are settled before this one's clock starts.
  await settle();
  return { uuid: webhook.uuid as string, path, json: webhook };
}

const pay = () => ok('POST', '/payments', cardPaymentBody(), 201);
const requestsAt = (path: string) => receiver.requests.filter((r) => r.url === path);

async function responsesOf(webhook: { uuid: string }) {
  const listed = (await ok(
    'GET',
    `/webhook-responses?organisation_uuid=${DEMO.org}&webhook_configuration_uuid=${webhook.uuid}&size=500`,
  )) as Array<{ uuid: string }>;
  return (await Promise.all(listed.map((r) => ok('GET', `/webhook-responses/${r.uuid}`)))) as Array<{
    attempt: number;
    status_code?: number;
    error: string;
    event_uuid: string;
  }>;
}

function perSecond(path: string): Map<number, number> {
  const counts = new Map<number, number>();
  for (const second of arrivals.get(path) ?? []) counts.set(second, (counts.get(second) ?? 0) + 1);
  return counts;
}

describe('an endpoint’s pace', () => {
  it('sends at most max_deliveries_per_second; the rest wait and arrive later, each once, none counted as an attempt', async () => {
    const target = await endpoint({ max_deliveries_per_second: 3 });
    expect(target.json.max_deliveries_per_second).toBe(3);
    const payments = [];
    for (let i = 0; i < 10; i++) payments.push(await pay());
    const start = now();
    await settle();
    expect(requestsAt(target.path)).toHaveLength(3);
    for (let second = 1; second <= 5 && requestsAt(target.path).length < 10; second++) {
      advanceClock(1);
      await settle();
      expect(requestsAt(target.path).length).toBeLessThanOrEqual(3 * (second + 1));
    }
    expect(now() - start).toBe(3);
    const received = requestsAt(target.path).map((r) => JSON.parse(r.body).event.object_uuid);
    expect(new Set(received)).toEqual(new Set(payments.map((p) => p.uuid)));
    expect(received).toHaveLength(10);
    expect(Math.max(...perSecond(target.path).values())).toBe(3);
    // Waiting is no attempt: one Webhook Response each, its first attempt, delivered.
    const log = await responsesOf(target);
    expect(log).toHaveLength(10);
    expect(log.every((r) => r.attempt === 1 && r.status_code === 200 && r.error === 'false')).toBe(true);
  });

  it('sends a late reservation only on a slot of the second it comes in, ahead of newer events', async () => {
    const target = await endpoint({ max_deliveries_per_second: 3 });
    for (let i = 0; i < 10; i++) await pay();
    await settle();
    expect(requestsAt(target.path)).toHaveLength(3);
    // The next second's three are reserved; nobody came for them (a slow queue): they are late now.
    advanceClock(2);
    for (let second = 0; second < 6 && requestsAt(target.path).length < 10; second++) {
      await settle();
      advanceClock(1);
    }
    expect(requestsAt(target.path)).toHaveLength(10);
    // Never more than three in one second, the late ones included.
    expect(Math.max(...perSecond(target.path).values())).toBeLessThanOrEqual(3);
  });

  it('holds to the rate when several workers pace the same endpoint at once', async () => {
    const target = await endpoint({ max_deliveries_per_second: 4 });
    // Forty events wait in the queue together; the local drain works four batches of ten at once.
    for (let i = 0; i < 40; i++) await pay();
    const start = now();
    for (let second = 0; second < 15 && requestsAt(target.path).length < 40; second++) {
      await settle();
      advanceClock(1);
    }
    expect(requestsAt(target.path)).toHaveLength(40);
    expect(new Set(requestsAt(target.path).map((r) => r.headers['x-svc-event-uuid'])).size).toBe(40);
    expect(Math.max(...perSecond(target.path).values())).toBeLessThanOrEqual(4);
    // Ten seconds at four a second: every second reserved to the full.
    expect(now() - start).toBe(10);
    // Forty payments and their deliveries: about 5 s alone, six times that on two loaded cores.
  }, 90_000);

  it('waits as long as a 429’s Retry-After, holds the endpoint’s other deliveries, and counts the 429 as no failed attempt', async () => {
    const target = await endpoint();
    answers.set(target.path, [{ status: 429, headers: { 'retry-after': '10' } }]);
    await pay();
    await settle();
    expect(requestsAt(target.path)).toHaveLength(1);
    advanceClock(5);
    await pay();
    await settle();
    // Paused: neither the retry nor the new event is sent.
    expect(requestsAt(target.path)).toHaveLength(1);
    advanceClock(5);
    await settle();
    expect(requestsAt(target.path)).toHaveLength(3);
    const log = await responsesOf(target);
    expect(log.map((r) => [r.attempt, r.status_code]).sort()).toEqual([
      [1, 200],
      [1, 429],
      [2, 200],
    ]);
  });

  it('never fails a delivery for 429s: twelve in a row (more than the ten attempts), waiting ever longer, then delivered', async () => {
    const target = await endpoint();
    answers.set(
      target.path,
      Array.from({ length: 12 }, () => ({ status: 429, headers: { 'retry-after': '1' } })),
    );
    await pay();
    // Each wait at least the growing floor (1 s, 2 s, 4 s …), whatever Retry-After says.
    let issued = now();
    for (let round = 0; round < 20 && requestsAt(target.path).length < 13; round++) {
      await settle();
      advanceClock(throttleFloorSeconds(round));
      // Tokens live an hour by the service clock: a new one only when this one is near its end.
      if (now() - issued > 3000) {
        token = await tokenFor(DEMO.client);
        issued = now();
      }
    }
    expect(requestsAt(target.path)).toHaveLength(13);
    const log = await responsesOf(target);
    expect(log.filter((r) => r.status_code === 429)).toHaveLength(12);
    expect(log.find((r) => r.attempt === 13)).toMatchObject({ status_code: 200, error: 'false' });
  }, 120_000);

  it('waits ever longer between throttled attempts, whatever Retry-After: 1 says (1 s, 2 s, 4 s …)', async () => {
    const target = await endpoint();
    answers.set(
      target.path,
      Array.from({ length: 20 }, () => ({ status: 429, headers: { 'retry-after': '1' } })),
    );
    await pay();
    const start = now();
    // Ten seconds, settled every second: honouring Retry-After alone sends ten times.
    for (let second = 0; second < 10; second++) {
      await settle();
      advanceClock(1);
    }
    const sentAt = (arrivals.get(target.path) ?? []).map((at) => at - start);
    expect(sentAt).toEqual([0, 1, 3, 7]);
  });

  it('takes a 503’s Retry-After as a date too; a 503 without one is a failed attempt on the back-off', async () => {
    const dated = await endpoint();
    answers.set(dated.path, [{ status: 503, headers: { 'retry-after': new Date(Date.now() + 20_000).toUTCString() } }]);
    await pay();
    await settle();
    advanceClock(15);
    await settle();
    expect(requestsAt(dated.path)).toHaveLength(1);
    advanceClock(7);
    await settle();
    expect(requestsAt(dated.path)).toHaveLength(2);

    const plain = await endpoint();
    answers.set(plain.path, [{ status: 503 }]);
    await pay();
    await settle();
    advanceClock(30);
    await settle();
    // No Retry-After: the published back-off (1 minute), as any failure.
    expect(requestsAt(plain.path)).toHaveLength(1);
    advanceClock(31);
    await settle();
    expect(requestsAt(plain.path)).toHaveLength(2);
  });
});

describe('the sweep in AWS (a minute apart)', () => {
  it('takes what falls due before the next sweep and sends each with the queue’s delay until its second', async () => {
    const target = await endpoint({ max_deliveries_per_second: 1 });
    for (let i = 0; i < 4; i++) await pay();
    // The first is sent now; the other three are held for the next three seconds.
    await settle();
    expect(requestsAt(target.path)).toHaveLength(1);
    const sent = vi.spyOn(SQSClient.prototype, 'send');
    process.env.SVC_DELIVERY_SWEEP_LOOKAHEAD_SECONDS = '60';
    try {
      const at = now();
      expect(await sweepDueDeliveries()).toBeGreaterThanOrEqual(3);
      const all = sent.mock.calls.flatMap(([command]) => {
        const input = (command as { input: { Entries?: Array<{ MessageBody: string; DelaySeconds?: number }> } }).input;
        return input.Entries ?? [];
      });
      // This endpoint's (earlier tests' retries may fall due within the minute too).
      const entries = [];
      for (const entry of all) {
        const delivery = await findDelivery(JSON.parse(entry.MessageBody).delivery_uuid);
        if (delivery?.endpoint_uuid === target.uuid) entries.push(entry);
      }
      expect(entries.map((e) => e.DelaySeconds ?? 0).sort()).toEqual([1, 2, 3]);
      // Each left to its message until its second plus the grace, not the sweep's time.
      for (const entry of entries) {
        const delivery = await findDelivery(JSON.parse(entry.MessageBody).delivery_uuid);
        expect(delivery?.queued_until).toBe((delivery?.paced_for ?? 0) + 300);
        expect(delivery?.paced_for).toBe(at + (entry.DelaySeconds ?? 0));
      }
    } finally {
      delete process.env.SVC_DELIVERY_SWEEP_LOOKAHEAD_SECONDS;
      sent.mockRestore();
    }
  });
});

describe('max_deliveries_per_second on an endpoint', () => {
  it('defaults to 50, takes 1 to the stated maximum, keeps on PATCH, returns to the default on null or PUT without it', async () => {
    const plain = await endpoint();
    expect(plain.json.max_deliveries_per_second).toBe(DEFAULT_DELIVERIES_PER_SECOND);
    for (const bad of [0, MAX_DELIVERIES_PER_SECOND + 1, 2.5, '10', true]) {
      const refused = await api('POST', '/webhooks', {
        organisation_uuid: DEMO.org,
        endpoint: 'https://example.org/paced',
        max_deliveries_per_second: bad,
      });
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(refused.text).toContain('max_deliveries_per_second');
    }
    const target = await endpoint({ max_deliveries_per_second: MAX_DELIVERIES_PER_SECOND });
    const patched = await ok('PATCH', `/webhooks/${target.uuid}`, { alias: 'CRM' });
    expect(patched.max_deliveries_per_second).toBe(MAX_DELIVERIES_PER_SECOND);
    expect((await ok('GET', `/webhooks/${target.uuid}`)).max_deliveries_per_second).toBe(MAX_DELIVERIES_PER_SECOND);
    const reset = await ok('PATCH', `/webhooks/${target.uuid}`, { max_deliveries_per_second: null });
    expect(reset.max_deliveries_per_second).toBe(DEFAULT_DELIVERIES_PER_SECOND);
    await ok('PATCH', `/webhooks/${target.uuid}`, { max_deliveries_per_second: 7 });
    const replaced = await ok('PUT', `/webhooks/${target.uuid}`, { endpoint: target.json.endpoint });
    expect(replaced.max_deliveries_per_second).toBe(DEFAULT_DELIVERIES_PER_SECOND);
    const listed = await ok('GET', `/webhooks?organisation_uuid=${DEMO.org}`);
    expect(listed.find((w: { uuid: string }) => w.uuid === target.uuid).max_deliveries_per_second).toBe(
      DEFAULT_DELIVERIES_PER_SECOND,
    );
  });
});

// Last: it moves the service clock days ahead, and the tokens with it.
describe('an endpoint that only ever asks to wait', () => {
  it('gives up on an endpoint that answers only 429 once the delivery is as old as the retry schedule', async () => {
    const target = await endpoint();
    answers.set(
      target.path,
      Array.from({ length: 3 }, () => ({ status: 429, headers: { 'retry-after': '1' } })),
    );
    await pay();
    await settle();
    expect(requestsAt(target.path)).toHaveLength(1);
    // Past the whole schedule (about 2.9 days): the next 429 ends the delivery as failed.
    advanceClock(260_000);
    // Tokens live an hour by the service clock.
    token = await tokenFor(DEMO.client);
    await settle();
    expect(requestsAt(target.path)).toHaveLength(2);
    const log = await responsesOf(target);
    expect(log.map((r) => r.status_code)).toEqual([429, 429]);
    advanceClock(100_000);
    token = await tokenFor(DEMO.client);
    await settle();
    expect(requestsAt(target.path)).toHaveLength(2);
  });
});
