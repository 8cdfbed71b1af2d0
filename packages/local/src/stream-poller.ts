import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { withoutSdkCallLogging } from '@svc/core';
import { registerOnboardingEventData } from '@svc/onboarding';
import { db, tableName } from '@svc/table';
import { publishStreamRecords } from '@svc/webhooks';
import type { DynamoDBRecord } from 'aws-lambda';

// The same event shapes the stream publisher's Lambda entry registers.
registerOnboardingEventData();

/**
 * Feeds the table's stream on DynamoDB Local to the stream publisher, as Lambda's event source
 * mapping does in AWS: every shard from its start, in order, a record retried (with everything
 * after it) until the publisher takes it. Fan-out is idempotent, so records read again after a
 * restart deliver nothing twice.
 */
interface ShardState {
  iterator?: string;
  lastSequence?: string;
  done: boolean;
  /** Records read but not yet taken by the publisher. */
  backlog: DynamoDBRecord[];
}

let client: DynamoDBStreamsClient | undefined;
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
  client ??= withoutSdkCallLogging(new DynamoDBStreamsClient({ endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB }));
  return streamArn;
}

async function iteratorFor(arn: string, shardId: string, state: ShardState): Promise<string | undefined> {
  if (state.iterator) return state.iterator;
  const out = await (client as DynamoDBStreamsClient).send(
    new GetShardIteratorCommand({
      StreamArn: arn,
      ShardId: shardId,
      ...(state.lastSequence
        ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: state.lastSequence }
        : { ShardIteratorType: 'TRIM_HORIZON' }),
    }),
  );
  state.iterator = out.ShardIterator;
  return state.iterator;
}

async function readShard(arn: string, shardId: string, state: ShardState): Promise<void> {
  for (let page = 0; page < 100; page++) {
    const iterator = await iteratorFor(arn, shardId, state);
    if (!iterator) {
      state.done = true;
      return;
    }
    let out: { Records?: StreamRecord[]; NextShardIterator?: string };
    try {
      out = await (client as DynamoDBStreamsClient).send(
        new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }),
      );
    } catch (error) {
      if ((error as { name?: string }).name !== 'ExpiredIteratorException') throw error;
      state.iterator = undefined;
      continue;
    }
    const records = out.Records ?? [];
    for (const record of records) {
      state.backlog.push(record as unknown as DynamoDBRecord);
      state.lastSequence = record.dynamodb?.SequenceNumber ?? state.lastSequence;
    }
    state.iterator = out.NextShardIterator;
    if (!out.NextShardIterator) state.done = true;
    if (records.length === 0) return;
  }
}

/** One poll: read what is new on every shard and publish it; returns the records published. */
export async function pollStream(): Promise<number> {
  const arn = await currentStream();
  if (!arn) return 0;
  const described = await (client as DynamoDBStreamsClient).send(new DescribeStreamCommand({ StreamArn: arn }));
  for (const shard of described.StreamDescription?.Shards ?? []) {
    if (shard.ShardId && !shards.has(shard.ShardId)) shards.set(shard.ShardId, { done: false, backlog: [] });
  }
  let handled = 0;
  for (const [shardId, state] of shards) {
    if (!state.done) await readShard(arn, shardId, state);
    while (state.backlog.length > 0) {
      const batch = state.backlog.slice(0, 100);
      const { response } = await publishStreamRecords({ Records: batch });
      const failed = response.batchItemFailures[0]?.itemIdentifier;
      const taken = failed === undefined ? batch.length : batch.findIndex((r) => r.dynamodb?.SequenceNumber === failed);
      state.backlog.splice(0, Math.max(0, taken));
      handled += Math.max(0, taken);
      if (failed !== undefined) throw new Error(`The stream publisher refused record ${failed}; it will be retried`);
    }
  }
  return handled;
}
