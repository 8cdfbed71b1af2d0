import { logger } from '@svc/core';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { envelopesOf } from '../pipeline/envelope';
import { recordEventMetrics } from '../pipeline/event-metrics';
import { PUT_EVENTS_MAX, publishEnvelopes } from '../pipeline/publish';
import type { Envelope } from '../repository/webhook-repository';

/**
 * The table stream's consumer: the events each written item carries go to the event bus, ten to
 * a PutEvents call whichever records they come from, in stream order. A record that fails is
 * reported (ReportBatchItemFailures) and the stream retries from it, in order, so no event is
 * skipped; events published twice (those of a failed call's earlier records, say) are
 * delivered once (a delivery's first claim is written only once). Its Lambda entry is apps/api/src/stream-publisher-lambda.ts (it
 * registers later capabilities' shapes).
 */
export async function publishStreamRecords(event: DynamoDBStreamEvent): Promise<{
  response: DynamoDBBatchResponse;
  published: number;
}> {
  /** Envelopes not yet sent, each with the index of the record it came from. */
  let waiting: Array<{ envelope: Envelope; record: number }> = [];
  let published = 0;
  const failure = (record: DynamoDBRecord | undefined, error: unknown) => {
    logger.error('stream record not published', { sequence: record?.dynamodb?.SequenceNumber, error });
    return {
      response: { batchItemFailures: [{ itemIdentifier: record?.dynamodb?.SequenceNumber ?? '' }] },
      published,
    };
  };
  /** Sends full calls' worth (or everything, at the end); on failure, the first record not wholly sent. */
  const send = async (all: boolean): Promise<number | undefined> => {
    while (waiting.length >= PUT_EVENTS_MAX || (all && waiting.length > 0)) {
      const batch = waiting.slice(0, PUT_EVENTS_MAX);
      try {
        await publishEnvelopes(batch.map((w) => w.envelope));
      } catch (error) {
        logger.error('events not published', { error });
        return batch[0]?.record;
      }
      recordEventMetrics(batch.map((w) => w.envelope));
      waiting = waiting.slice(batch.length);
      published += batch.length;
    }
    return undefined;
  };
  for (const [index, record] of event.Records.entries()) {
    let envelopes: Envelope[];
    try {
      envelopes = await envelopesOf(record);
    } catch (error) {
      const failed = await send(true);
      return failure(event.Records[failed ?? index], error);
    }
    waiting.push(...envelopes.map((envelope) => ({ envelope, record: index })));
    const failed = await send(false);
    if (failed !== undefined) return failure(event.Records[failed], 'the bus refused the events');
  }
  const failed = await send(true);
  if (failed !== undefined) return failure(event.Records[failed], 'the bus refused the events');
  return { response: { batchItemFailures: [] }, published };
}
