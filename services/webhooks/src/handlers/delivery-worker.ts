import { logger } from '@svc/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import { attemptDeliveries } from '../domain/delivery';

const message = z.object({ delivery_uuid: z.string() });

/**
 * The delivery queue's worker: one attempt per message (idempotent; see domain/delivery.ts), the
 * batch's attempts claimed, sent and recorded together; a message whose attempt failed is
 * reported alone.
 */
export async function processDeliveryBatch(
  event: SQSEvent,
): Promise<{ response: SQSBatchResponse; attempted: number }> {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  const parsed: Array<{ messageId: string; uuid: string }> = [];
  for (const record of event.Records) {
    try {
      parsed.push({ messageId: record.messageId, uuid: message.parse(JSON.parse(record.body)).delivery_uuid });
    } catch (error) {
      logger.error('delivery message is not a delivery', { messageId: record.messageId, error });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  const outcomes = await attemptDeliveries(parsed.map((p) => p.uuid));
  let attempted = 0;
  outcomes.forEach((outcome, index) => {
    const messageId = parsed[index]?.messageId ?? '';
    if (outcome.status === 'fulfilled') attempted += outcome.value.attempted ? 1 : 0;
    else {
      logger.error('delivery message failed', { messageId, error: outcome.reason });
      batchItemFailures.push({ itemIdentifier: messageId });
    }
  });
  return { response: { batchItemFailures }, attempted };
}

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> =>
  (await processDeliveryBatch(event)).response;
