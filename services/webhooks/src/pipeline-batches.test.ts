import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { advanceClock, definedFields, derivedUuid, freezeClock, newUuid, now } from '@svc/core';
import { type EventDataBuilders, type StoredEvent, storedEventSchema } from '@svc/events';
import { db, getItem, putItems, tableName } from '@svc/table';
import type { DynamoDBRecord, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import * as z from 'zod';
import { type Receiver, startReceiver } from '../../../packages/outbound/src/testing/receiver';
import { call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import {
  type Claimed,
  claimAttempt,
  claimFirstAttempt,
  fanOut,
  markQueued,
  QUEUED_GRACE_SECONDS,
} from './domain/delivery';
import { sendAttempt } from './domain/delivery-attempt';
import { pauseFor } from './domain/pacing';
import { processDeliveryBatch } from './handlers/delivery-worker';
import { fanOutMessages } from './handlers/fan-out';
import { publishStreamRecords } from './handlers/stream-publisher';
import { useEventData } from './pipeline/envelope';
import { callsOf, PUT_EVENTS_MAX, resetBusClient } from './pipeline/publish';
import { INLINE_DELIVERY_MAX_BYTES } from './pipeline/queue';
import {
  type DeliveryRecord,
  deliveryItem,
  deliveryKey,
  dueDeliveries,
  type Envelope,
  type ResponseRecord,
  responseItem,
} from './repository/webhook-repository';

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
/** Seconds the service clock moves while the receiver answers a path's next request. */
const slow = new Map<string, number>();

beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.client);
  receiver = await startReceiver((request, response) => {
    const status = answers.get(request.url ?? '')?.shift() ?? 200;
    const seconds = slow.get(request.url ?? '');
    if (seconds !== undefined) {
      slow.delete(request.url ?? '');
      advanceClock(seconds);
    }
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
  const response = await call(method, path, { token, ...definedFields({ body }) });
  expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
  return response.json;
}

let paths = 0;
/** An endpoint subscribed to a name; with a tag, only to events whose `data.note` is that tag. */
async function hook(eventName = 'svc.payments.payment.succeeded', tag?: string) {
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
      ...(tag === undefined ? {} : { filter: `event.data.note == "${tag}"` }),
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
    const tag = newUuid();
    const target = await hook('svc.payments.payment.cancelled', tag);
    // The message fan-out makes for an event (nothing is written or sent yet).
    const [message] = await fanOut(envelope(tag));
    if (!message?.delivery) throw new Error('fan-out carried no delivery');
    expect(await getItem(deliveryKey(message.delivery_uuid))).toBeUndefined();
    const carried = JSON.stringify(message);
    const forged = newUuid();
    const records = [
      sqsRecord('m-bad', 'not json'),
      sqsRecord('m-shape', JSON.stringify({ something: 'else' })),
      // A carried delivery must be the one the message names.
      sqsRecord('m-mismatch', JSON.stringify({ ...message, delivery_uuid: newUuid() })),
      // A carried delivery must be its event's one delivery to that endpoint, in the event's organisation.
      sqsRecord('m-forged', JSON.stringify({ delivery_uuid: forged, delivery: { ...message.delivery, uuid: forged } })),
      sqsRecord(
        'm-elsewhere',
        JSON.stringify({ ...message, delivery: { ...message.delivery, organisation_uuid: newUuid() } }),
      ),
      sqsRecord('m-unknown', JSON.stringify({ delivery_uuid: newUuid() })),
      sqsRecord('m-good', carried),
      sqsRecord('m-twice', carried),
    ];
    const before = requestsAt(target.path).length;
    const { response, attempted } = await processDeliveryBatch({ Records: records });
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual([
      'm-bad',
      'm-elsewhere',
      'm-forged',
      'm-mismatch',
      'm-shape',
    ]);
    // The same delivery twice in one batch: one claim writes it, one request is sent.
    expect(attempted).toBe(1);
    expect(requestsAt(target.path).length - before).toBe(1);
    const log = await responsesOf(target);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ attempt: 1, status_code: 200 });
    // It ended within its lease, held by its message: the response is its record and the claim
    // its one write (no due entry, expiring with the responses), with the event as JSON text.
    const stored = (await getItem(deliveryKey(message.delivery_uuid))) as Record<string, unknown>;
    expect(stored).toMatchObject({ status: 'pending', attempts: 1, version: 1, held_by_message: true });
    expect(stored.duepk).toBeUndefined();
    expect(stored.ttl).toBeGreaterThan(now());
    expect(typeof stored.event_json).toBe('string');
    expect(stored.event).toBeUndefined();
    // The same message once more, in a later batch: its response says it was delivered, so
    // nothing is sent, the delivery is settled from it, and the message is done.
    const again = await processDeliveryBatch({ Records: [sqsRecord('m-later', carried)] });
    expect(again).toEqual({ response: { batchItemFailures: [] }, attempted: 0 });
    expect(requestsAt(target.path).length - before).toBe(1);
    const settled = (await getItem(deliveryKey(message.delivery_uuid))) as Record<string, unknown>;
    expect(settled).toMatchObject({ status: 'delivered', attempts: 1, version: 2 });
    expect(settled.held_by_message).toBeUndefined();
    expect(settled.lease_until).toBeUndefined();
  });

  it('writes a delivered first attempt twice in all (its claim and its response), and the pace once a batch', async () => {
    const tag = newUuid();
    const target = await hook('svc.payments.payment.cancelled', tag);
    const messages = (await Promise.all([envelope(tag), envelope(tag), envelope(tag)].map((e) => fanOut(e)))).flat();
    expect(messages).toHaveLength(3);
    const send = vi.spyOn(db(), 'send');
    const { attempted } = await processDeliveryBatch({
      Records: messages.map((m, i) => sqsRecord(`w-${i}`, JSON.stringify(m))),
    });
    const commands = sentCommands(send.mock.calls);
    send.mockRestore();
    expect(attempted).toBe(3);
    expect(requestsAt(target.path)).toHaveLength(3);
    // One conditional put per delivery (its claim, held by its message: no due entry), then one
    // BatchWriteItem of the three responses; the claims are not written again.
    const puts = commands.filter((c) => c.name === 'PutCommand');
    expect(puts.map((c) => c.input.Item?.pk).sort()).toEqual(messages.map((m) => `DELIVERY#${m.delivery_uuid}`).sort());
    expect(puts.every((c) => c.input.ConditionExpression === 'attribute_not_exists(pk)')).toBe(true);
    expect(puts.map((c) => [c.input.Item?.held_by_message, c.input.Item?.duepk])).toEqual([
      [true, undefined],
      [true, undefined],
      [true, undefined],
    ]);
    const batches = commands.filter((c) => c.name === 'BatchWriteCommand');
    expect(batches).toHaveLength(1);
    const written = Object.values(batches[0]?.input.RequestItems ?? {}).flat();
    expect(written.map((w) => w.PutRequest.Item.entity)).toEqual([
      'webhook_response',
      'webhook_response',
      'webhook_response',
    ]);
    // The endpoint's pace: one UpdateItem for the batch's three, in that second's own item; its
    // places in flight: one ask and one give-back each for the endpoint and the organisation.
    const paces = commands.filter((c) => c.name === 'UpdateCommand');
    expect(paces.map((c) => String(c.input.Key?.pk).replace(/#\d+$/, '')).sort()).toEqual(
      [
        `WEBHOOK_PACE#${target.uuid}`,
        `WEBHOOK_IN_FLIGHT#${target.uuid}`,
        `WEBHOOK_IN_FLIGHT#${target.uuid}`,
        `WEBHOOK_IN_FLIGHT#${DEMO.org}`,
        `WEBHOOK_IN_FLIGHT#${DEMO.org}`,
      ].sort(),
    );
    expect(
      paces
        .filter((c) => String(c.input.Key?.pk).startsWith('WEBHOOK_IN_FLIGHT#'))
        .map((c) => c.input.ExpressionAttributeValues?.[':count']),
    ).toEqual([3, 3, -3, -3]);
    // No other write: the rest are reads (the endpoint, its pause).
    expect(commands.filter((c) => !/^(Get|BatchGet)Command$/.test(c.name))).toHaveLength(
      puts.length + batches.length + paces.length,
    );
    // Nothing comes back once the leases would have lapsed: the sweeper has nothing due.
    advanceClock(120);
    await ok('POST', '/_local/settle');
    expect(requestsAt(target.path)).toHaveLength(3);
  });

  it('a worker that stops after sending a held first attempt: its message brings attempt 2, attempt 1 logged as lost', async () => {
    const { target, message, claimed } = await firstAttemptClaimed();
    await sendAttempt(claimed);
    // The worker stops here. The sweeper has nothing due (the message holds the delivery).
    advanceClock(61);
    await ok('POST', '/_local/settle');
    expect(requestsAt(target.path)).toHaveLength(1);
    // The queue sends the unacknowledged message again.
    const { response, attempted } = await processDeliveryBatch({
      Records: [sqsRecord('back', JSON.stringify(message))],
    });
    expect({ failures: response.batchItemFailures, attempted }).toEqual({ failures: [], attempted: 1 });
    const seen = requestsAt(target.path);
    expect(seen.map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['1', '2']);
    expect(new Set(seen.map((r) => r.headers['x-svc-event-uuid']))).toEqual(new Set([message.delivery.event.uuid]));
    const log = (await responsesOf(target)).sort((a, b) => a.attempt - b.attempt);
    expect(log.map((r) => [r.attempt, r.error])).toEqual([
      [1, 'true'],
      [2, 'false'],
    ]);
    const lost = await ok('GET', `/webhook-responses/${log[0]?.uuid}`);
    expect(lost.error_message).toMatch(/No outcome was recorded/);
    expect((await getItem(deliveryKey(message.delivery_uuid))) as Record<string, unknown>).toMatchObject({
      status: 'delivered',
      attempts: 2,
    });
  });

  it('leaves unacknowledged a second message for a held attempt in flight, and settles it once the response is stored', async () => {
    const { target, message, claimed } = await firstAttemptClaimed();
    // A copy of the message (fan-out ran twice, or the queue sent it twice) while the attempt runs.
    const copy = () => processDeliveryBatch({ Records: [sqsRecord('copy', JSON.stringify(message))] });
    expect(await copy()).toEqual({ response: { batchItemFailures: [{ itemIdentifier: 'copy' }] }, attempted: 0 });
    // The attempt's worker sends and stores its response (delivered), then acknowledges its own message.
    await sendAttempt(claimed);
    await storeResponse(claimed, { error: false, status_code: 200 });
    // The copy comes back: nothing more is sent, and the delivery is settled from the response.
    expect(await copy()).toEqual({ response: { batchItemFailures: [] }, attempted: 0 });
    expect(requestsAt(target.path)).toHaveLength(1);
    expect((await getItem(deliveryKey(message.delivery_uuid))) as Record<string, unknown>).toMatchObject({
      status: 'delivered',
      version: 2,
    });
  });

  it('keeps a copy of a held attempt in flight unacknowledged also when the endpoint’s pace holds it back', async () => {
    const { target, message } = await firstAttemptClaimed();
    // The endpoint asked to wait: pacing would hold the copy back; its delivery is stored and held
    // by the first message, so the copy must stay in the queue, not be acknowledged as deferred.
    await pauseFor(target.uuid, now() + 30);
    const copy = await processDeliveryBatch({ Records: [sqsRecord('copy', JSON.stringify(message))] });
    expect(copy).toEqual({ response: { batchItemFailures: [{ itemIdentifier: 'copy' }] }, attempted: 0 });
    expect((await getItem(deliveryKey(message.delivery_uuid))) as Record<string, unknown>).toMatchObject({
      held_by_message: true,
      version: 1,
    });
  });

  it('hands a held claim to the due index when its message fails on its last receive before the dead-letter queue', async () => {
    const { target, message } = await firstAttemptClaimed();
    const stored = async () => (await getItem(deliveryKey(message.delivery_uuid))) as Record<string, unknown>;
    // Its attempt is in flight (the claim's worker stopped, say): the copies fail.
    const copy = (receives: number) =>
      processDeliveryBatch({ Records: [sqsRecord('copy', JSON.stringify(message), receives)] });
    expect((await copy(4)).response.batchItemFailures).toEqual([{ itemIdentifier: 'copy' }]);
    expect(await stored()).toMatchObject({ held_by_message: true });
    expect((await stored()).duepk).toBeUndefined();
    // The fifth receive fails too, and the message would go to the dead-letter queue: the claim is
    // now the due index's, due when its lease lapses.
    expect((await copy(5)).response.batchItemFailures).toEqual([{ itemIdentifier: 'copy' }]);
    const released = await stored();
    expect(released.held_by_message).toBeUndefined();
    expect(released.ttl).toBeUndefined();
    expect(released.duepk).toBeDefined();
    // Once the lease lapses the sweeper brings it back: attempt 1 is logged as lost, attempt 2 sent.
    advanceClock(61);
    await ok('POST', '/_local/settle');
    expect(requestsAt(target.path).map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['2']);
    expect((await responsesOf(target)).map((r) => [r.attempt, r.error]).sort()).toEqual([
      [1, 'true'],
      [2, 'false'],
    ]);
  });

  it('keeps to the retry schedule when a failed attempt was recorded but its delivery never settled', async () => {
    const tag = newUuid();
    const target = await hook('svc.payments.payment.cancelled', tag);
    const [message] = await fanOut(envelope(tag));
    if (!message?.delivery) throw new Error('no delivery');
    // Attempt 2 was claimed (a lapsed lease) and its 503 recorded; the worker stopped before settling.
    const at = now();
    const claimedTwice: DeliveryRecord = { ...message.delivery, attempts: 2, lease_until: at - 1, version: 3 };
    delete claimedTwice.next_attempt_at;
    delete claimedTwice.queued_until;
    await db().send(new PutCommand({ TableName: tableName(), Item: deliveryItem(claimedTwice) }));
    const claimed: Claimed = {
      delivery: claimedTwice,
      endpoint: undefined,
      attempt: 2,
      responseUuid: derivedUuid('webhook_response', claimedTwice.uuid, 2),
      request: { body: '{}', headers: {} },
      at: at - 61,
    };
    await storeResponse(claimed, { error_message: 'The receiver answered 503', status_code: 503 });
    // Claimed again now: attempt 3 waits for its time (5 minutes after attempt 2), nothing is sent.
    const { attempted } = await processDeliveryBatch({
      Records: [sqsRecord('again', JSON.stringify({ delivery_uuid: message.delivery_uuid }))],
    });
    expect(attempted).toBe(0);
    expect(requestsAt(target.path)).toHaveLength(0);
    expect((await getItem(deliveryKey(message.delivery_uuid))) as Record<string, unknown>).toMatchObject({
      status: 'pending',
      attempts: 2,
      next_attempt_at: at - 61 + 300,
    });
    advanceClock(300 - 61);
    await ok('POST', '/_local/settle');
    expect(requestsAt(target.path).map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['3']);
  });

  it('a lapsed claim the sweeper queued is due again only once that message had its chance', async () => {
    const tag = newUuid();
    await hook('svc.payments.payment.cancelled', tag);
    const [message] = await fanOut(envelope(tag));
    if (!message?.delivery) throw new Error('no delivery');
    const lapsed: DeliveryRecord = { ...message.delivery, attempts: 1, lease_until: now() - 1, version: 2 };
    delete lapsed.next_attempt_at;
    delete lapsed.queued_until;
    await db().send(new PutCommand({ TableName: tableName(), Item: deliveryItem(lapsed) }));
    const dueNow = async () => (await dueDeliveries(now(), 2_000)).includes(lapsed.uuid);
    expect(await dueNow()).toBe(true);
    expect(await markQueued([lapsed.uuid])).toEqual([lapsed.uuid]);
    // The next sweeps, a minute apart, leave it to the message just sent.
    advanceClock(61);
    expect(await dueNow()).toBe(false);
    advanceClock(QUEUED_GRACE_SECONDS - 61);
    expect(await dueNow()).toBe(true);
  });

  it('claims again a delivery whose worker stored the response and stopped before settling; the response stays', async () => {
    // A worker claims attempt 1, the receiver refuses it, the response is stored, and the worker stops.
    const { target, message, claimed } = await firstAttemptClaimed([503]);
    await sendAttempt(claimed);
    await storeResponse(claimed, { error_message: 'The receiver answered 503', status_code: 503 });
    // Once the lease lapses, a message (here one naming the delivery only) brings attempt 2; attempt 1 keeps its record.
    advanceClock(61);
    const { response, attempted } = await processDeliveryBatch({
      Records: [sqsRecord('again', JSON.stringify({ delivery_uuid: message.delivery_uuid }))],
    });
    expect(response.batchItemFailures).toEqual([]);
    expect(attempted).toBe(1);
    expect(requestsAt(target.path).map((r) => r.headers['x-svc-delivery-attempt'])).toEqual(['1', '2']);
    const log = await responsesOf(target);
    expect(log.map((r) => [r.attempt, r.status_code]).sort()).toEqual([
      [1, 503],
      [2, 200],
    ]);
  });

  it('logs as having no outcome the last attempt of an ended delivery whose response was never stored', async () => {
    const tag = newUuid();
    const target = await hook('svc.payments.payment.cancelled', tag);
    const [message] = await fanOut(envelope(tag));
    if (!message?.delivery) throw new Error('no delivery');
    // The batch write stored the delivery's final state, not its response, and the worker stopped.
    const ended = { ...message.delivery, attempts: 1, status: 'delivered' as const, version: 2 };
    await db().send(new PutCommand({ TableName: tableName(), Item: deliveryItem(ended) }));
    // The queue sends the message again: nothing is sent, and attempt 1 gets its record.
    const { response, attempted } = await processDeliveryBatch({
      Records: [sqsRecord('again', JSON.stringify(message))],
    });
    expect({ failures: response.batchItemFailures, attempted }).toEqual({ failures: [], attempted: 0 });
    expect(requestsAt(target.path)).toHaveLength(0);
    const [logged] = await responsesOf(target);
    expect(logged).toMatchObject({ attempt: 1, error: 'true' });
    const single = await ok('GET', `/webhook-responses/${logged?.uuid}`);
    expect(single.error_message).toMatch(/No outcome was recorded/);
  });

  it('settles under its version a delivery whose lease is nearly over when its attempt ends', async () => {
    const tag = newUuid();
    const target = await hook('svc.payments.payment.cancelled', tag);
    const [message] = await fanOut(envelope(tag));
    if (!message) throw new Error('no message');
    // The receiver takes its time: by the service clock, 50 of the lease's 60 s pass during the request.
    slow.set(target.path, 50);
    const send = vi.spyOn(db(), 'send');
    await processDeliveryBatch({ Records: [sqsRecord('slow', JSON.stringify(message))] });
    const commands = sentCommands(send.mock.calls);
    send.mockRestore();
    const guarded = commands.filter(
      (c) => c.name === 'PutCommand' && c.input.ConditionExpression === '#version = :read',
    );
    expect(guarded.map((c) => c.input.Item?.status)).toEqual(['delivered']);
    const stored = (await getItem(deliveryKey(message.delivery_uuid))) as Record<string, unknown>;
    expect(stored).toMatchObject({ status: 'delivered', version: 2 });
    advanceClock(120);
    await ok('POST', '/_local/settle');
    expect(requestsAt(target.path)).toHaveLength(1);
  });
});

describe('fan-out, ten events at a time', () => {
  it('queues one delivery per event and endpoint, reports a malformed message alone, and delivers each once', async () => {
    // A name no other test subscribes to: these two endpoints are the only subscribers.
    const tag = newUuid();
    const first = await hook('svc.payments.payment.cancelled', tag);
    const second = await hook('svc.payments.payment.cancelled', tag);
    const events = [envelope(tag), envelope(tag), envelope(tag)];
    const records = [
      sqsRecord('e-0', busBody(events[0] as Envelope)),
      sqsRecord('e-bad', '{"detail": {"name": 1}}'),
      sqsRecord('e-1', busBody(events[1] as Envelope)),
      // The same event again (published twice): queued twice, delivered once.
      sqsRecord('e-1-again', busBody(events[1] as Envelope)),
      sqsRecord('e-2', busBody(events[2] as Envelope)),
    ];
    const send = vi.spyOn(db(), 'send');
    const { response, queued } = await fanOutMessages({ Records: records });
    const commands = send.mock.calls.map(([command]) => command.constructor.name);
    send.mockRestore();
    // Four events of one organisation and name: their subscriptions are read once, and nothing is written.
    expect(commands.filter((name) => name === 'QueryCommand')).toHaveLength(1);
    expect(commands.filter((name) => /Put|Write|Update/.test(name))).toEqual([]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'e-bad' }]);
    expect(queued).toBe(8);
    const deliveredOnce = () => {
      for (const target of [first, second]) {
        expect(
          requestsAt(target.path)
            .map((r) => objectOf(r.body))
            .sort(),
        ).toEqual(events.map((e) => e.object_uuid).sort());
      }
    };
    await ok('POST', '/_local/settle');
    deliveredOnce();
    // All of it again: queued again, and the claims find every delivery done.
    const again = await fanOutMessages({ Records: records.filter((r) => r.messageId !== 'e-bad') });
    expect(again).toEqual({ response: { batchItemFailures: [] }, queued: 8 });
    await ok('POST', '/_local/settle');
    deliveredOnce();
  });

  it('reports an event whose messages the delivery queue did not take, and delivers it when it comes again', async () => {
    const tag = newUuid();
    const target = await hook('svc.payments.payment.cancelled', tag);
    const other = await hook('svc.payments.payment.cancelled', tag);
    const [kept, refused] = [envelope(tag), envelope(tag)];
    const records = [sqsRecord('kept', busBody(kept)), sqsRecord('refused', busBody(refused))];
    const original = SQSClient.prototype.send as unknown as (this: SQSClient, command: unknown) => Promise<unknown>;
    const sqs = vi.spyOn(SQSClient.prototype, 'send').mockImplementation(function (
      this: SQSClient,
      command: { input?: unknown },
    ) {
      const input = command.input as { Entries?: Array<{ Id: string; MessageBody: string }> };
      if (command instanceof SendMessageBatchCommand && input.Entries) {
        // Of the refused event's two messages, the queue takes the one to `target` only.
        const bad = input.Entries.filter(
          (entry) => entry.MessageBody.includes(refused.uuid) && entry.MessageBody.includes(other.uuid),
        );
        if (bad.length > 0) {
          return original
            .call(
              this,
              new SendMessageBatchCommand({
                ...command.input,
                Entries: input.Entries.filter((e) => !bad.includes(e)),
              }) as never,
            )
            .then((out) => ({
              ...(out as object),
              Failed: bad.map((entry) => ({ Id: entry.Id, SenderFault: false, Code: 'InternalError' })),
            }));
        }
      }
      return original.call(this, command as never);
    } as never);
    const first = await fanOutMessages({ Records: records }).finally(() => sqs.mockRestore());
    expect(first.response.batchItemFailures).toEqual([{ itemIdentifier: 'refused' }]);
    await ok('POST', '/_local/settle');
    const seen = (path: string) =>
      requestsAt(path)
        .map((r) => objectOf(r.body))
        .sort();
    expect(seen(target.path)).toEqual([kept.object_uuid, refused.object_uuid].sort());
    expect(seen(other.path)).toEqual([kept.object_uuid]);
    // The fan-out queue sends the refused event again: both its messages are queued; the one
    // delivered already is not sent twice, the other is delivered now.
    const retry = await fanOutMessages({ Records: [records[1] as SQSRecord] });
    expect(retry).toEqual({ response: { batchItemFailures: [] }, queued: 2 });
    await ok('POST', '/_local/settle');
    expect(seen(target.path)).toEqual([kept.object_uuid, refused.object_uuid].sort());
    expect(seen(other.path)).toEqual([kept.object_uuid, refused.object_uuid].sort());
  });
});

describe('fan-out failures', () => {
  it("fails only the events whose subscriptions could not be read; the batch's others are fanned out", async () => {
    const tag = newUuid();
    const target = await hook('svc.payments.payment.cancelled', tag);
    const good = [envelope(tag), envelope(tag)];
    // Another organisation's event, whose subscriptions read fails (the store refuses that query).
    const broken = { ...envelope(tag), organisation_uuid: newUuid() };
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
    const { response, queued } = await fanOutMessages({ Records: records }).finally(() => send.mockRestore());
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'broken' }]);
    expect(queued).toBe(2);
    await ok('POST', '/_local/settle');
    expect(
      requestsAt(target.path)
        .map((r) => objectOf(r.body))
        .sort(),
    ).toEqual(good.map((e) => e.object_uuid).sort());
  });
});

describe('the stream publisher, events of many records to a PutEvents call', () => {
  let bus: Server;
  let calls: Array<{ entries: Array<{ Detail: string }> }>;
  /** Call numbers (1-based) the bus refuses. */
  let refuse: Set<number>;
  const saved: { endpoint?: string; name?: string; builders?: EventDataBuilders } = {};

  beforeAll(async () => {
    saved.endpoint = process.env.AWS_ENDPOINT_URL_EVENTBRIDGE;
    saved.name = process.env.SVC_EVENT_BUS_NAME;
    // The publisher's own behaviour, with a shape of its own: an item marked `broken` cannot be shaped.
    saved.builders = useEventData({
      onboarding_process: {
        schema: z.object({ shaped: z.boolean() }),
        build: async (_event, item) => {
          if (item.broken) throw new Error('This item cannot be shaped');
          return { shaped: true };
        },
      },
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
    useEventData(saved.builders ?? {});
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
  it('are written by fan-out when too large to carry, named in their message, and sent from the table', async () => {
    const tag = newUuid();
    const target = await hook('svc.payments.payment.cancelled', tag);
    const large = { ...envelope(tag), data: { note: tag, filler: 'x'.repeat(INLINE_DELIVERY_MAX_BYTES) } };
    const [message] = await fanOut(large);
    expect(message).toEqual({ delivery_uuid: derivedUuid('delivery', large.uuid, target.uuid) });
    const item = (await getItem(deliveryKey(message?.delivery_uuid ?? ''))) as Record<string, unknown>;
    expect(item).toMatchObject({ status: 'pending', attempts: 0 });
    expect(typeof item.event_json).toBe('string');
    expect(item.event).toBeUndefined();
    // Written before: fanned out again, it is neither written nor queued twice.
    expect(await fanOut(large)).toEqual([]);
    await processDeliveryBatch({ Records: [sqsRecord('large', JSON.stringify(message))] });
    const [request] = requestsAt(target.path);
    expect((JSON.parse(request?.body ?? '{}') as { event: Envelope }).event).toEqual(large);
  });

  it('stored with the event as a map (an older format) are still claimed and sent', async () => {
    const tag = newUuid();
    const target = await hook('svc.payments.payment.cancelled', tag);
    const [message] = await fanOut(envelope(tag));
    if (!message?.delivery) throw new Error('no delivery');
    const uuid = message.delivery_uuid;
    const { event_json: json, ...rest } = deliveryItem(message.delivery);
    await db().send(new PutCommand({ TableName: tableName(), Item: { ...rest, event: JSON.parse(String(json)) } }));
    const claimed = await claimAttempt(uuid);
    expect(claimed?.delivery.event).toEqual(message.delivery.event);
    expect(claimed?.attempt).toBe(1);
    const rewritten = (await getItem(deliveryKey(uuid))) as Record<string, unknown>;
    expect(rewritten.event).toBeUndefined();
    expect(typeof rewritten.event_json).toBe('string');
    if (claimed) await sendAttempt(claimed);
    expect(requestsAt(target.path)).toHaveLength(1);
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

function sqsRecord(messageId: string, body: string, receiveCount = 1): SQSEvent['Records'][number] {
  return {
    messageId,
    receiptHandle: messageId,
    body,
    attributes: {
      ApproximateReceiveCount: String(receiveCount),
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

function envelope(tag: string): Envelope {
  return {
    uuid: newUuid(),
    name: 'svc.payments.payment.cancelled',
    created: now(),
    object: 'payment',
    object_uuid: newUuid(),
    organisation_uuid: DEMO.org,
    account_uuid: DEMO.secondAccount,
    sequence: 1,
    data: { note: tag },
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
  const item = { pk: `THING#${newUuid()}`, sk: 'THING', ...fields, ...definedFields({ events }) };
  return {
    eventName: 'INSERT',
    dynamodb: {
      SequenceNumber: String(100_000 + sequence),
      NewImage: marshall(item) as NonNullable<DynamoDBRecord['dynamodb']>['NewImage'],
    },
  };
}

/** What a spied client sent: each command's name and the parts of its input these tests read. */
interface SentCommand {
  name: string;
  input: {
    Item?: Record<string, unknown>;
    Key?: Record<string, unknown>;
    ConditionExpression?: string;
    ExpressionAttributeValues?: Record<string, unknown>;
    RequestItems?: Record<string, Array<{ PutRequest: { Item: Record<string, unknown> } }>>;
  };
}
function sentCommands(calls: ReadonlyArray<readonly unknown[]>): SentCommand[] {
  return calls.map(([command]) => {
    const sent = command as { constructor: { name: string }; input: SentCommand['input'] };
    return { name: sent.constructor.name, input: sent.input };
  });
}

/** A first attempt fanned out to a new endpoint and claimed from its message (the receiver answering `answer`). */
async function firstAttemptClaimed(answer?: number[]) {
  const tag = newUuid();
  const target = await hook('svc.payments.payment.cancelled', tag);
  if (answer) answers.set(target.path, answer);
  const [message] = await fanOut(envelope(tag));
  if (!message?.delivery) throw new Error('no delivery');
  const claimed = await claimFirstAttempt(message.delivery);
  if (!claimed) throw new Error('not claimed');
  return { target, message: { ...message, delivery: message.delivery }, claimed };
}

/** Stores a claimed attempt's Webhook Response, as its worker would, with the outcome given. */
async function storeResponse(claimed: Claimed, outcome: Partial<ResponseRecord>): Promise<void> {
  const record = { ...lostRecordOf(claimed), ...outcome };
  await db().send(new PutCommand({ TableName: tableName(), Item: responseItem(record, now() + 86_400) }));
}

/** A Webhook Response for a claimed attempt, as a worker would store it (fields the tests set aside). */
function lostRecordOf(claimed: Claimed): ResponseRecord {
  const { delivery } = claimed;
  return {
    uuid: claimed.responseUuid,
    organisation_uuid: delivery.organisation_uuid,
    ...definedFields({ account_uuid: delivery.account_uuid }),
    webhook_configuration_uuid: delivery.endpoint_uuid,
    delivery_uuid: delivery.uuid,
    event_uuid: delivery.event.uuid,
    object_uuid: delivery.event.object_uuid,
    attempt: claimed.attempt,
    sent_at: claimed.at,
    error: true,
    do_not_retry: false,
    request_headers: '{}',
    request_body: claimed.request.body,
    response_headers: '{}',
    response_body: '',
  };
}
