import { setTimeout as wait } from 'node:timers/promises';
import { logger } from '@svc/core';
import { itemFromStreamImage } from '@svc/events';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { projectItems, type SearchProjection } from './projection';

/**
 * The search projector: the table's stream → rows in the search engine (DynamoDB Streams →
 * Lambda in AWS, with partial batch responses, bisecting and a dead-letter queue; the local
 * stream poller locally). Upserts are guarded by the item's version, so a record delivered twice,
 * replayed or out of order never moves a row backwards. A batch that fails is projected record by
 * record, and the first record that fails is reported: the stream retries from it.
 */
export function streamProjector(projections: readonly SearchProjection[]) {
  return async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    const records = event.Records.flatMap((record) => {
      const item = itemFromStreamImage(record.dynamodb?.NewImage as Record<string, unknown> | undefined);
      return item ? [{ record, item }] : [];
    });
    try {
      await withResumeWait(() =>
        projectItems(
          projections,
          records.map(({ item }) => item),
        ),
      );
      return { batchItemFailures: [] };
    } catch (error) {
      logger.error('Search projection of a batch failed; projecting its records one by one', {
        error,
        records: event.Records.length,
      });
    }
    // One by one, in order: the first that fails is reported, so the stream retries from it (and
    // bisecting isolates it) while the records before it stay done.
    for (const { record, item } of records) {
      try {
        await projectItems(projections, [item]);
      } catch (error) {
        const sequence = record.dynamodb?.SequenceNumber;
        logger.error('Search projection of a record failed', { error, sequence });
        return { batchItemFailures: sequence ? [{ itemIdentifier: sequence }] : [] };
      }
    }
    return { batchItemFailures: [] };
  };
}

/**
 * A paused Aurora Serverless cluster (0 ACU) answers `DatabaseResumingException` while it wakes
 * (about 15 s): asked again within the function's minute rather than spending the stream's retries.
 */
async function withResumeWait(work: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await work();
      return;
    } catch (error) {
      if ((error as { name?: string }).name !== 'DatabaseResumingException' || attempt >= 8) throw error;
      await wait(5_000);
    }
  }
}
