import { BUSINESS_METRICS, now, recordMetric, workerHandler } from '@svc/core';
import { failedAttempts, markQueued } from '../domain/delivery';
import { enqueueDeliveries } from '../pipeline/queue';
import { type DeliveryRecord, dueDeliveriesWithTimes } from '../repository/webhook-repository';

/**
 * Scheduled every minute: every delivery whose next attempt (or lapsed lease) is due goes to the
 * delivery queue. Retries wait here, in the table's due index, by the service clock, so back-off
 * of hours costs nothing while it waits and survives any restart.
 *
 * Deliveries a paced endpoint holds back are due second by second (domain/pacing.ts). A sweep
 * every minute would send a minute of them at once, too late for the seconds reserved for them,
 * so in AWS the sweeper also takes what falls due before the next sweep
 * (SVC_DELIVERY_SWEEP_LOOKAHEAD_SECONDS, the schedule's period) and sends each with the queue's
 * delay until its second (DelaySeconds, at most 900: "the length of time, in seconds, for which to
 * delay a specific message. Valid values: 0 to 900",
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatchRequestEntry.html).
 * The local runtime sweeps whenever it settles, by the service clock tests move: no look-ahead.
 */
/** At most this many per shard per sweep: a back-log drains over several sweeps, fairly. */
export const SWEEP_PER_SHARD = 2_000;
const MAX_DELAY_SECONDS = 900;

export function sweepLookaheadSeconds(): number {
  const configured = Number(process.env.SVC_DELIVERY_SWEEP_LOOKAHEAD_SECONDS);
  return Number.isInteger(configured) && configured > 0 ? Math.min(configured, MAX_DELAY_SECONDS) : 0;
}

/**
 * The backlog a sweep reports (WebhookBacklog, WebhookBacklogAge, every sweep, 0 when none), from
 * what it reads anyway (the due index's keys, then each delivery as it marks it), no other read:
 *
 * - WebhookBacklog: the deliveries this sweep found waiting in the table and sent to the queue
 *   (due by now, or by the look-ahead: paced, paused by their endpoint, waiting for room in
 *   flight, retries, or lost by their message). At most SWEEP_PER_SHARD per shard are read, so the
 *   figure stops at SWEEP_PER_SHARD × DELIVERY_SHARDS (64,000): a larger backlog shows as that.
 * - WebhookBacklogAge: the longest wait among them, in seconds: from its event's creation for a
 *   delivery no failed attempt came before (its receiver has waited all that time), and from when
 *   it fell due for a retry after a failure (a retry's back-off is a wait by design; it is late
 *   only past its due time). Each shard is read oldest due first, so the cap never hides the most
 *   overdue retry; a delivery not yet due beyond the look-ahead (paced far ahead, paused for an
 *   hour) is seen when it falls due, and meanwhile its wait shows as lag (EventToDeliveryLag, on
 *   each hold).
 */
export function backlogWait(read: DeliveryRecord, due: number | undefined, at: number): number {
  const since = failedAttempts(read) === 0 ? read.event.created : (due ?? at);
  return Math.max(0, at - since);
}

export async function sweepDueDeliveries(): Promise<number> {
  const at = now();
  const due = await dueDeliveriesWithTimes(at + sweepLookaheadSeconds(), SWEEP_PER_SHARD);
  const dueAt = new Map(due.map((d) => [d.uuid, d.due]));
  let oldest = 0;
  const uuids =
    due.length === 0
      ? []
      : await markQueued(
          due.map((d) => d.uuid),
          (read) => {
            oldest = Math.max(oldest, backlogWait(read, dueAt.get(read.uuid), at));
          },
        );
  recordMetric(BUSINESS_METRICS.webhookBacklog, uuids.length);
  recordMetric(BUSINESS_METRICS.webhookBacklogAge, oldest, {}, 'Seconds');
  // Counted from when they are sent, not from when the sweep began: marking thousands takes time.
  const sentAt = now();
  const delays = uuids.map((uuid) => Math.min(MAX_DELAY_SECONDS, Math.max(0, (dueAt.get(uuid) ?? sentAt) - sentAt)));
  if (uuids.length > 0) await enqueueDeliveries(uuids, delays);
  return uuids.length;
}

export const handler = workerHandler(
  'delivery-sweeper',
  async (): Promise<{ due: number }> => ({ due: await sweepDueDeliveries() }),
);
