import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { derivedUuid, logger, sdkClient } from '@svc/core';
import * as z from 'zod';
import { deliveryRecordSchema } from '../repository/webhook-repository';
import { batchesOf } from './batches';

/**
 * The delivery queue (SVC_DELIVERY_QUEUE_URL): one message per delivery attempt to start. Locally
 * the SDK reaches the SQS stand-in through AWS_ENDPOINT_URL_SQS.
 *
 * A message names its delivery. A first attempt fresh from fan-out also carries the delivery
 * itself: it is not in the table yet (the worker's claim writes it), so until then the queue, with
 * its retries and dead-letter queue, is what holds it. Later attempts (the sweeper's) and
 * deliveries too large to carry are in the table, and the message names them only.
 */
export const deliveryMessageSchema = z
  .object({ delivery_uuid: z.string(), delivery: deliveryRecordSchema.optional() })
  .refine(
    ({ delivery_uuid: uuid, delivery }) =>
      delivery === undefined ||
      (delivery.uuid === uuid &&
        // The one delivery of its event to its endpoint, for the event's own organisation.
        uuid === derivedUuid('delivery', delivery.event.uuid, delivery.endpoint_uuid) &&
        delivery.organisation_uuid === delivery.event.organisation_uuid &&
        delivery.account_uuid === delivery.event.account_uuid),
    { message: "a carried delivery must be its event's delivery to its endpoint" },
  );
export type DeliveryMessage = z.infer<typeof deliveryMessageSchema>;

/** Receives of a delivery message before the queue moves it to its dead-letter queue (redrive policy). */
export const DELIVERY_MAX_RECEIVES = 5;

/** SendMessageBatch takes ten messages of at most 256 KB together. */
const SEND_MAX = 10;
const SEND_MAX_BYTES = 256 * 1024;
/** A delivery is carried in its message up to this size (so a batch call still holds four). */
export const INLINE_DELIVERY_MAX_BYTES = 64 * 1024;

let client: SQSClient | undefined;

export function resetDeliveryQueueClient(): void {
  client = undefined;
}

/**
 * Sends messages ten (and at most 256 KB) to a call; returns the indexes of those the queue did
 * not take (refused entries, or every entry of a call that failed).
 */
export async function sendDeliveryMessages(
  messages: readonly DeliveryMessage[],
  /** Per message: seconds the queue keeps it hidden first (SQS DelaySeconds, 0–900). */
  delays: readonly number[] = [],
): Promise<number[]> {
  if (messages.length === 0) return [];
  const url = process.env.SVC_DELIVERY_QUEUE_URL;
  if (!url) throw new Error('SVC_DELIVERY_QUEUE_URL is not set');
  client ??= sdkClient(new SQSClient({}));
  const bodies = messages.map((message, index) => ({ index, body: JSON.stringify(message) }));
  const unsent: number[] = [];
  for (const batch of batchesOf(bodies, (entry) => Buffer.byteLength(entry.body), SEND_MAX, SEND_MAX_BYTES)) {
    try {
      const out = await client.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: batch.map(({ index, body }) => ({
            Id: String(index),
            MessageBody: body,
            ...(delays[index] ? { DelaySeconds: delays[index] } : {}),
          })),
        }),
      );
      for (const failed of out.Failed ?? []) unsent.push(Number(failed.Id));
    } catch (error) {
      logger.warn('delivery messages not sent', { count: batch.length, error });
      unsent.push(...batch.map(({ index }) => index));
    }
  }
  return unsent.sort((a, b) => a - b);
}

/**
 * Queues deliveries already in the table (the sweeper's retries, redeliveries). A message the
 * queue refuses is not lost: its delivery is in the due index and the sweeper sends it again.
 */
export async function enqueueDeliveries(
  deliveryUuids: readonly string[],
  delays: readonly number[] = [],
): Promise<void> {
  const unsent = await sendDeliveryMessages(
    deliveryUuids.map((uuid) => ({ delivery_uuid: uuid })),
    delays,
  );
  if (unsent.length > 0 && unsent.length === deliveryUuids.length)
    throw new Error('SQS took none of the delivery messages');
}
