import { logger, workerHandler } from '@svc/core';
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
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  const outcomes = await Promise.all(
    event.Records.map(async (record) => {
      try {
        return await processDueEntry(dueEntrySchema.parse(JSON.parse(record.body)));
      } catch (error) {
        logger.error('billing message failed', { messageId: record.messageId, error });
        batchItemFailures.push({ itemIdentifier: record.messageId });
        return noOutcome();
      }
    }),
  );
  return { response: { batchItemFailures }, outcome: outcomes.reduce(addOutcomes, noOutcome()) };
}

export const handler = workerHandler(
  'billing-worker',
  async (event: SQSEvent): Promise<SQSBatchResponse> => (await processBillingBatch(event)).response,
);
