import { now } from '@svc/core';
import { enqueueDeliveries } from '../pipeline/queue';
import { dueDeliveries } from '../repository/items';

/**
 * Scheduled every minute: every delivery whose next attempt (or lapsed lease) is due goes to the
 * delivery queue. Retries wait here, in the table's due index, by the service clock, so back-off
 * of hours costs nothing while it waits and survives any restart.
 */
export async function sweepDueDeliveries(): Promise<number> {
  let sent = 0;
  for await (const uuids of dueDeliveries(now())) {
    if (uuids.length === 0) continue;
    await enqueueDeliveries(uuids);
    sent += uuids.length;
  }
  return sent;
}

export const handler = async (): Promise<{ due: number }> => ({ due: await sweepDueDeliveries() });
