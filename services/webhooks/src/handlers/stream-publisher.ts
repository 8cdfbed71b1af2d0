import { logger } from '@svc/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { envelopesOf } from '../pipeline/envelope';
import { publishEnvelopes } from '../pipeline/publish';

/**
 * The table stream's consumer: the events each written item carries go to the event bus. A
 * record that fails is reported (ReportBatchItemFailures) and the stream retries from it, in
 * order, so no event is skipped; events published twice are de-duplicated by fan-out. Its Lambda
 * entry is packages/api/src/stream-publisher-lambda.ts (it registers later capabilities' shapes).
 */
export async function publishStreamRecords(event: DynamoDBStreamEvent): Promise<{
  response: DynamoDBBatchResponse;
  published: number;
}> {
  let published = 0;
  for (const record of event.Records) {
    try {
      const envelopes = await envelopesOf(record);
      if (envelopes.length > 0) await publishEnvelopes(envelopes);
      published += envelopes.length;
    } catch (error) {
      logger.error('stream record not published', { sequence: record.dynamodb?.SequenceNumber, error });
      return {
        response: { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }] },
        published,
      };
    }
  }
  return { response: { batchItemFailures: [] }, published };
}
