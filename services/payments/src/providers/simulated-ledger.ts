import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { now } from '@svc/core';
import { db, key, TTL_ATTRIBUTE, tableName } from '@svc/table';

/**
 * The simulated provider's own record of what it was asked to do, as a real PSP keeps one: each
 * operation is done once per idempotency reference, and a repeat gets the first answer back
 * (Stripe replays a request made again with the same Idempotency-Key the same way). So a
 * re-run request, a redelivered billing message or a retried refund never charges twice, and
 * tests can count what the provider did.
 *
 * | pattern                              | index | key                                                     |
 * |--------------------------------------|-------|---------------------------------------------------------|
 * | operation by reference (once, replay) | table | pk = SIMULATED_PROVIDER#<operation>#<reference>, sk = OPERATION |
 */
export type LedgerOperation = 'authorise' | 'charge' | 'refund' | 'cancel';

/** Kept as long as a real PSP keeps idempotency keys, and then some. */
const RETENTION_SECONDS = 30 * 86_400;

export const ledgerKey = (operation: LedgerOperation, reference: string) => ({
  pk: key('SIMULATED_PROVIDER', operation, reference),
  sk: 'OPERATION',
});

/**
 * Does the operation once: the first call for a reference computes and records its answer; any
 * later call returns the recorded answer without computing it.
 */
export async function once<T extends object>(
  operation: LedgerOperation,
  reference: string,
  compute: () => Promise<T>,
): Promise<T> {
  const answer = await compute();
  const at = now();
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...ledgerKey(operation, reference),
          entity: 'simulated_provider_operation',
          operation,
          reference,
          answer,
          created: at,
          [TTL_ATTRIBUTE]: at + RETENTION_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return answer;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException) || !error.Item) throw error;
    return unmarshall(error.Item).answer as T;
  }
}
