import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  PutCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { logger } from '@svc/core';
import { db } from './client';
import { tableName } from './definition';
import { StaleVersionError } from './retry';

type SdkTransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
type WithoutTable<T> = Omit<NonNullable<T>, 'TableName'>;

/** One write of a transaction; the table name is filled in by `transactWrite`. */
export type TransactItem =
  | { Put: WithoutTable<SdkTransactItem['Put']> }
  | { Update: WithoutTable<SdkTransactItem['Update']> }
  | { Delete: WithoutTable<SdkTransactItem['Delete']> }
  | { ConditionCheck: WithoutTable<SdkTransactItem['ConditionCheck']> };

/**
 * A write in a transaction, with what to throw when its condition fails. Conditions are named
 * by the caller (a domain error), so store-level guards surface as 409s and the like, never as
 * SDK exceptions.
 */
export interface GuardedWrite {
  item: TransactItem;
  onConditionFailed?: () => Error;
}

/**
 * The one versioned write: `item` is guarded by the version its writer read, and a failed
 * condition means another writer got there first (StaleVersionError: retryOnConflict reads again
 * and decides anew).
 */
export function versioned(item: TransactItem): GuardedWrite {
  return { item, onConditionFailed: () => new StaleVersionError() };
}

/**
 * Writes up to 100 items atomically. The table name is filled in for every item. A single write
 * goes out as a plain conditional Put/Update/Delete: same guarantee, half the write capacity of
 * a transaction.
 */
export async function transactWrite(writes: ReadonlyArray<GuardedWrite>): Promise<void> {
  await commit(writes);
  if (listeners.length > 0) await notifyWritten(writes);
}

/**
 * Called with the items a transaction put, once it is committed: read models that must see a
 * write before its response is sent (the search projection) follow it here. A listener's failure
 * is logged and does not fail the write, which is done: the table's stream delivers it again.
 */
export type WriteListener = (items: ReadonlyArray<Record<string, unknown>>) => Promise<void>;

const listeners: WriteListener[] = [];

export function onItemsWritten(listener: WriteListener): void {
  if (!listeners.includes(listener)) listeners.push(listener);
}

async function notifyWritten(writes: ReadonlyArray<GuardedWrite>): Promise<void> {
  const items = writes.flatMap(({ item }) => ('Put' in item && item.Put.Item ? [item.Put.Item] : []));
  if (items.length === 0) return;
  await Promise.all(
    listeners.map((listener) =>
      listener(items).catch((error: unknown) =>
        logger.warn('A write listener failed; the stream will retry', { error }),
      ),
    ),
  );
}

async function commit(writes: ReadonlyArray<GuardedWrite>): Promise<void> {
  const name = tableName();
  const [only] = writes;
  if (writes.length === 1 && only && !('ConditionCheck' in only.item)) {
    await singleWrite(only, name);
    return;
  }
  const items = writes.map(({ item }) => withTable(item, name));
  try {
    await db().send(new TransactWriteCommand({ TransactItems: items }));
  } catch (error) {
    if (error instanceof TransactionCanceledException) {
      const reasons = error.CancellationReasons ?? [];
      reasons.forEach((reason, index) => {
        if (reason.Code === 'ConditionalCheckFailed') {
          const mapped = writes[index]?.onConditionFailed?.();
          if (mapped) throw mapped;
        }
      });
    }
    throw error;
  }
}

async function singleWrite({ item, onConditionFailed }: GuardedWrite, name: string): Promise<void> {
  try {
    if ('Put' in item) await db().send(new PutCommand({ ...item.Put, TableName: name }));
    else if ('Update' in item) await db().send(new UpdateCommand({ ...item.Update, TableName: name }));
    else if ('Delete' in item) await db().send(new DeleteCommand({ ...item.Delete, TableName: name }));
  } catch (error) {
    const mapped = error instanceof ConditionalCheckFailedException ? onConditionFailed?.() : undefined;
    throw mapped ?? error;
  }
}

function withTable(item: TransactItem, name: string): SdkTransactItem {
  if ('Put' in item) return { Put: { ...item.Put, TableName: name } };
  if ('Update' in item) return { Update: { ...item.Update, TableName: name } };
  if ('Delete' in item) return { Delete: { ...item.Delete, TableName: name } };
  return { ConditionCheck: { ...item.ConditionCheck, TableName: name } };
}

export function isConditionFailure(error: unknown): boolean {
  return error instanceof ConditionalCheckFailedException;
}
