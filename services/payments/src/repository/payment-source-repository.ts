import { deferred } from '@svc/core';
import { storedEventSchema } from '@svc/events';
import { byUuid, defineEntity, type TransactItem } from '@svc/table';
import * as z from 'zod';
import { PAYMENT_METHODS } from '../providers/provider';
import { recheckKeys, UNKNOWN_OUTCOME_SHARDS } from './payment-repository';

/**
 * Payment sources: saved instruments that can be charged again. The instrument is the
 * provider's token; no card number or CVV is ever stored. Described by `PAYMENT_SOURCE` below.
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

export const PAYMENT_SOURCE = defineEntity<PaymentSourceRecord, string>({
  name: 'payment_source',
  summary: 'A saved instrument (the provider’s token) that can be charged again.',
  prefix: 'PAYMENT_SOURCE',
  ...byUuid(),
  sort: 'PAYMENT_SOURCE',
  byKey: 'source by uuid',
  indexes: [
    {
      index: 'due',
      pattern: 'pending sources by when to ask the provider again (as payments are)',
      shown: `duepk = PAYMENT_DUE#<shard 0-${UNKNOWN_OUTCOME_SHARDS - 1}>, duesk = <unix 12 digits>#<uuid>`,
      keys: (source) => {
        if (source.status !== 'pending' || source.next_check === undefined) return undefined;
        const { duepk, duesk } = recheckKeys(source.uuid, source.next_check);
        return { partition: duepk, sort: duesk };
      },
    },
  ],
  version: 'version',
  parse: (item) => paymentSourceRecordSchema.parse(item),
});

export const paymentSourceKey = (uuid: string) => PAYMENT_SOURCE.key(uuid);

export function findPaymentSource(uuid: string): Promise<PaymentSourceRecord | undefined> {
  return PAYMENT_SOURCE.find(uuid);
}

export function newPaymentSourceWrite(source: PaymentSourceRecord): TransactItem {
  return PAYMENT_SOURCE.create(source).item;
}

export function paymentSourceUpdateWrite(source: PaymentSourceRecord, readVersion: number): TransactItem {
  return PAYMENT_SOURCE.replace(source, readVersion).item;
}
