import { handleSqsBatch, workerHandler } from '@svc/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { addOutcomes, type BillingOutcome, noOutcome } from '../domain/billing';
import { dueEntrySchema, processDueEntry } from '../domain/billing-run';

/**
 * The billing queue's worker. Each message is processed on its own; a failed one is reported
 * back (ReportBatchItemFailures) and SQS redelivers it, ending in the dead-letter queue after
 * five receives. Processing is idempotent, so a redelivered message changes nothing twice.
 */
export async function processBillingBatch(
  event: SQSEvent,
): Promise<{ response: SQSBatchResponse; outcome: BillingOutcome }> {
  const { response, results } = await handleSqsBatch(
    event,
    'a billing entry',
    (body) => dueEntrySchema.parse(body),
    (entries) => Promise.allSettled(entries.map(processDueEntry)),
  );
  return { response, outcome: results.reduce(addOutcomes, noOutcome()) };
}

export const handler = workerHandler(
  'billing-worker',
  async (event: SQSEvent): Promise<SQSBatchResponse> => (await processBillingBatch(event)).response,
);
