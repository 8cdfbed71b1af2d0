import { BatchGetCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { db } from './client';
import { tableName } from './definition';
import type { ItemKey } from './keys';

type Item = Record<string, unknown>;
interface Pending {
  key: ItemKey;
  resolve: (item: Item | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * Strongly consistent point reads, coalesced: every `getItem` issued in the same turn of the
 * event loop goes out as one BatchGetItem (a lone one as GetItem). An authenticated request
 * reads its caller's grants and the resource it asks for in one round trip this way.
 */
let queue: Pending[] = [];
let scheduled = false;
const MAX_BATCH = 100;

export function getItem(itemKey: ItemKey): Promise<Item | undefined> {
  return new Promise((resolve, reject) => {
    queue.push({ key: itemKey, resolve, reject });
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
}

function flush(): void {
  scheduled = false;
  const pending = queue;
  queue = [];
  for (let i = 0; i < pending.length; i += MAX_BATCH) {
    void load(pending.slice(i, i + MAX_BATCH));
  }
}

const id = (k: ItemKey) => `${k.pk}\u0000${k.sk}`;

async function load(batch: Pending[]): Promise<void> {
  const unique = new Map<string, ItemKey>();
  for (const p of batch) unique.set(id(p.key), p.key);
  try {
    const found = unique.size === 1 ? await readOne([...unique.values()]) : await readMany([...unique.values()]);
    for (const p of batch) p.resolve(found.get(id(p.key)));
  } catch (error) {
    // One caller's bad key (too long, wrong type) must not fail the others in its batch:
    // read each key on its own so the error reaches only its owner.
    if (unique.size > 1 && (error as { name?: string }).name === 'ValidationException') {
      await Promise.all(
        batch.map((p) =>
          readOne([p.key]).then(
            (found) => p.resolve(found.get(id(p.key))),
            (single: unknown) => p.reject(single),
          ),
        ),
      );
      return;
    }
    for (const p of batch) p.reject(error);
  }
}

async function readOne([only]: ItemKey[]): Promise<Map<string, Item>> {
  const found = new Map<string, Item>();
  if (!only) return found;
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: only, ConsistentRead: true }));
  if (out.Item) found.set(id(only), out.Item);
  return found;
}

async function readMany(all: ItemKey[]): Promise<Map<string, Item>> {
  const found = new Map<string, Item>();
  let keys = all;
  for (let round = 0; keys.length > 0; round++) {
    if (round > 8) throw new Error('BatchGetItem left keys unprocessed after retries');
    // Unprocessed keys mean throttling: back off before asking again.
    if (round > 0) await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** round, 1000)));
    const out = await db().send(
      new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: keys, ConsistentRead: true } } }),
    );
    for (const item of out.Responses?.[tableName()] ?? []) {
      found.set(id({ pk: String(item.pk), sk: String(item.sk) }), item);
    }
    keys = (out.UnprocessedKeys?.[tableName()]?.Keys ?? []) as ItemKey[];
  }
  return found;
}
