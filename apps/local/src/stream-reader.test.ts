import { randomUUID } from 'node:crypto';
import { DescribeTableCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { db, tableName } from '@svc/table';
import { describe, expect, it } from 'vitest';
import { StreamCallError, shardIterator, streamRecords, streamShardIds } from './stream-reader';

async function streamArn(): Promise<string> {
  const described = await db().send(new DescribeTableCommand({ TableName: tableName() }));
  const arn = described.Table?.LatestStreamArn;
  if (!arn) throw new Error('no stream');
  return arn;
}

describe("reading DynamoDB Local's stream", () => {
  it('hands records over as Lambda gets them: DynamoDB JSON, seconds, base64 binary', async () => {
    const pk = `STREAM#${randomUUID()}`;
    await db().send(
      new PutItemCommand({
        TableName: tableName(),
        Item: { pk: { S: pk }, sk: { S: 'X' }, count: { N: '42' }, blob: { B: Uint8Array.from([1, 2, 3]) } },
      }),
    );
    const arn = await streamArn();
    const found = [];
    for (const shardId of await streamShardIds(arn)) {
      let iterator = await shardIterator(arn, shardId);
      while (iterator) {
        const page = await streamRecords(iterator, 100);
        found.push(...page.records.filter((record) => record.dynamodb?.Keys?.pk?.S === pk));
        if (page.records.length === 0) break;
        iterator = page.next;
      }
    }
    expect(found).toHaveLength(1);
    const [record] = found;
    expect(record?.eventName).toBe('INSERT');
    expect(typeof record?.dynamodb?.ApproximateCreationDateTime).toBe('number');
    expect(record?.dynamodb?.NewImage).toMatchObject({
      count: { N: '42' },
      blob: { B: Buffer.from([1, 2, 3]).toString('base64') },
    });
  });

  it('reads on after a given record and names the service error of a bad iterator', async () => {
    for (const sk of ['A', 'B']) {
      await db().send(
        new PutItemCommand({ TableName: tableName(), Item: { pk: { S: 'STREAM#after' }, sk: { S: sk } } }),
      );
    }
    const arn = await streamArn();
    const [shardId] = await streamShardIds(arn);
    if (!shardId) throw new Error('no shard');
    const first = await streamRecords((await shardIterator(arn, shardId)) ?? '', 1);
    const sequence = first.records[0]?.dynamodb?.SequenceNumber;
    expect(sequence).toBeDefined();
    const after = await streamRecords((await shardIterator(arn, shardId, sequence)) ?? '', 1);
    const next = after.records[0]?.dynamodb?.SequenceNumber;
    expect(next).toBeDefined();
    expect(BigInt(next ?? 0)).toBeGreaterThan(BigInt(sequence ?? 0));
    const error = await streamRecords('not-an-iterator').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StreamCallError);
    expect((error as StreamCallError).type).toMatch(/Exception$/);
  });
});
