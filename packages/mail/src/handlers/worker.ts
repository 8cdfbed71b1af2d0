import { workerHandler } from '@svc/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { processMailBatch } from '../worker';

/** The mail queue's worker (Lambda, SQS event source with ReportBatchItemFailures). */
export const handler = workerHandler(
  'mail-worker',
  async (event: SQSEvent): Promise<SQSBatchResponse> => (await processMailBatch(event)).response,
);
