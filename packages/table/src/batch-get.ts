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
  try {
    const unique = new Map<string, ItemKey>();
    for (const p of batch) unique.set(id(p.key), p.key);
    const found = new Map<string, Item>();
    if (unique.size === 1) {
      const [only] = unique.values();
      const out = await db().send(new GetCommand({ TableName: tableName(), Key: only, ConsistentRead: true }));
      if (out.Item && only) found.set(id(only), out.Item);
    } else {
      let keys = [...unique.values()];
      for (let round = 0; keys.length > 0; round++) {
        if (round > 0) await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** round, 1000)));
        const out = await db().send(
          new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: keys, ConsistentRead: true } } }),
        );
        for (const item of out.Responses?.[tableName()] ?? []) {
          found.set(id({ pk: String(item.pk), sk: String(item.sk) }), item);
        }
        keys = (out.UnprocessedKeys?.[tableName()]?.Keys ?? []) as ItemKey[];
        if (round > 8 && keys.length > 0) throw new Error('BatchGetItem left keys unprocessed after retries');
      }
    }
    for (const p of batch) p.resolve(found.get(id(p.key)));
  } catch (error) {
    for (const p of batch) p.reject(error);
  }
}
