import { handleSqsBatch, workerHandler } from '@svc/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import { fanOutAll } from '../domain/delivery';
import { sendDeliveryMessages } from '../pipeline/queue';
import { type Envelope, envelopeSchema } from '../repository/webhook-repository';

/**
 * The bus rule sends every `svc` event to the fan-out queue (the message body is the EventBridge
 * event); this worker takes them in batches: one delivery message per matching endpoint and
 * event, all of the batch's sent to the delivery queue ten to a call. An event is done once all
 * its messages are queued; one that cannot be handled, or one of whose messages the queue did not
 * take, is reported and retried (then dead-lettered). Fanning an event out again is safe: a
 * delivery's uuid derives from event and endpoint, and its first claim is written only once.
 */
const busEvent = z.object({ detail: envelopeSchema });

async function fanOutAndQueue(events: Envelope[]): Promise<Array<PromiseSettledResult<number>>> {
  const fanned = await fanOutAll(events);
  const queued = fanned.flatMap((result, event) =>
    result.status === 'fulfilled' ? result.value.map((message) => ({ event, message })) : [],
  );
  const unsent = await sendDeliveryMessages(queued.map(({ message }) => message));
  const notQueued = new Set(unsent.map((index) => queued[index]?.event));
  return fanned.map((result, event) => {
    if (result.status === 'rejected') return result;
    if (notQueued.has(event))
      return { status: 'rejected', reason: new Error('the delivery queue did not take every message') };
    return { status: 'fulfilled', value: result.value.length };
  });
}

export async function fanOutMessages(event: SQSEvent): Promise<{ response: SQSBatchResponse; queued: number }> {
  const { response, results } = await handleSqsBatch(
    event,
    'an event to fan out',
    (body) => busEvent.parse(body).detail,
    fanOutAndQueue,
  );
  return { response, queued: results.reduce((sum, count) => sum + count, 0) };
}

export const handler = workerHandler(
  'fan-out',
  async (event: SQSEvent): Promise<SQSBatchResponse> => (await fanOutMessages(event)).response,
);
