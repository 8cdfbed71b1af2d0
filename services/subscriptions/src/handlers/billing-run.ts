import { logger } from '@svc/core';
import { runBilling } from '../domain/billing-run';
import { enqueueDueEntries } from './billing-queue';

/** EventBridge Scheduler's target: one billing run, one queue message per due item. */
export const handler = async (): Promise<{ due: number }> => {
  const summary = await runBilling(enqueueDueEntries);
  logger.info('billing run', { ...summary });
  return summary;
};
