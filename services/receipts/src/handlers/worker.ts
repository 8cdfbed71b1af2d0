import { workerHandler } from '@svc/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { processReceiptsBatch } from '../domain/worker';

/** The receipts queue's worker (Lambda, SQS event source with ReportBatchItemFailures). */
export const handler = workerHandler(
  'receipts-worker',
  async (event: SQSEvent): Promise<SQSBatchResponse> => (await processReceiptsBatch(event)).response,
);
