import { advanceClock, freezeClock } from '@svc/core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Receiver, startReceiver, startSilentServer } from '../../../packages/outbound/src/testing/receiver';
import { call, cardPaymentBody, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { SLOW_AFTER_TIMEOUTS, SLOW_PAUSE_SECONDS } from './domain/slow-endpoints';

/**
 * Issue 44: organisation A's endpoint at a server that accepts and never answers, organisation
 * B's at a receiver that answers at once, both subscribed to their payments. A's attempts time
 * out (a tiny SVC_WEBHOOK_TIMEOUT_MS) until SLOW_AFTER_TIMEOUTS in a row; from then on its
 * deliveries stay out of the shared batches (nothing connects to the dead server) while B's are
 * delivered, and A's wait, pending, for the pause to end.
 */
let tokenA: string;
let tokenB: string;
let receiver: Receiver;
let dead: Receiver;
const EVENT = 'svc.payments.payment.succeeded';

beforeAll(async () => {
  await seedDemo();
  freezeClock(Math.floor(Date.now() / 1000));
  process.env.SVC_WEBHOOK_TIMEOUT_MS = '200';
  tokenA = await tokenFor(DEMO.client);
  tokenB = await tokenFor(DEMO.otherClient);
  receiver = await startReceiver((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('thanks');
  }, inject('receiverTls'));
  dead = await startSilentServer();
});

afterAll(async () => {
  delete process.env.SVC_WEBHOOK_TIMEOUT_MS;
  await receiver.close();
  await dead.close();
});

async function ok(token: string, method: string, path: string, body: unknown, status: number) {
  const response = await call(method, path, { token, body });
  expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
  return response.json;
}

async function hook(token: string, organisation: string, url: string) {
  const endpoint = await ok(token, 'POST', '/webhooks', { organisation_uuid: organisation, endpoint: url }, 201);
  await ok(
    token,
    'POST',
    '/event-subscriptions',
    {
      organisation_uuid: organisation,
      action_configuration_uuid: endpoint.uuid,
      action_type: 'webhook',
      event_name: EVENT,
    },
    201,
  );
  return String(endpoint.uuid);
}

const settle = () => ok(tokenA, 'POST', '/_local/settle', undefined, 200);

/** One payment of each organisation, then the pipeline settled: B's was delivered. */
async function round(): Promise<{ a: string; b: string }> {
  // Time moves between rounds, as it does between queue batches (workers re-read a pause each second).
  advanceClock(2);
  const a = await ok(tokenA, 'POST', '/payments', cardPaymentBody(), 201);
  const b = await ok(tokenB, 'POST', '/payments', cardPaymentBody({ account_uuid: DEMO.otherAccount }), 201);
  await settle();
  const delivered = receiver.requests.filter((r) => r.body.includes(String(b.uuid)));
  expect(delivered, `B's payment ${b.uuid} delivered once`).toHaveLength(1);
  return { a: String(a.uuid), b: String(b.uuid) };
}

async function responsesOf(token: string, endpoint: string): Promise<Array<{ object_uuid: string }>> {
  const listed = await call(
    'GET',
    `/webhook-responses?organisation_uuid=${DEMO.org}&webhook_configuration_uuid=${endpoint}&size=500`,
    { token },
  );
  expect(listed.status, listed.text).toBe(200);
  return listed.json as Array<{ object_uuid: string }>;
}

describe('an endpoint that keeps timing out', () => {
  it(`stops entering shared batches after ${SLOW_AFTER_TIMEOUTS} timeouts; the other organisation's deliveries go on`, async () => {
    const endpointA = await hook(tokenA, DEMO.org, `https://127.0.0.1:${dead.port}/dead`);
    await hook(tokenB, DEMO.otherOrg, `https://127.0.0.1:${receiver.port}/live`);
    for (let i = 1; i <= SLOW_AFTER_TIMEOUTS; i++) {
      await round();
      expect(dead.connections, `attempts to the dead server after round ${i}`).toBe(i);
    }
    // Slow now: A's deliveries wait in the due index, B's are sent as before.
    const later = [await round(), await round()];
    expect(dead.connections, 'attempts to the dead server once it is slow').toBe(SLOW_AFTER_TIMEOUTS);
    // A's deliveries are not lost: pending, and attempted once the pause is over (one timeout
    // pauses it again).
    const before = (await responsesOf(tokenA, endpointA)).length;
    expect(before).toBe(SLOW_AFTER_TIMEOUTS);
    advanceClock(SLOW_PAUSE_SECONDS + 1);
    tokenA = await tokenFor(DEMO.client);
    tokenB = await tokenFor(DEMO.otherClient);
    await settle();
    expect(dead.connections).toBeGreaterThan(SLOW_AFTER_TIMEOUTS);
    const tried = (await responsesOf(tokenA, endpointA)).map((r) => r.object_uuid);
    expect(tried.some((uuid) => later.some((r) => r.a === uuid))).toBe(true);
    // Six settles of the whole pipeline: 8 s alone, over 30 s beside the rest of the suite.
  }, 120_000);
});
