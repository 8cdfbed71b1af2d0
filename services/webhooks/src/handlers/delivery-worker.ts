import { handleSqsBatch, logger, workerHandler } from '@svc/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { releaseHeldClaim } from '../domain/delivery';
import { attemptDeliveries } from '../domain/delivery-attempt';
import { DELIVERY_MAX_RECEIVES, type DeliveryMessage, deliveryMessageSchema } from '../pipeline/queue';

/**
 * The delivery queue's worker: one attempt per message (idempotent; see domain/delivery.ts), the
 * batch's attempts claimed, sent and recorded together; a message whose attempt failed is
 * reported alone. A first attempt's claim is held by its message (it has no due entry): when
 * the message fails on its last receive before the dead-letter queue, its claim is handed to the
 * due index first, so the sweeper brings the delivery back even if nobody redrives that queue.
 */
interface Received {
  message: DeliveryMessage;
  lastReceive: boolean;
}

async function attemptReceived(received: Received[]) {
  const outcomes = await attemptDeliveries(received.map((r) => r.message));
  await Promise.all(
    outcomes.map(async (outcome, index) => {
      const { message, lastReceive } = received[index] as Received;
      if (outcome.status === 'fulfilled' || !lastReceive || !message.delivery) return;
      await releaseHeldClaim(message.delivery_uuid).catch((error: unknown) => {
        logger.error('held claim not released to the due index; its message goes to the dead-letter queue', {
          delivery: message.delivery_uuid,
          error,
        });
      });
    }),
  );
  return outcomes;
}

export async function processDeliveryBatch(
  event: SQSEvent,
): Promise<{ response: SQSBatchResponse; attempted: number }> {
  const { response, results } = await handleSqsBatch(
    event,
    'a delivery to attempt',
    (body, record): Received => ({
      message: deliveryMessageSchema.parse(body),
      lastReceive: Number(record.attributes.ApproximateReceiveCount) >= DELIVERY_MAX_RECEIVES,
    }),
    attemptReceived,
  );
  return { response, attempted: results.filter((outcome) => outcome.attempted).length };
}

export const handler = workerHandler(
  'delivery-worker',
  async (event: SQSEvent): Promise<SQSBatchResponse> => (await processDeliveryBatch(event)).response,
);
