import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import { attemptDeliveries } from '../domain/delivery';
import { handleSqsBatch } from './sqs-batch';

const message = z.object({ delivery_uuid: z.string() });

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
    (body) => message.parse(body).delivery_uuid,
    attemptDeliveries,
  );
  return { response, attempted: results.filter((outcome) => outcome.attempted).length };
}

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> =>
  (await processDeliveryBatch(event)).response;
