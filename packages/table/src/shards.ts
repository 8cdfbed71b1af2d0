import { createHash } from 'node:crypto';
import { INDEXES, type IndexName, KEY } from './definition';
import { key } from './keys';
import { type PartitionQuery, queryPages } from './query';

/**
 * Write sharding of index partitions that grow with donations (docs/load-model.md).
 *
 * DynamoDB takes at most 1,000 write units a second into one partition key, on the table and on
 * every global secondary index, and a throttled index throttles the table's writes too
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations).
 * An index key shared by every item of an organisation (its supporters, its webhook responses)
 * is one such key: at a telethon's 5,000 donations a second it would take five times that. Such
 * a key gets a shard suffix, `<base>#<shard>`, the shard made from the item's id (so rewriting
 * an item keeps its key), and every read of it queries all shards and merges them in order.
 */

/** The shard (0 … shards − 1) of an id: the first byte of its SHA-1, uniform for any power of two ≤ 256. */
export function shardOf(id: string, shards: number): number {
  return (createHash('sha1').update(id).digest()[0] ?? 0) % shards;
}

/** A sharded partition key: `<base>#<shard of id>`. */
export function shardedPartition(base: string, id: string, shards: number): string {
  return key(base, shardOf(id, shards));
}

/**
 * Every partition a sharded key is spread over. `legacy` adds the unsharded `<base>` itself,
 * where items written before the key was sharded still are (until they expire or are written
 * again), so reads see them too.
 */
export function shardPartitions(base: string, shards: number, options: { legacy?: boolean } = {}): string[] {
  const sharded = Array.from({ length: shards }, (_, shard) => key(base, shard));
  return options.legacy ? [base, ...sharded] : sharded;
}

export interface MergedQuery extends Omit<PartitionQuery, 'partition'> {
  index: IndexName;
  /** The shards' partition keys (shardPartitions). */
  partitions: readonly string[];
}

interface Head {
  pages: AsyncGenerator<Record<string, unknown>[]>;
  buffer: Record<string, unknown>[];
  done: boolean;
}

/**
 * The items of several partitions of one index in one order: by the index's sort key, then (for
 * items with equal sort keys) by the table's own key, `pk` then `sk`. Those are unique, so the
 * order is total and the same on every read of the same items: paging by offset (`from`,
 * `size`) neither repeats nor skips an item. Each shard is read page by page, lazily, at most
 * `limit` items from each; at most `limit` are yielded.
 */
export async function* mergedItems(query: MergedQuery): AsyncGenerator<Record<string, unknown>> {
  const { partitions, index, ...rest } = query;
  const sortAttribute = INDEXES[index].sort;
  const sign = query.descending ? -1 : 1;
  const compare = (a: Record<string, unknown>, b: Record<string, unknown>) =>
    sign *
    (compareText(a[sortAttribute], b[sortAttribute]) ||
      compareText(a[KEY.partition], b[KEY.partition]) ||
      compareText(a[KEY.sort], b[KEY.sort]));
  // Shards hold about equal shares: a first page of twice a fair share each keeps most merges to
  // one call per shard without reading every shard's whole `limit`.
  // Without a limit (a whole list), each shard is read in DynamoDB's own pages (up to 1 MB).
  const fair = query.limit === undefined ? undefined : Math.ceil((query.limit * 2) / Math.max(1, partitions.length));
  const pageLimit = query.pageLimit ?? (fair === undefined ? undefined : Math.min(1000, Math.max(10, fair)));
  const heads: Head[] = partitions.map((partition) => ({
    pages: queryPages({ ...rest, index, partition, ...(pageLimit === undefined ? {} : { pageLimit }) }),
    buffer: [],
    done: false,
  }));
  const fill = async (head: Head) => {
    while (head.buffer.length === 0 && !head.done) {
      const next = await head.pages.next();
      if (next.done) head.done = true;
      else head.buffer.push(...sortedWithinPartition(next.value, compare));
    }
  };
  await Promise.all(heads.map(fill));
  let yielded = 0;
  while (query.limit === undefined || yielded < query.limit) {
    let best: Head | undefined;
    for (const head of heads) {
      const first = head.buffer[0];
      if (first === undefined) continue;
      const current = best?.buffer[0];
      if (!current || compare(first, current) < 0) best = head;
    }
    if (!best) return;
    const item = best.buffer.shift() as Record<string, unknown>;
    yielded++;
    yield item;
    if (best.buffer.length === 0) await fill(best);
  }
}

/** The merged items in pages of `pageSize` (for callers that filter page by page). */
export async function* mergedPages(query: MergedQuery, pageSize = 100): AsyncGenerator<Record<string, unknown>[]> {
  let page: Record<string, unknown>[] = [];
  for await (const item of mergedItems(query)) {
    page.push(item);
    if (page.length >= pageSize) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}

/** All merged items (at most `limit`). */
export async function queryMerged(query: MergedQuery): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const item of mergedItems(query)) items.push(item);
  return items;
}

/**
 * One partition's page in the merged order. DynamoDB returns a partition ordered by its sort key
 * alone; items with equal sort keys come in an order of its own, which the merge makes total.
 */
function sortedWithinPartition(
  items: Record<string, unknown>[],
  compare: (a: Record<string, unknown>, b: Record<string, unknown>) => number,
): Record<string, unknown>[] {
  return [...items].sort(compare);
}

function compareText(a: unknown, b: unknown): number {
  const x = String(a ?? '');
  const y = String(b ?? '');
  // DynamoDB orders string sort keys by their UTF-8 bytes; our keys are ASCII, where that is code-unit order.
  return x < y ? -1 : x > y ? 1 : 0;
}
