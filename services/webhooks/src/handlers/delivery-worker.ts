import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { attemptDeliveries } from '../domain/delivery';
import { deliveryMessageSchema } from '../pipeline/queue';
import { handleSqsBatch } from './sqs-batch';

/**
 * The delivery queue's worker: one attempt per message (idempotent; see domain/delivery.ts), the
 * batch's attempts claimed, sent and recorded together; a message whose attempt failed is
 * reported alone.
 */
export async function processDeliveryBatch(
  event: SQSEvent,
): Promise<{ response: SQSBatchResponse; attempted: number }> {
  const { response, results } = await handleSqsBatch(
    event,
    'a delivery to attempt',
    (body) => deliveryMessageSchema.parse(body),
    attemptDeliveries,
  );
  return { response, attempted: results.filter((outcome) => outcome.attempted).length };
}

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> =>
  (await processDeliveryBatch(event)).response;
