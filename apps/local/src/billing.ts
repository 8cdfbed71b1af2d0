import { asFunction } from '@svc/core';
import { billingRunHandler as billingRun } from '@svc/subscriptions';
import { registerBackgroundTask } from './background';
import { drainBillingQueue, ensureLocalQueues, isLocalQueueRunning } from './queues';

/**
 * Billing on one machine: the scheduler's timer fires the same billing-run handler as
 * EventBridge Scheduler, and the queue poller feeds the same worker as Lambda's SQS event source.
 * One lock keeps a run and its drain together, so a summary counts exactly its own charges.
 */
export interface BillingRunSummary {
  due: number;
  invoices_created: number;
  charge_attempts_created: number;
  succeeded: number;
  failed: number;
}

let lock: Promise<unknown> = Promise.resolve();

function exclusive<T>(work: () => Promise<T>): Promise<T> {
  const next = lock.catch(() => undefined).then(work);
  lock = next;
  return next;
}

/** `POST /_local/billing-run`: one run, answered once every charge it started has finished. */
export function runBillingNow(): Promise<BillingRunSummary> {
  return exclusive(async () => {
    await ensureLocalQueues();
    const { due } = await asFunction('billing-run', () => billingRun({ executionId: 'local' }));
    const { processed: _processed, ...outcome } = await drainBillingQueue();
    return { due, ...outcome };
  });
}

/** How often `pnpm start` fires a billing run (the deployed schedule runs every 15 minutes). */
const BILLING_SCHEDULE_MS = 60_000;

registerBackgroundTask({
  name: 'billing-schedule',
  intervalMs: BILLING_SCHEDULE_MS,
  settles: false,
  runOnce: async () => (await runBillingNow()).due,
});

registerBackgroundTask({
  name: 'billing-queue',
  intervalMs: 1_000,
  runOnce: async () => (isLocalQueueRunning() ? (await exclusive(drainBillingQueue)).processed : 0),
});
