import { advanceClock, freezeClock, newUuid, now } from '@svc/core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { type Receiver, startReceiver } from '../../../packages/outbound/src/testing/receiver';
import { call, cardPaymentBody, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { IN_FLIGHT_WAIT_SECONDS, type InFlight, inFlightCaps, takeInFlight } from './domain/in-flight';

/** Caps of this file's races (SVC_WEBHOOK_IN_FLIGHT_*), below the defaults so 30 or 40 racers exceed them. */
const DEFAULT_IN_FLIGHT_PER_ENDPOINT = 10;
const DEFAULT_IN_FLIGHT_PER_ORGANISATION = 20;

/**
 * Issue 44, point 3: deliveries in flight per endpoint and per organisation, counted in the table
 * before the claim (domain/in-flight.ts). The attack: one organisation's hanging endpoints held
 * every invocation of the shared delivery worker (a batch waits for its slowest send). Now no
 * endpoint or organisation has more than its cap in flight, whatever the racing workers, and what
 * finds no room waits (unclaimed, no attempt used) and is delivered later.
 */
let token: string;
let receiver: Receiver;
/** Requests the receiver holds open right now, and the most it ever held at once. */
let open = 0;
let mostOpen = 0;

beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.client);
  receiver = await startReceiver((_request, response) => {
    open += 1;
    mostOpen = Math.max(mostOpen, open);
    // Answers after a real 300 ms: long enough for every send of a batch to overlap.
    setTimeout(() => {
      open -= 1;
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('thanks');
    }, 300);
  }, inject('receiverTls'));
});

beforeEach(() => {
  // Counts live in per-minute items: each test on a clock frozen (the test environment lets it run
  // again after every test) so that no test's asks straddle a turn of the minute.
  freezeClock(Math.floor(Date.now() / 1000));
  process.env.SVC_WEBHOOK_IN_FLIGHT_PER_ENDPOINT = String(DEFAULT_IN_FLIGHT_PER_ENDPOINT);
  process.env.SVC_WEBHOOK_IN_FLIGHT_PER_ORGANISATION = String(DEFAULT_IN_FLIGHT_PER_ORGANISATION);
});

afterEach(() => {
  delete process.env.SVC_WEBHOOK_IN_FLIGHT_PER_ENDPOINT;
  delete process.env.SVC_WEBHOOK_IN_FLIGHT_PER_ORGANISATION;
});

afterAll(async () => {
  await receiver.close();
});

const delivery = (endpoint: string, organisation: string) => ({
  uuid: newUuid(),
  endpoint_uuid: endpoint,
  organisation_uuid: organisation,
});

/** Each delivery a batch of its own, all at once (as many racing workers): the batches that got a place. */
async function race(deliveries: Array<ReturnType<typeof delivery>>) {
  const taken = await Promise.all(deliveries.map((d) => takeInFlight([d], now())));
  return taken.filter((slot) => slot.granted.has(0));
}

/** Places taken by one batch. */
const one = async (d: ReturnType<typeof delivery>): Promise<InFlight> => takeInFlight([d], now());

describe('places in flight, counted in the table', () => {
  it('are 50 per endpoint and 50 per organisation unless the stage says otherwise', () => {
    delete process.env.SVC_WEBHOOK_IN_FLIGHT_PER_ENDPOINT;
    delete process.env.SVC_WEBHOOK_IN_FLIGHT_PER_ORGANISATION;
    expect(inFlightCaps()).toEqual({ endpoint: 50, organisation: 50 });
    process.env.SVC_WEBHOOK_IN_FLIGHT_PER_ENDPOINT = '0';
    expect(inFlightCaps().endpoint).toBe(50);
  });

  it(`gives one endpoint at most ${DEFAULT_IN_FLIGHT_PER_ENDPOINT} of 30 racing deliveries, and room again once given back`, async () => {
    const endpoint = newUuid();
    const organisation = newUuid();
    const held = await race(Array.from({ length: 30 }, () => delivery(endpoint, organisation)));
    expect(held).toHaveLength(DEFAULT_IN_FLIGHT_PER_ENDPOINT);
    expect((await one(delivery(endpoint, organisation))).granted.size).toBe(0);
    // Another endpoint of another organisation is not affected.
    const other = await one(delivery(newUuid(), newUuid()));
    expect(other.granted.size).toBe(1);
    await other.release();
    await Promise.all(held.map((slot) => slot.release()));
    // Given back twice is given back once.
    await held[0]?.release();
    const again = await race(Array.from({ length: 30 }, () => delivery(endpoint, organisation)));
    expect(again).toHaveLength(DEFAULT_IN_FLIGHT_PER_ENDPOINT);
    await Promise.all(again.map((slot) => slot.release()));
  });

  it(`gives one organisation at most ${DEFAULT_IN_FLIGHT_PER_ORGANISATION} of 40 racing deliveries to 40 endpoints; a refused one holds nothing`, async () => {
    const organisation = newUuid();
    const held = await race(Array.from({ length: 40 }, () => delivery(newUuid(), organisation)));
    expect(held).toHaveLength(DEFAULT_IN_FLIGHT_PER_ORGANISATION);
    // The refused ones gave their endpoints' places back: those endpoints have all their room.
    const endpoint = newUuid();
    await Promise.all(held.map((slot) => slot.release()));
    const full = await race(Array.from({ length: 30 }, () => delivery(endpoint, organisation)));
    expect(full).toHaveLength(DEFAULT_IN_FLIGHT_PER_ENDPOINT);
    await Promise.all(full.map((slot) => slot.release()));
  });

  it('takes a batch’s places in one ask per endpoint and organisation, the first of each endpoint first', async () => {
    const organisation = newUuid();
    const busy = newUuid();
    const quiet = newUuid();
    const batch = [
      ...Array.from({ length: DEFAULT_IN_FLIGHT_PER_ENDPOINT + 3 }, () => delivery(busy, organisation)),
      delivery(quiet, organisation),
    ];
    const taken = await takeInFlight(batch, now());
    expect([...taken.granted].sort((a, b) => a - b)).toEqual([
      ...Array.from({ length: DEFAULT_IN_FLIGHT_PER_ENDPOINT }, (_, i) => i),
      DEFAULT_IN_FLIGHT_PER_ENDPOINT + 3,
    ]);
    // Racing single deliveries meanwhile get what is left of the organisation's cap, no more.
    const others = await race(Array.from({ length: 20 }, () => delivery(newUuid(), organisation)));
    expect(others).toHaveLength(DEFAULT_IN_FLIGHT_PER_ORGANISATION - DEFAULT_IN_FLIGHT_PER_ENDPOINT - 1);
    await taken.release();
    await Promise.all(others.map((slot) => slot.release()));
    // All given back: the whole cap is free again.
    expect(await race(Array.from({ length: 30 }, () => delivery(newUuid(), organisation)))).toHaveLength(
      DEFAULT_IN_FLIGHT_PER_ORGANISATION,
    );
  });
});

describe('the delivery worker', () => {
  it('sends no more than the endpoint’s cap at once; the rest wait, unattempted, and are delivered once each', async () => {
    process.env.SVC_WEBHOOK_IN_FLIGHT_PER_ENDPOINT = '2';
    const endpoint = await call('POST', '/webhooks', {
      token,
      body: { organisation_uuid: DEMO.org, endpoint: `https://127.0.0.1:${receiver.port}/capped` },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const subscribed = await call('POST', '/event-subscriptions', {
      token,
      body: {
        organisation_uuid: DEMO.org,
        action_configuration_uuid: endpoint.json.uuid,
        action_type: 'webhook',
        event_name: 'svc.payments.payment.succeeded',
      },
    });
    expect(subscribed.status, subscribed.text).toBe(201);
    const paid: string[] = [];
    for (let i = 0; i < 6; i++) {
      const payment = await call('POST', '/payments', { token, body: cardPaymentBody() });
      expect(payment.status, payment.text).toBe(201);
      paid.push(String(payment.json.uuid));
    }
    mostOpen = 0;
    // What found no room is due again IN_FLIGHT_WAIT_SECONDS later, by the service clock.
    const waits: number[] = [];
    for (let round = 0; round < 6 && receiver.requests.filter((r) => r.url === '/capped').length < 6; round++) {
      expect((await call('POST', '/_local/settle', { token })).status).toBe(200);
      waits.push(receiver.requests.filter((r) => r.url === '/capped').length);
      advanceClock(IN_FLIGHT_WAIT_SECONDS);
    }
    // Two at a time: 2, 4, 6 delivered after each wait.
    expect(waits).toEqual([2, 4, 6]);
    expect(mostOpen).toBeGreaterThan(0);
    expect(mostOpen).toBeLessThanOrEqual(2);
    const arrived = receiver.requests.filter((r) => r.url === '/capped');
    for (const uuid of paid) expect(arrived.filter((r) => r.body.includes(uuid))).toHaveLength(1);
    const responses = await call(
      'GET',
      `/webhook-responses?organisation_uuid=${DEMO.org}&webhook_configuration_uuid=${endpoint.json.uuid}&size=100`,
      { token },
    );
    expect(responses.status, responses.text).toBe(200);
    // One attempt each, all delivered: waiting for room is no attempt.
    expect(responses.json).toHaveLength(6);
    expect(
      responses.json.every((r: { attempt: number; error: string }) => r.attempt === 1 && r.error === 'false'),
    ).toBe(true);
  });
});
