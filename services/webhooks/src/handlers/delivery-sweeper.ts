import { now, workerHandler } from '@svc/core';
import { markQueued } from '../domain/delivery';
import { enqueueDeliveries } from '../pipeline/queue';
import { dueDeliveries } from '../repository/webhook-repository';

/**
 * Scheduled every minute: every delivery whose next attempt (or lapsed lease) is due goes to the
 * delivery queue. Retries wait here, in the table's due index, by the service clock, so back-off
 * of hours costs nothing while it waits and survives any restart.
 */
/** At most this many per shard per sweep: a back-log drains over several sweeps, fairly. */
export const SWEEP_PER_SHARD = 2_000;

export async function sweepDueDeliveries(): Promise<number> {
  const due = await dueDeliveries(now(), SWEEP_PER_SHARD);
  const uuids = due.length === 0 ? [] : await markQueued(due);
  if (uuids.length > 0) await enqueueDeliveries(uuids);
  return uuids.length;
}

export const handler = workerHandler(
  'delivery-sweeper',
  async (): Promise<{ due: number }> => ({ due: await sweepDueDeliveries() }),
);
