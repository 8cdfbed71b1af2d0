import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { logger, now } from '@svc/core';
import { db, defineEntity, INDEXES, shardOf, TTL_ATTRIBUTE, tableName, timeKey } from '@svc/table';
import * as z from 'zod';
import { findPayment, UNKNOWN_OUTCOME_SHARDS, unknownOutcomePartition } from '../repository/payment-repository';
import { findPaymentSource } from '../repository/payment-source-repository';

/**
 * Provider callbacks that arrive before the payment (or source) they name is written: a provider
 * may report a payment before its answer to our request reaches us (the answer was slow or lost,
 * the donor came back first). Adyen sends an AUTHORISATION for every payment and retries a
 * notification that is not accepted, but not for ever and not for every card notification, so
 * answering 503 and hoping is no plan (issue 45, point 6). Such a callback is kept here, in its
 * payment's partition-to-be, accepted, and applied when the payment is written pending (the
 * write's own request applies it: early-callbacks.ts), or by the resolver from the due index.
 * Both sides write before they look at the other's (the callback after its keep looks for the
 * payment; the payment after its write looks for callbacks), so one of them always applies it;
 * applying twice changes nothing (each provider's callbacks are applied once per state).
 *
 * A callback whose payment is never written (the request died after the provider charged) is
 * alarmed by the resolver once EARLY_UNRECORDED_AFTER_SECONDS have passed: money at the provider
 * that no payment of ours records (ProviderAnomalies, `unrecorded_payment`).
 */
export const EARLY_UNRECORDED_AFTER_SECONDS = 3600;
/** Kept this long (TTL), past any retry of the request that writes the payment. */
const KEEP_SECONDS = 30 * 86_400;

/** Logged (and alarmed) when a provider reported money on a payment we never wrote. */
export const UNRECORDED_PAYMENT = 'A provider reported a payment of ours that was never recorded';

const earlySchema = z.object({
  reference: z.string(),
  provider: z.string(),
  /** The callbacks as the provider's code kept them (its own serialisation), oldest first. */
  payloads: z.array(z.string()),
  received: z.number(),
  /** Not yet applied to a written payment (and in the due index meanwhile). */
  pending: z.boolean(),
  expires_at: z.number(),
});
export type EarlyCallbackRecord = z.infer<typeof earlySchema>;

const dueKeys = (reference: string, received: number) => ({
  partition: unknownOutcomePartition(shardOf(reference, UNKNOWN_OUTCOME_SHARDS)),
  sort: `${timeKey(received + EARLY_UNRECORDED_AFTER_SECONDS)}#${reference}`,
});

export const EARLY_CALLBACK = defineEntity<EarlyCallbackRecord, string>({
  name: 'early_callback',
  summary:
    'Provider callbacks (an Adyen AUTHORISATION) that came before the payment they name was written, applied once it is (TTL 30 days).',
  prefix: 'EARLY_CALLBACK',
  idShown: '<payment or source uuid>',
  sort: 'EARLY_CALLBACK',
  id: (record) => record.reference,
  idParts: (reference) => [reference],
  byKey: 'callbacks waiting for their payment (looked at when a pending payment is written)',
  indexes: [
    {
      index: 'due',
      pattern: 'callbacks whose payment is not written yet, by when to alarm',
      shown: `duepk = PAYMENT_DUE#<shard 0-${UNKNOWN_OUTCOME_SHARDS - 1}>, duesk = <unix 12 digits>#<reference>`,
      keys: (record) => (record.pending ? dueKeys(record.reference, record.received) : undefined),
    },
  ],
  storage: {
    toAttributes: ({ provider, payloads, received, pending, expires_at }) => ({
      provider,
      payloads,
      received,
      pending,
      [TTL_ATTRIBUTE]: expires_at,
    }),
    fromAttributes: (item) => ({
      reference: String(item.pk).split('#')[1],
      provider: item.provider,
      payloads: item.payloads,
      received: item.received,
      pending: item.pending,
      expires_at: item[TTL_ATTRIBUTE],
    }),
  },
  parse: (value) => earlySchema.parse(value),
});

const { partition: DUE_PK, sort: DUE_SK } = INDEXES.due;

/**
 * Keeps a callback for a payment not written yet (one ADD to its list). The caller then looks for
 * the payment again, and applies the callback itself if it was written meanwhile.
 */
export async function keepEarlyCallback(provider: string, reference: string, payload: string): Promise<void> {
  const at = now();
  const due = dueKeys(reference, at);
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: EARLY_CALLBACK.key(reference),
      UpdateExpression:
        'SET #provider = :provider, #payloads = list_append(if_not_exists(#payloads, :none), :payload), ' +
        '#received = if_not_exists(#received, :at), #pending = :true, #ttl = :ttl, #entity = :entity, ' +
        '#duepk = if_not_exists(#duepk, :duepk), #duesk = if_not_exists(#duesk, :duesk)',
      ExpressionAttributeNames: {
        '#provider': 'provider',
        '#payloads': 'payloads',
        '#received': 'received',
        '#pending': 'pending',
        '#ttl': TTL_ATTRIBUTE,
        '#entity': 'entity',
        '#duepk': DUE_PK,
        '#duesk': DUE_SK,
      },
      ExpressionAttributeValues: {
        ':provider': provider,
        ':payload': [payload],
        ':none': [],
        ':at': at,
        ':true': true,
        ':ttl': at + KEEP_SECONDS,
        ':entity': EARLY_CALLBACK.description.name,
        ':duepk': due.partition,
        ':duesk': due.sort,
      },
    }),
  );
  logger.info('A provider callback came before its payment was written: kept', { provider, reference });
}

/** Whether a payment or source of this uuid is written. */
export async function isWritten(reference: string): Promise<boolean> {
  return (await findPayment(reference)) !== undefined || (await findPaymentSource(reference)) !== undefined;
}

export async function readEarly(reference: string): Promise<EarlyCallbackRecord | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: EARLY_CALLBACK.key(reference), ConsistentRead: true }),
  );
  return out.Item ? EARLY_CALLBACK.fromItem(out.Item) : undefined;
}

/** Out of the due index, if no callback was added since `count` were read; answers whether it was. */
export async function settleKept(reference: string, count: number): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: EARLY_CALLBACK.key(reference),
        UpdateExpression: 'SET #pending = :false REMOVE #duepk, #duesk',
        ConditionExpression: 'size(#payloads) = :count',
        ExpressionAttributeNames: {
          '#pending': 'pending',
          '#payloads': 'payloads',
          '#duepk': DUE_PK,
          '#duesk': DUE_SK,
        },
        ExpressionAttributeValues: { ':false': false, ':count': count },
      }),
    );
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}
