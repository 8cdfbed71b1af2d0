import { deferred } from '@svc/core';
import { storedEventSchema } from '@svc/events';
import { getItem, key, type TransactItem } from '@svc/table';
import * as z from 'zod';
import { PAYMENT_METHODS } from '../providers/provider';
import { recheckKeys } from './payment-repository';

/**
 * Payment sources: saved instruments that can be charged again. The instrument is the
 * provider's token; no card number or CVV is ever stored.
 *
 * | pattern                | index | key                                                 |
 * |------------------------|-------|-----------------------------------------------------|
 * | source by uuid         | table | pk = PAYMENT_SOURCE#<uuid>, sk = PAYMENT_SOURCE     |
 * | pending sources by when to ask the provider again | due | duepk = PAYMENT_DUE#<shard 0-15>, duesk = <unix 12 digits>#<uuid> |
 */
export const paymentSourceRecordSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string(),
    created: z.number(),
    /** `inactive`: the provider no longer charges it (a SEPA mandate revoked by the donor's bank). */
    status: z.enum(['pending', 'active', 'failed', 'inactive']),
    status_reason: z.string().optional(),
    test_mode: z.boolean(),
    payment_method: z.enum(PAYMENT_METHODS),
    profile: z.string(),
    provider: z.string(),
    payment_information: z.record(z.string(), z.unknown()),
    supporter_uuid: z.string().optional(),
    custom_parameters: z.record(z.string(), z.unknown()),
    action: z.object({ action_type: z.literal('redirect'), url: z.string() }).optional(),
    instrument_token: z.string().optional(),
    approval_token_hash: z.string().optional(),
    /** The provider's own id of the verification payment or setup (a Stripe PaymentIntent). */
    provider_reference: z.string().optional(),
    /** The provider account the instrument lives on (a Stripe Connect account), if not the platform's. */
    provider_account: z.string().optional(),
    /** When the resolver asks the provider about this pending source next (domain/recheck.ts). */
    next_check: z.number().optional(),
    /** The events of the write that stored this version (see @svc/events), when it had any. */
    events: z.array(storedEventSchema).optional(),
    version: z.number().int(),
  }),
);
export type PaymentSourceRecord = z.infer<typeof paymentSourceRecordSchema>;

export const paymentSourceKey = (uuid: string) => ({ pk: key('PAYMENT_SOURCE', uuid), sk: 'PAYMENT_SOURCE' });

export async function findPaymentSource(uuid: string): Promise<PaymentSourceRecord | undefined> {
  const item = await getItem(paymentSourceKey(uuid));
  return item ? paymentSourceRecordSchema.parse(item) : undefined;
}

/** The stored item; a pending source with a next check is in the due index (as payments are). */
function sourceItem(source: PaymentSourceRecord): Record<string, unknown> {
  return {
    ...paymentSourceKey(source.uuid),
    entity: 'payment_source',
    ...(source.status === 'pending' && source.next_check !== undefined
      ? recheckKeys(source.uuid, source.next_check)
      : {}),
    ...source,
  };
}

export function newPaymentSourceWrite(source: PaymentSourceRecord): TransactItem {
  return {
    Put: {
      Item: sourceItem(source),
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

export function paymentSourceUpdateWrite(source: PaymentSourceRecord, readVersion: number): TransactItem {
  return {
    Put: {
      Item: sourceItem(source),
      ConditionExpression: 'version = :read',
      ExpressionAttributeValues: { ':read': readVersion },
    },
  };
}
