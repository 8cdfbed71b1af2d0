import { workerHandler } from '@svc/core';
import type { Context } from 'aws-lambda';
import { resolveUnknownPayments } from '../domain/resolution';

/**
 * Scheduled every five minutes: payments whose provider did not answer are asked about again
 * (see domain/resolution.ts). The local runtime runs the same function on its timer and in
 * `POST /_local/settle`.
 */
export const handler: (event: unknown, context?: Context) => Promise<{ resolved: number }> = workerHandler(
  'payment-resolver',
  async (): Promise<{ resolved: number }> => ({ resolved: await resolveUnknownPayments() }),
);
