import { logger } from '@svc/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import { fanOutAll } from '../domain/delivery';
import { enqueueDeliveries } from '../pipeline/queue';
import { type Envelope, envelopeSchema } from '../repository/items';

/**
 * The bus rule sends every `svc` event to the fan-out queue (the message body is the EventBridge
 * event); this worker takes them in batches: one delivery per matching endpoint and event,
 * written once (fan-out is idempotent), then the new deliveries go to the delivery queue ten to
 * a call. A message that cannot be handled is reported and retried, then dead-lettered; if
 * enqueuing fails after the deliveries are written, the sweeper sends them.
 */
const busEvent = z.object({ detail: envelopeSchema });

export async function fanOutMessages(event: SQSEvent): Promise<{ response: SQSBatchResponse; created: number }> {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  const parsed: Array<{ messageId: string; envelope: Envelope }> = [];
  for (const record of event.Records) {
    try {
      parsed.push({ messageId: record.messageId, envelope: busEvent.parse(JSON.parse(record.body)).detail });
    } catch (error) {
      logger.error('fan-out message is not an event', { messageId: record.messageId, error });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  const outcomes = await fanOutAll(parsed.map((p) => p.envelope));
  const created: string[] = [];
  outcomes.forEach((outcome, index) => {
    const messageId = parsed[index]?.messageId ?? '';
    if (outcome.status === 'fulfilled') created.push(...outcome.value);
    else {
      logger.error('event not fanned out', { messageId, error: outcome.reason });
      batchItemFailures.push({ itemIdentifier: messageId });
    }
  });
  if (created.length > 0) {
    try {
      await enqueueDeliveries(created);
    } catch (error) {
      // The deliveries are written and due: the sweeper sends them once their grace has passed.
      logger.error('deliveries not queued; the sweeper will send them', { count: created.length, error });
    }
  }
  return { response: { batchItemFailures }, created: created.length };
}

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => (await fanOutMessages(event)).response;
