import { logger } from '@svc/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import { fanOutAll } from '../domain/delivery';
import { enqueueDeliveries } from '../pipeline/queue';
import { envelopeSchema } from '../repository/items';
import { handleSqsBatch } from './sqs-batch';

/**
 * The bus rule sends every `svc` event to the fan-out queue (the message body is the EventBridge
 * event); this worker takes them in batches: one delivery per matching endpoint and event,
 * written once (fan-out is idempotent), then the new deliveries go to the delivery queue ten to
 * a call. A message that cannot be handled is reported and retried, then dead-lettered; if
 * enqueuing fails after the deliveries are written, the sweeper sends them.
 */
const busEvent = z.object({ detail: envelopeSchema });

export async function fanOutMessages(event: SQSEvent): Promise<{ response: SQSBatchResponse; created: number }> {
  const { response, results } = await handleSqsBatch(
    event,
    'an event to fan out',
    (body) => busEvent.parse(body).detail,
    fanOutAll,
  );
  const created = results.flat();
  if (created.length > 0) {
    try {
      await enqueueDeliveries(created);
    } catch (error) {
      // The deliveries are written and due: the sweeper sends them once their grace has passed.
      logger.error('deliveries not queued; the sweeper will send them', { count: created.length, error });
    }
  }
  return { response, created: created.length };
}

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => (await fanOutMessages(event)).response;
