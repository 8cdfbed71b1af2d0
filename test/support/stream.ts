import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { eventsOfChange, itemFromStreamImage, type StoredEvent } from '@svc/events';
import { db, tableName } from '@svc/table';

/**
 * Every event the table's stream has carried so far, in stream order: what the event pipeline
 * will read. Reads each shard from its start until it has nothing more.
 */
export async function streamEvents(): Promise<StoredEvent[]> {
  const table = await db().send(new DescribeTableCommand({ TableName: tableName() }));
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error('The table has no stream');
  const streams = new DynamoDBStreamsClient({ endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB });
  const description = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
  const events: StoredEvent[] = [];
  for (const shard of description.StreamDescription?.Shards ?? []) {
    let iterator = (
      await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shard.ShardId,
          ShardIteratorType: 'TRIM_HORIZON',
        }),
      )
    ).ShardIterator;
    while (iterator) {
      const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
      for (const record of page.Records ?? []) {
        const { NewImage, OldImage } = record.dynamodb ?? {};
        events.push(...eventsOfChange(itemFromStreamImage(NewImage), itemFromStreamImage(OldImage)));
      }
      if ((page.Records ?? []).length === 0) break;
      iterator = page.NextShardIterator;
    }
  }
  streams.destroy();
  return events;
}
