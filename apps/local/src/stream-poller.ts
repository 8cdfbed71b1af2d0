import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { carriesEvents, publisherTakes, SEARCH_PROJECTIONS, wireDomains } from '@svc/api';
import { asFunction, logger } from '@svc/core';
import { streamProjector } from '@svc/sql';
import { db, tableName } from '@svc/table';
import { publishStreamRecords } from '@svc/webhooks';
import type { DynamoDBRecord } from 'aws-lambda';
import { StreamCallError, shardIterator, streamRecords, streamShardIds } from './stream-reader';

// The same event-data builders the stream publisher's Lambda entry is given.
wireDomains();
// The search projector's Lambda entry, over the same projections.
const projectStreamRecords = streamProjector(SEARCH_PROJECTIONS);

/**
 * Feeds the table's stream on DynamoDB Local to the stream publisher, as Lambda's event source
 * mapping does in AWS: every shard from its start, in order, records as the stream sends them, a
 * record retried (with everything after it) until the publisher takes it. Fan-out is idempotent,
 * so records read again after a restart deliver nothing twice.
 */
interface ShardState {
  iterator?: string;
  lastSequence?: string;
  done: boolean;
  /** Records read but not yet taken by the publisher. */
  backlog: DynamoDBRecord[];
}

let streamArn: string | undefined;
let streamTable: string | undefined;
const shards = new Map<string, ShardState>();

async function currentStream(): Promise<string | undefined> {
  const table = tableName();
  if (streamArn && streamTable === table) return streamArn;
  const described = await db().send(new DescribeTableCommand({ TableName: table }));
  streamArn = described.Table?.LatestStreamArn;
  streamTable = table;
  shards.clear();
  return streamArn;
}

async function readShard(arn: string, shardId: string, state: ShardState): Promise<void> {
  for (let page = 0; page < 100; page++) {
    state.iterator ??= await shardIterator(arn, shardId, state.lastSequence);
    if (!state.iterator) {
      state.done = true;
      return;
    }
    let out: Awaited<ReturnType<typeof streamRecords>>;
    try {
      out = await streamRecords(state.iterator);
    } catch (error) {
      if (!(error instanceof StreamCallError)) throw error;
      if (error.type === 'TrimmedDataAccessException') {
        // DynamoDB Local sometimes answers this for an iterator it handed out (seen under a
        // concurrent run, cause not found): start again from the oldest record it keeps (what
        // Lambda does in this case is not checked here; this is the local reader's own choice).
        // Records read again deliver nothing twice.
        logger.warn('Stream records trimmed under the reader; reading the shard from its oldest record', { shardId });
        state.iterator = undefined;
        state.lastSequence = undefined;
        continue;
      }
      if (error.type !== 'ExpiredIteratorException') throw error;
      state.iterator = undefined;
      continue;
    }
    for (const record of out.records) {
      state.backlog.push(record);
      state.lastSequence = record.dynamodb?.SequenceNumber ?? state.lastSequence;
    }
    state.iterator = out.next;
    if (!out.next) state.done = true;
    if (out.records.length === 0) return;
  }
}

/** One poll: read what is new on every shard and publish it; returns the records published. */
export async function pollStream(): Promise<number> {
  const arn = await currentStream();
  if (!arn) return 0;
  for (const shardId of await streamShardIds(arn)) {
    if (!shards.has(shardId)) shards.set(shardId, { done: false, backlog: [] });
  }
  let handled = 0;
  for (const [shardId, state] of shards) {
    if (!state.done) await readShard(arn, shardId, state);
    while (state.backlog.length > 0) {
      const batch = state.backlog.slice(0, 100);
      // The search projector reads the stream too (its own event source mapping in AWS; here
      // one reader feeds both, so a batch waits until both took it).
      const projected = await asFunction('search-projector', () => projectStreamRecords({ Records: batch }));
      if (projected.batchItemFailures.length > 0) throw new Error('The search projector failed; the batch is retried');
      const { response } = await asFunction('stream-publisher', () =>
        publishStreamRecords({ Records: recordsForPublisher(batch) }),
      );
      const failed = response.batchItemFailures[0]?.itemIdentifier;
      const taken = failed === undefined ? batch.length : batch.findIndex((r) => r.dynamodb?.SequenceNumber === failed);
      state.backlog.splice(0, Math.max(0, taken));
      handled += Math.max(0, taken);
      if (failed !== undefined) throw new Error(`The stream publisher refused record ${failed}; it will be retried`);
    }
  }
  return handled;
}

/** Thrown when an item type the publisher's filter leaves out carries events: they would never be published in AWS. */
export class FilteredEventsError extends Error {}

/**
 * The records the stream publisher's event filter lets through in AWS (STREAM_PUBLISHER_FILTER,
 * @svc/api). A record it leaves out that carries events is refused here: in AWS those events
 * would be lost, so the item type must come off the filter's quiet list.
 */
export function recordsForPublisher(batch: DynamoDBRecord[]): DynamoDBRecord[] {
  const taken = batch.filter(publisherTakes);
  const lost = batch.find((record) => !publisherTakes(record) && carriesEvents(record));
  if (lost) {
    const entity = (lost.dynamodb?.NewImage as Record<string, { S?: string }> | undefined)?.entity?.S;
    throw new FilteredEventsError(
      `A ${entity ?? 'untyped'} item carries events, but the stream publisher's filter leaves it out: they would be lost in AWS`,
    );
  }
  return taken;
}
