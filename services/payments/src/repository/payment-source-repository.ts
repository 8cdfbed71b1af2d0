import { deferred } from '@svc/core';
import { getItem, key, type TransactItem } from '@svc/table';
import * as z from 'zod';

/**
 * Payment sources: saved instruments that can be charged again. The instrument is the
 * provider's token; no card number or CVV is ever stored.
 *
 * | pattern                | index | key                                                 |
 * |------------------------|-------|-----------------------------------------------------|
 * | source by uuid         | table | pk = PAYMENT_SOURCE#<uuid>, sk = PAYMENT_SOURCE     |
 */
export const paymentSourceRecordSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string(),
    created: z.number(),
    status: z.enum(['pending', 'active', 'failed']),
    status_reason: z.string().optional(),
    test_mode: z.boolean(),
    payment_method: z.enum(['card', 'twint', 'sepa_dd']),
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
    version: z.number().int(),
  }),
);
export type PaymentSourceRecord = z.infer<typeof paymentSourceRecordSchema>;

export const paymentSourceKey = (uuid: string) => ({ pk: key('PAYMENT_SOURCE', uuid), sk: 'PAYMENT_SOURCE' });

export async function findPaymentSource(uuid: string): Promise<PaymentSourceRecord | undefined> {
  const item = await getItem(paymentSourceKey(uuid));
  return item ? paymentSourceRecordSchema.parse(item) : undefined;
}

export function newPaymentSourceWrite(source: PaymentSourceRecord): TransactItem {
  return {
    Put: {
      Item: { ...paymentSourceKey(source.uuid), entity: 'payment_source', ...source },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

export function paymentSourceUpdateWrite(source: PaymentSourceRecord, readVersion: number): TransactItem {
  return {
    Put: {
      Item: { ...paymentSourceKey(source.uuid), entity: 'payment_source', ...source },
      ConditionExpression: 'version = :read',
      ExpressionAttributeValues: { ':read': readVersion },
    },
  };
}
