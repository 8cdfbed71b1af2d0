import { newUuid } from '@svc/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { putItems } from './batch-write';
import { mergedItems, queryMerged, shardedPartition, shardOf, shardPartitions } from './shards';

/**
 * Sharded index partitions read back as one ordered list (shards.ts): the merge must give every
 * item once, in (index sort key, pk, sk) order, and offset paging (`from`, `size`: what the list
 * routes do) must neither repeat nor skip, also when many items share a time (equal sort-key
 * prefixes) or a whole sort key (on different shards).
 */
interface Row {
  shard: number;
  time: number;
}

async function storeRows(base: string, shards: number, rows: readonly Row[]) {
  const items = rows.map((row) => {
    const uuid = newUuid();
    const partition = row.shard < 0 ? base : `${base}#${row.shard % shards}`;
    return {
      pk: `ROW#${uuid}`,
      sk: 'ROW',
      gsi1pk: partition,
      // As our entities: a time, then the item's uuid (unique within a partition).
      gsi1sk: `${String(row.time).padStart(12, '0')}#${uuid}`,
    };
  });
  await putItems(items);
  return items;
}

/** By the index's sort key, then pk: ascending, or that reversed. */
function expectedOrder(items: ReadonlyArray<Record<string, unknown>>, descending: boolean): unknown[] {
  const ascending = [...items]
    .sort((a, b) => {
      const x = `${a.gsi1sk}\u0000${a.pk}`;
      const y = `${b.gsi1sk}\u0000${b.pk}`;
      return x < y ? -1 : x > y ? 1 : 0;
    })
    .map((item) => item.pk);
  return descending ? ascending.reverse() : ascending;
}

async function pageByOffset(base: string, shards: number, size: number, descending: boolean) {
  const seen: unknown[] = [];
  for (let from = 0; ; from += size) {
    const read = await queryMerged({
      index: 'gsi1',
      partitions: shardPartitions(base, shards, { legacy: true }),
      descending,
      limit: from + size,
    });
    const page = read.slice(from, from + size);
    seen.push(...page.map((item) => item.pk));
    if (page.length < size) return seen;
  }
}

describe('sharded index partitions', () => {
  it('spread ids evenly over the shards, the same id always to the same shard', () => {
    const counts = new Array(32).fill(0);
    for (let i = 0; i < 6400; i++) counts[shardOf(newUuid(), 32)]++;
    // 200 expected per shard; a shard with twice that (or none) means a broken spread.
    expect(Math.max(...counts)).toBeLessThan(300);
    expect(Math.min(...counts)).toBeGreaterThan(110);
    const uuid = newUuid();
    expect(shardedPartition('ORG#x#SUPPORTERS', uuid, 32)).toBe(`ORG#x#SUPPORTERS#${shardOf(uuid, 32)}`);
  });

  it('page by offset through items that all share one time, on every shard and the legacy key, in both orders', async () => {
    const base = `MERGE#${newUuid()}`;
    const rows = Array.from({ length: 57 }, (_, i) => ({ shard: (i % 5) - 1, time: 1_800_000_000 }));
    const items = await storeRows(base, 4, rows);
    for (const descending of [false, true]) {
      for (const size of [1, 7, 20, 100]) {
        const paged = await pageByOffset(base, 4, size, descending);
        expect(paged, `size ${size}${descending ? ' descending' : ''}`).toEqual(expectedOrder(items, descending));
      }
    }
  });

  it('merge any spread of times over the shards into one total order, paged by any size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ shard: fc.integer({ min: -1, max: 7 }), time: fc.integer({ min: 0, max: 3 }) }), {
          maxLength: 40,
        }),
        fc.integer({ min: 1, max: 15 }),
        fc.boolean(),
        async (rows, size, descending) => {
          const base = `MERGE#${newUuid()}`;
          const items = await storeRows(base, 8, rows);
          expect(await pageByOffset(base, 8, size, descending)).toEqual(expectedOrder(items, descending));
        },
      ),
      { numRuns: 25 },
    );
  });

  it('read at most `limit` items per shard, lazily, a page of a fair share at a time', async () => {
    const base = `MERGE#${newUuid()}`;
    // Everything on one shard: the merge must go on reading it page after page.
    const items = await storeRows(
      base,
      4,
      Array.from({ length: 30 }, (_, i) => ({ shard: 2, time: i })),
    );
    const read: unknown[] = [];
    for await (const item of mergedItems({
      index: 'gsi1',
      partitions: shardPartitions(base, 4),
      limit: 25,
      pageLimit: 3,
    })) {
      read.push(item.pk);
    }
    expect(read).toEqual(expectedOrder(items, false).slice(0, 25));
  });
});
