import { logger } from '@svc/core';
import { itemFromStreamImage } from '@svc/events';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { paymentsAmong, projectPayments } from '../search/payment-search';

/**
 * The search projector: the table's stream → payment rows in the search engine (DynamoDB Streams
 * → Lambda in AWS, with partial batch responses, bisecting and a dead-letter queue; the local
 * stream poller locally). Upserts are guarded by the item's version, so a record delivered twice,
 * replayed or out of order never moves a row backwards. A batch that fails is reported from its
 * first record on, and retried.
 */
export async function projectStreamRecords(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const items = event.Records.flatMap((record) => {
    const item = itemFromStreamImage(record.dynamodb?.NewImage as Record<string, unknown> | undefined);
    return item ? [item] : [];
  });
  try {
    await projectPayments(paymentsAmong(items));
    return { batchItemFailures: [] };
  } catch (error) {
    const first = event.Records[0]?.dynamodb?.SequenceNumber;
    logger.error('Search projection failed; the batch is retried', { error, records: event.Records.length });
    return { batchItemFailures: first ? [{ itemIdentifier: first }] : [] };
  }
}

export const handler = projectStreamRecords;
