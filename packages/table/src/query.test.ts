import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { newUuid } from '@svc/core';
import { describe, expect, it } from 'vitest';
import { db } from './client';
import { tableName } from './definition';
import { queryAll, queryPages } from './query';

async function partitionWith(sortKeys: string[]): Promise<string> {
  const pk = `Q#${newUuid()}`;
  for (const sk of sortKeys) {
    await db().send(
      new PutCommand({ TableName: tableName(), Item: { pk, sk, gsi1pk: pk, gsi1sk: sk, pad: 'x'.repeat(10) } }),
    );
  }
  return pk;
}

const sortKeysOf = (items: Record<string, unknown>[]) => items.map((item) => item.sk);

describe('partition queries', () => {
  it('read a whole partition in order, or narrowed by prefix, by lower bound, by limit, descending', async () => {
    const pk = await partitionWith(['A#1', 'A#2', 'B#1', 'B#2', 'C#1']);
    expect(sortKeysOf(await queryAll({ partition: pk, consistent: true }))).toEqual([
      'A#1',
      'A#2',
      'B#1',
      'B#2',
      'C#1',
    ]);
    expect(sortKeysOf(await queryAll({ partition: pk, sortBeginsWith: 'B#' }))).toEqual(['B#1', 'B#2']);
    expect(sortKeysOf(await queryAll({ partition: pk, sortFrom: 'B#2' }))).toEqual(['B#2', 'C#1']);
    expect(sortKeysOf(await queryAll({ index: 'gsi1', partition: pk, sortFrom: 'B' }))).toEqual(['B#1', 'B#2', 'C#1']);
    expect(sortKeysOf(await queryAll({ partition: pk, limit: 2 }))).toEqual(['A#1', 'A#2']);
    expect(sortKeysOf(await queryAll({ partition: pk, descending: true, limit: 2 }))).toEqual(['C#1', 'B#2']);
  });

  it('page through partitions larger than one response', async () => {
    const pk = `Q#${newUuid()}`;
    const big = 'y'.repeat(100_000);
    for (let i = 0; i < 25; i++) {
      await db().send(new PutCommand({ TableName: tableName(), Item: { pk, sk: String(i).padStart(3, '0'), big } }));
    }
    let pages = 0;
    let items = 0;
    for await (const page of queryPages({ partition: pk })) {
      pages++;
      items += page.length;
    }
    expect(items).toBe(25);
    expect(pages).toBeGreaterThan(1);
  });
});
