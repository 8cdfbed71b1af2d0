import { BatchGetCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { currentFunction } from '@svc/core';
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
 *
 * Coalesced per function (`currentFunction`): in AWS a process is one function, but the local
 * runtime and the tests run every function in one process, and one function's call must never
 * carry another's keys (it would be sent, and checked against IAM, as the first caller's).
 */
const queues = new Map<string, Pending[]>();
const MAX_BATCH = 100;

export function getItem(itemKey: ItemKey): Promise<Item | undefined> {
  const scope = currentFunction() ?? '';
  return new Promise((resolve, reject) => {
    const queue = queues.get(scope);
    if (queue) {
      queue.push({ key: itemKey, resolve, reject });
      return;
    }
    queues.set(scope, [{ key: itemKey, resolve, reject }]);
    setImmediate(() => flush(scope));
  });
}

function flush(scope: string): void {
  const pending = queues.get(scope) ?? [];
  queues.delete(scope);
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

/**
 * Items every request of a peak reads, read through a per-container memo at most
 * SVC_HOT_READ_SECONDS old (unset or 0: always read; the local runtime and tests). At a
 * telethon's 5,000 donations a second each payment reads the calling client (its grants) and the
 * account it pays into: one key each, every request strongly consistent, would be 5,000 read
 * units a second on a key DynamoDB caps at 3,000 (docs/load-model.md). Remembered for a second,
 * each container reads each at most once a second: a few hundred reads a second at most.
 *
 * Only for reads that decide nothing a write is guarded by (who is calling and with which grants,
 * the account's profiles): what they allow may lag a change by that long. Read-modify-write code
 * never uses it (a stale read would fail its guard forever).
 */
const recent = new Map<string, { read: Promise<Item | undefined>; until: number }>();
const MAX_RECENT = 10_000;

export function hotReadSeconds(): number {
  const seconds = Number(process.env.SVC_HOT_READ_SECONDS);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 10) : 0;
}

export function getRecentItem(itemKey: ItemKey): Promise<Item | undefined> {
  const seconds = hotReadSeconds();
  if (seconds === 0) return getItem(itemKey);
  const key = id(itemKey);
  // Operational: real time, not the service clock tests move.
  const at = Date.now();
  const known = recent.get(key);
  if (known && known.until > at) return known.read;
  if (recent.size >= MAX_RECENT) recent.clear();
  const read = getItem(itemKey);
  recent.set(key, { read, until: at + seconds * 1000 });
  // A failed read is not remembered.
  read.catch(() => recent.delete(key));
  return read;
}

/** For tests: what the container remembers is forgotten. */
export function forgetRecentItems(): void {
  recent.clear();
}
