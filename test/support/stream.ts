import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { eventsOfChange, itemFromStreamImage, type StoredEvent } from '@svc/events';
import { db, tableName } from '@svc/table';
import { shardIterator, streamRecords, streamShardIds } from '../../apps/local/src/stream-reader';

/**
 * Every event the table's stream has carried so far, in stream order: what the event pipeline
 * will read. Reads each shard from its start until it has nothing more.
 */
export async function streamEvents(): Promise<StoredEvent[]> {
  const table = await db().send(new DescribeTableCommand({ TableName: tableName() }));
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error('The table has no stream');
  const events: StoredEvent[] = [];
  for (const shardId of await streamShardIds(streamArn)) {
    let iterator = await shardIterator(streamArn, shardId);
    while (iterator) {
      const page = await streamRecords(iterator);
      for (const record of page.records) {
        const { NewImage, OldImage } = record.dynamodb ?? {};
        events.push(...eventsOfChange(itemFromStreamImage(NewImage), itemFromStreamImage(OldImage)));
      }
      if (page.records.length === 0) break;
      iterator = page.next;
    }
  }
  return events;
}
