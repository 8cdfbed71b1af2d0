import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { advanceClock, derivedUuid, freezeClock, newUuid, now } from '@svc/core';
import { type StoredEvent, storedEventSchema } from '@svc/events';
import { registerOnboardingEventData } from '@svc/onboarding';
import { db, getItem, putItems, tableName } from '@svc/table';
import type { DynamoDBRecord, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { type Receiver, startReceiver } from '../../../packages/outbound/src/testing/receiver';
import { call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { streamEvents } from '../../../test/support/stream';
import { claimAttempt } from './domain/delivery';
import { processDeliveryBatch } from './handlers/delivery-worker';
import { fanOutMessages } from './handlers/fan-out';
import { publishStreamRecords } from './handlers/stream-publisher';
import { registerEventData } from './pipeline/envelope';
import { callsOf, PUT_EVENTS_MAX, resetBusClient } from './pipeline/publish';
import { deliveryKey, type Envelope } from './repository/items';

/**
 * The pipeline's batches: the publisher packs events of many stream records into PutEvents calls,
 * fan-out takes the bus's events ten at a time, the worker claims, sends and records a queue
 * batch together. Each must keep the one-by-one guarantees: order, a failure reported for the
 * record or message it belongs to, nothing lost and nothing doubled.
 */
let token: string;
let receiver: Receiver;
/** Status per receiver path, request by request (200 once used up). */
const answers = new Map<string, number[]>();

beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.client);
  receiver = await startReceiver((request, response) => {
    const status = answers.get(request.url ?? '')?.shift() ?? 200;
    response.writeHead(status, { 'content-type': 'text/plain' });
    response.end(status === 200 ? 'thanks' : 'not now');
  }, inject('receiverTls'));
});

beforeEach(() => {
  freezeClock(now());
});

afterAll(async () => {
  await receiver.close();
});

async function ok(method: string, path: string, body?: unknown, status = 200) {
  const response = await call(method, path, { token, ...(body === undefined ? {} : { body }) });
  expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
  return response.json;
}

let paths = 0;
async function hook(eventName = 'svc.payments.payment.succeeded') {
  paths += 1;
  const path = `/batches/${paths}`;
  const webhook = await ok(
    'POST',
    '/webhooks',
    { organisation_uuid: DEMO.org, endpoint: `https://127.0.0.1:${receiver.port}${path}` },
    201,
  );
  await ok(
    'POST',
    '/event-subscriptions',
    {
      organisation_uuid: DEMO.org,
      action_configuration_uuid: webhook.uuid,
      action_type: 'webhook',
      event_name: eventName,
    },
    201,
  );
  return { ...webhook, path } as { uuid: string; path: string };
}

const pay = () =>
  ok(
    'POST',
    '/payments',
    {
      account_uuid: DEMO.secondAccount,
      payment_method: 'card',
      profile: 'card',
      amount: { value: '1200', currency: 'CHF' },
      payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
    },
    201,
  );

const requestsAt = (path: string) => receiver.requests.filter((r) => r.url === path);
const objectOf = (body: string) => (JSON.parse(body) as { event: Envelope }).event.object_uuid;

/** An endpoint's Webhook Responses as GET returns each (the list leaves out the attempt). */
async function responsesOf(webhook: { uuid: string }) {
  const listed = (await ok(
    'GET',
    `/webhook-responses?organisation_uuid=${DEMO.org}&webhook_configuration_uuid=${webhook.uuid}`,
  )) as Array<{ uuid: string }>;
  return (await Promise.all(listed.map((r) => ok('GET', `/webhook-responses/${r.uuid}`)))) as Array<{
    uuid: string;
    attempt: number;
    status_code?: number;
    error: string;
    event_uuid: string;
  }>;
}

describe('the delivery worker, a queue batch at a time', () => {
  it('sends, logs and settles every delivery of a batch on its own, failures included', async () => {
    const good = await hook();
    const flaky = await hook();
    // The flaky receiver refuses its first four requests, then recovers.
    answers.set(flaky.path, [500, 503, 500, 502]);
    const payments = [];
    for (let i = 0; i < 12; i++) payments.push(await pay());
    await ok('POST', '/_local/settle');

    for (const target of [good, flaky]) {
      const seen = requestsAt(target.path).map((r) => objectOf(r.body));
      expect(new Set(seen)).toEqual(new Set(payments.map((p) => p.uuid)));
      expect(seen).toHaveLength(12);
    }
    const goodLog = await responsesOf(good);
    expect(goodLog).toHaveLength(12);
    expect(goodLog.every((r) => r.attempt === 1 && r.status_code === 200 && r.error === 'false')).toBe(true);
    const flakyLog = await responsesOf(flaky);
    expect(
      flakyLog
        .filter((r) => r.error === 'true')
        .map((r) => r.status_code)
        .sort(),
    ).toEqual([500, 500, 502, 503]);

    // The four refused ones come back on the schedule (60 s), as attempt 2, and only they.
    advanceClock(61);
    await ok('POST', '/_local/settle');
    const retried = requestsAt(flaky.path).slice(12);
    expect(retried).toHaveLength(4);
    expect(retried.every((r) => r.headers['x-svc-delivery-attempt'] === '2')).toBe(true);
    const after = await responsesOf(flaky);
    expect(after).toHaveLength(16);
    const byEvent = new Map<string, number[]>();
    for (const r of after) byEvent.set(r.event_uuid, [...(byEvent.get(r.event_uuid) ?? []), r.attempt]);
    expect([...byEvent.values()].map((attempts) => attempts.sort().join(',')).sort()).toEqual([
      ...Array(8).fill('1'),
      ...Array(4).fill('1,2'),
    ]);
    // Nothing is left to do: the good ones are not sent again.
    advanceClock(4000);
    await ok('POST', '/_local/settle');
    expect(requestsAt(good.path)).toHaveLength(12);
    expect(requestsAt(flaky.path)).toHaveLength(16);
  });

  it('reports only the message it could not read; a delivery that is gone or not due is no failure', async () => {
    const target = await hook();
    const payment = await pay();
    // Fan-out only: the delivery exists, nothing has been sent.
    await publishAndFanOut();
    const delivery = await deliveryFor(payment.uuid, target.uuid);
    const records = [
      sqsRecord('m-bad', 'not json'),
      sqsRecord('m-shape', JSON.stringify({ something: 'else' })),
      sqsRecord('m-unknown', JSON.stringify({ delivery_uuid: newUuid() })),
      sqsRecord('m-good', JSON.stringify({ delivery_uuid: delivery })),
      sqsRecord('m-twice', JSON.stringify({ delivery_uuid: delivery })),
    ];
    const before = requestsAt(target.path).length;
    const { response, attempted } = await processDeliveryBatch({ Records: records });
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['m-bad', 'm-shape']);
    // The same delivery twice in one batch: one claim wins, one request is sent.
    expect(attempted).toBe(1);
    expect(requestsAt(target.path).length - before).toBe(1);
    const log = await responsesOf(target);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ attempt: 1, status_code: 200 });
  });
});

describe('fan-out, ten events at a time', () => {
  it('creates one delivery per event and endpoint, reports a malformed message alone, and de-duplicates', async () => {
    // A name no other test subscribes to: these two endpoints are the only subscribers.
    const first = await hook('svc.payments.payment.cancelled');
    const second = await hook('svc.payments.payment.cancelled');
    const events = [envelope(), envelope(), envelope()];
    const records = [
      sqsRecord('e-0', busBody(events[0] as Envelope)),
      sqsRecord('e-bad', '{"detail": {"name": 1}}'),
      sqsRecord('e-1', busBody(events[1] as Envelope)),
      // The same event again (published twice): no second delivery.
      sqsRecord('e-1-again', busBody(events[1] as Envelope)),
      sqsRecord('e-2', busBody(events[2] as Envelope)),
    ];
    const send = vi.spyOn(db(), 'send');
    const { response, created } = await fanOutMessages({ Records: records });
    const queries = send.mock.calls.filter(([command]) => command.constructor.name === 'QueryCommand');
    send.mockRestore();
    // Four events of one organisation and name: their subscriptions are read once.
    expect(queries).toHaveLength(1);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'e-bad' }]);
    expect(created).toBe(6);
    for (const event of events) {
      for (const target of [first, second]) {
        expect(await deliveryFor(event.object_uuid, target.uuid, event.uuid)).toBeDefined();
      }
    }
    // All of it again: everything exists, nothing new is created or queued.
    const again = await fanOutMessages({ Records: records.filter((r) => r.messageId !== 'e-bad') });
    expect(again).toEqual({ response: { batchItemFailures: [] }, created: 0 });
    await ok('POST', '/_local/settle');
    for (const target of [first, second]) {
      expect(
        requestsAt(target.path)
          .map((r) => objectOf(r.body))
          .sort(),
      ).toEqual(events.map((e) => e.object_uuid).sort());
    }
  });
});

describe('fan-out failures', () => {
  it("fails only the events whose subscriptions could not be read; the batch's others are fanned out", async () => {
    const target = await hook('svc.payments.payment.cancelled');
    const good = [envelope(), envelope()];
    // Another organisation's event, whose subscriptions read fails (the store refuses that query).
    const broken = { ...envelope(), organisation_uuid: newUuid() };
    const records = [
      sqsRecord('g-0', busBody(good[0] as Envelope)),
      sqsRecord('broken', busBody(broken)),
      sqsRecord('g-1', busBody(good[1] as Envelope)),
    ];
    const client = db();
    const original = client.send.bind(client);
    const send = vi.spyOn(client, 'send').mockImplementation(((command: { input?: unknown }) => {
      if (JSON.stringify(command.input ?? {}).includes(broken.organisation_uuid)) {
        return Promise.reject(new Error('ProvisionedThroughputExceededException'));
      }
      return original(command as never);
    }) as never);
    const { response } = await fanOutMessages({ Records: records }).finally(() => send.mockRestore());
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'broken' }]);
    for (const event of good) expect(await deliveryFor(event.object_uuid, target.uuid, event.uuid)).toBeDefined();
  });
});

describe('the stream publisher, events of many records to a PutEvents call', () => {
  let bus: Server;
  let calls: Array<{ entries: Array<{ Detail: string }> }>;
  /** Call numbers (1-based) the bus refuses. */
  let refuse: Set<number>;
  const saved: { endpoint?: string; name?: string } = {};

  beforeAll(async () => {
    saved.endpoint = process.env.AWS_ENDPOINT_URL_EVENTBRIDGE;
    saved.name = process.env.SVC_EVENT_BUS_NAME;
    // The publisher's own behaviour, with a shape of its own: an item marked `broken` cannot be shaped.
    registerEventData('onboarding_process', async (_event, item) => {
      if (item.broken) throw new Error('This item cannot be shaped');
      return { shaped: true };
    });
    bus = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      request.on('end', () => {
        const entries = (JSON.parse(text) as { Entries: Array<{ Detail: string }> }).Entries;
        calls.push({ entries });
        response.writeHead(refuse.has(calls.length) ? 500 : 200, { 'content-type': 'application/x-amz-json-1.1' });
        response.end(
          refuse.has(calls.length)
            ? JSON.stringify({ __type: 'InternalException', message: 'down' })
            : JSON.stringify({ FailedEntryCount: 0, Entries: entries.map(() => ({ EventId: newUuid() })) }),
        );
      });
    });
    await new Promise<void>((done) => bus.listen(0, '127.0.0.1', () => done()));
    process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = `http://127.0.0.1:${(bus.address() as AddressInfo).port}`;
    process.env.SVC_EVENT_BUS_NAME = 'test-bus';
    resetBusClient();
  });

  beforeEach(() => {
    calls = [];
    refuse = new Set();
  });

  afterAll(async () => {
    if (saved.endpoint === undefined) delete process.env.AWS_ENDPOINT_URL_EVENTBRIDGE;
    else process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = saved.endpoint;
    if (saved.name === undefined) delete process.env.SVC_EVENT_BUS_NAME;
    else process.env.SVC_EVENT_BUS_NAME = saved.name;
    resetBusClient();
    registerOnboardingEventData();
    await new Promise<void>((done) => bus.close(() => done()));
  });

  const published = () => calls.flatMap((c) => c.entries.map((e) => (JSON.parse(e.Detail) as Envelope).uuid));

  it('packs events in stream order, ten to a call, and skips records without events', async () => {
    const stored = Array.from({ length: 23 }, () => storedEvent());
    // Records with two events, with one, and items without events in between.
    const records = [
      streamRecord(1, [stored[0], stored[1]] as StoredEvent[]),
      streamRecord(2, []),
      ...stored.slice(2).map((event, i) => streamRecord(3 + i, [event])),
      streamRecord(99, undefined),
    ];
    const { response, published: count } = await publishStreamRecords({ Records: records });
    expect(response.batchItemFailures).toEqual([]);
    expect(count).toBe(23);
    expect(calls.map((c) => c.entries.length)).toEqual([10, 10, 3]);
    expect(published()).toEqual(stored.map((e) => e.uuid));
  });

  it('reports the first record of a refused call; the records before it are published', async () => {
    const stored = Array.from({ length: 25 }, () => storedEvent());
    const records = stored.map((event, i) => streamRecord(i, [event]));
    // The SDK retries a 500 (four attempts in all): refuse the second call's every attempt.
    refuse = new Set([2, 3, 4, 5]);
    const { response, published: count } = await publishStreamRecords({ Records: records });
    expect(count).toBe(10);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[10]?.dynamodb?.SequenceNumber }]);
    expect(published().slice(0, 10)).toEqual(stored.slice(0, 10).map((e) => e.uuid));
    // The stream retries from that record: the rest follows, in order, once.
    calls = [];
    refuse = new Set();
    const retry = await publishStreamRecords({ Records: records.slice(10) });
    expect(retry.response.batchItemFailures).toEqual([]);
    expect(published()).toEqual(stored.slice(10).map((e) => e.uuid));
  });

  it('reports a record whose events cannot be read, after publishing the ones before it', async () => {
    const stored = Array.from({ length: 4 }, () => storedEvent());
    const records = stored.map((event, i) => streamRecord(i, [event]));
    const broken = streamRecord(50, [storedEvent()], { broken: true });
    const { response, published: count } = await publishStreamRecords({ Records: [...records, broken, ...records] });
    expect(count).toBe(4);
    expect(published()).toEqual(stored.map((e) => e.uuid));
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: broken.dynamodb?.SequenceNumber }]);
  });

  it('splits calls by PutEvents size as well as count', () => {
    const entry = (bytes: number) => ({ Source: 'svc', DetailType: 'x', Detail: 'd'.repeat(bytes) });
    expect(callsOf(Array.from({ length: 25 }, () => entry(10))).map((c) => c.length)).toEqual([10, 10, 5]);
    expect(PUT_EVENTS_MAX).toBe(10);
    // 100 KB each: two fit in 256 KB, the third starts a call.
    expect(callsOf(Array.from({ length: 5 }, () => entry(100_000))).map((c) => c.length)).toEqual([2, 2, 1]);
    // Too large alone: it goes alone (and the bus refuses it), never with others.
    expect(callsOf([entry(10), entry(300_000), entry(10)]).map((c) => c.length)).toEqual([1, 1, 1]);
    expect(callsOf([])).toEqual([]);
  });
});

describe('stored deliveries', () => {
  it('keep the event as JSON text, and deliveries stored with the event as a map are still sent', async () => {
    const target = await hook();
    const payment = await pay();
    await publishAndFanOut();
    const uuid = await deliveryFor(payment.uuid, target.uuid);
    const item = (await getItem(deliveryKey(uuid))) as Record<string, unknown>;
    expect(typeof item.event_json).toBe('string');
    expect(item.event).toBeUndefined();
    expect((JSON.parse(String(item.event_json)) as Envelope).object_uuid).toBe(payment.uuid);

    // The same delivery as an older version wrote it: `event` as a map.
    const { event_json: json, ...rest } = item;
    await db().send(new PutCommand({ TableName: tableName(), Item: { ...rest, event: JSON.parse(String(json)) } }));
    const claimed = await claimAttempt(uuid);
    expect(claimed?.delivery.event.object_uuid).toBe(payment.uuid);
    expect(claimed?.attempt).toBe(1);
    const rewritten = (await getItem(deliveryKey(uuid))) as Record<string, unknown>;
    expect(rewritten.event).toBeUndefined();
    expect(typeof rewritten.event_json).toBe('string');
  });

  it('putItems writes more than a BatchWriteItem holds', async () => {
    const prefix = newUuid();
    const items = Array.from({ length: 60 }, (_, i) => ({
      pk: `TEST#${prefix}`,
      sk: `ITEM#${String(i).padStart(2, '0')}`,
      i,
    }));
    await putItems(items);
    const read = await Promise.all(items.map((item) => getItem({ pk: item.pk, sk: item.sk })));
    expect(read.map((item) => item?.i)).toEqual(items.map((item) => item.i));
    await putItems([]);
  });
});

// Helpers

function sqsRecord(messageId: string, body: string): SQSEvent['Records'][number] {
  return {
    messageId,
    receiptHandle: messageId,
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '0',
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: '0',
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:local:000000000000:test',
    awsRegion: 'eu-central-2',
  };
}

function envelope(): Envelope {
  return {
    uuid: newUuid(),
    name: 'svc.payments.payment.cancelled',
    created: now(),
    object: 'payment',
    object_uuid: newUuid(),
    organisation_uuid: DEMO.org,
    account_uuid: DEMO.secondAccount,
    sequence: 1,
    data: { note: 'test' },
  };
}

const busBody = (event: Envelope) =>
  JSON.stringify({ version: '0', id: newUuid(), 'detail-type': event.name, source: 'svc', detail: event });

function storedEvent(): StoredEvent {
  return storedEventSchema.parse({
    uuid: newUuid(),
    name: 'svc.onboarding.onboarding_process.created',
    created: now(),
    object: 'onboarding_process',
    object_uuid: newUuid(),
    organisation_uuid: DEMO.org,
    sequence: 1,
  });
}

/** A stream record of an item with these events (`undefined`: an item without the attribute). */
function streamRecord(
  sequence: number,
  events: StoredEvent[] | undefined,
  fields: Record<string, unknown> = {},
): DynamoDBRecord {
  const item = { pk: `THING#${newUuid()}`, sk: 'THING', ...fields, ...(events === undefined ? {} : { events }) };
  return {
    eventName: 'INSERT',
    dynamodb: {
      SequenceNumber: String(100_000 + sequence),
      NewImage: marshall(item) as NonNullable<DynamoDBRecord['dynamodb']>['NewImage'],
    },
  };
}

/** Runs the stream and the bus (not the delivery queue): deliveries exist, nothing is sent. */
async function publishAndFanOut() {
  const { pollStream } = await import('../../../packages/local/src/stream-poller');
  const { drainBus, ensureLocalBus } = await import('../../../packages/local/src/event-bus');
  await ensureLocalBus();
  await pollStream();
  await drainBus();
}

/** The delivery of a payment's event to an endpoint (the event read from the delivery items). */
async function deliveryFor(objectUuid: string, endpointUuid: string, eventUuid?: string): Promise<string> {
  if (eventUuid) return existing(derivedUuid('delivery', eventUuid, endpointUuid));
  const event = (await streamEvents()).find(
    (e) => e.object_uuid === objectUuid && e.name === 'svc.payments.payment.succeeded',
  );
  if (!event) throw new Error(`no event for ${objectUuid}`);
  return existing(derivedUuid('delivery', event.uuid, endpointUuid));
}

async function existing(uuid: string): Promise<string> {
  const item = await getItem(deliveryKey(uuid));
  if (!item) throw new Error(`no delivery ${uuid}`);
  return uuid;
}
