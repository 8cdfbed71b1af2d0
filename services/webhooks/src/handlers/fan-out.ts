import type { EventBridgeEvent } from 'aws-lambda';
import { fanOut } from '../domain/delivery';
import { enqueueDeliveries } from '../pipeline/queue';
import { envelopeSchema } from '../repository/items';

/**
 * The bus rule's target: one event in, one delivery per matching endpoint out, each sent to the
 * delivery queue. If enqueuing fails after the deliveries are written, the sweeper sends them.
 */
export async function fanOutEvent(event: EventBridgeEvent<string, unknown>): Promise<number> {
  const envelope = envelopeSchema.parse(event.detail);
  const created = await fanOut(envelope);
  if (created.length > 0) await enqueueDeliveries(created);
  return created.length;
}

export const handler = async (event: EventBridgeEvent<string, unknown>): Promise<void> => {
  await fanOutEvent(event);
};
