import { logger } from '@svc/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import { attemptDelivery } from '../domain/delivery';

const message = z.object({ delivery_uuid: z.string() });

/** The delivery queue's worker: one attempt per message (idempotent; see domain/delivery.ts). */
export async function processDeliveryBatch(
  event: SQSEvent,
): Promise<{ response: SQSBatchResponse; attempted: number }> {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  const outcomes = await Promise.all(
    event.Records.map(async (record) => {
      try {
        return (await attemptDelivery(message.parse(JSON.parse(record.body)).delivery_uuid)).attempted ? 1 : 0;
      } catch (error) {
        logger.error('delivery message failed', { messageId: record.messageId, error });
        batchItemFailures.push({ itemIdentifier: record.messageId });
        return 0;
      }
    }),
  );
  return { response: { batchItemFailures }, attempted: outcomes.reduce<number>((a, b) => a + b, 0) };
}

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> =>
  (await processDeliveryBatch(event)).response;
