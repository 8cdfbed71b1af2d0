import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db } from './client';
import { tableName } from './definition';

type Item = Record<string, unknown>;
/** BatchWriteItem takes at most 25 requests. */
const MAX_BATCH = 25;
const MAX_ROUNDS = 8;

/**
 * Unconditional puts, up to 25 to a BatchWriteItem call, the calls in parallel. Items DynamoDB
 * leaves unprocessed (throttling) are sent again after a growing pause; if some are still left
 * after that, it throws, and the caller treats the write as failed (a put is safe to repeat).
 * For items no condition guards: a write that must check a version goes through transactWrite.
 */
export async function putItems(items: readonly Item[]): Promise<void> {
  const chunks: Item[][] = [];
  for (let i = 0; i < items.length; i += MAX_BATCH) chunks.push(items.slice(i, i + MAX_BATCH));
  await Promise.all(chunks.map(putChunk));
}

async function putChunk(chunk: readonly Item[]): Promise<void> {
  const table = tableName();
  let requests = chunk.map((Item) => ({ PutRequest: { Item } }));
  for (let round = 0; requests.length > 0; round++) {
    if (round >= MAX_ROUNDS) throw new Error(`BatchWriteItem left ${requests.length} items unprocessed after retries`);
    if (round > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** round, 1000)));
    const out = await db().send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
    requests = (out.UnprocessedItems?.[table] ?? []) as typeof requests;
  }
}
