import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db } from './client';
import { tableName } from './definition';

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

/** Writes up to 100 items atomically. The table name is filled in for every item. */
export async function transactWrite(writes: ReadonlyArray<GuardedWrite>): Promise<void> {
  const name = tableName();
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

function withTable(item: TransactItem, name: string): SdkTransactItem {
  if ('Put' in item) return { Put: { ...item.Put, TableName: name } };
  if ('Update' in item) return { Update: { ...item.Update, TableName: name } };
  if ('Delete' in item) return { Delete: { ...item.Delete, TableName: name } };
  return { ConditionCheck: { ...item.ConditionCheck, TableName: name } };
}

export function isConditionFailure(error: unknown): boolean {
  return error instanceof ConditionalCheckFailedException;
}
