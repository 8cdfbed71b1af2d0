import { logger, workerHandler } from '@svc/core';
import { runBilling } from '../domain/billing-run';
import { enqueueDueEntries } from './billing-queue';

/** What the schedule sends (infra/constructs/billing.ts); the run bills what is due now either way. */
export interface BillingRunEvent {
  scheduledTime?: string;
  executionId?: string;
}

/** EventBridge Scheduler's target: one billing run, one queue message per due item. */
export const handler = workerHandler('billing-run', async (_event: BillingRunEvent): Promise<{ due: number }> => {
  const summary = await runBilling(enqueueDueEntries);
  logger.info('billing run', { ...summary });
  return summary;
});
