import { workerHandler } from '@svc/core';
import { type MailSweep, sweepUnsentMail } from '../worker';

/** Started by EventBridge Scheduler: unsent mails past their due time go to the queue again. */
export const handler = workerHandler('mail-sweeper', async (_event: unknown): Promise<MailSweep> => sweepUnsentMail());
