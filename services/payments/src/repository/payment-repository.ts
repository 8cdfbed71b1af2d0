import { deferred, now } from '@svc/core';
import { storedEventSchema } from '@svc/events';
import { byUuid, defineEntity, documentStorage, key, shardOf, type TransactItem, timeKey } from '@svc/table';
import * as z from 'zod';
import { PAYMENT_METHODS } from '../providers/provider';

/**
 * Payments, with their refunds inside the payment item (a refund never outlives its payment,
 * and one conditional write on the payment keeps the refunded total within the amount). Its key
 * and indexes are described once, by `PAYMENT` below (docs/access-patterns.md is made from it).
 *
 * Searches and lists of an organisation's payments read the search engine (search/payment-search.ts),
 * not the table: the payment item carries no index keys for them.
 */

export const refundRecordSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    amount_minor: z.number().int(),
    /**
     * `pending` from the moment it is asked for until the provider answers (its amount counts as
     * refunded meanwhile); a real provider may fail a refund later (its amount is then free again).
     */
    status: z.enum(['pending', 'succeeded', 'failed']),
    /** The provider's own id of the refund (one made at the provider without us, e.g. in Stripe's dashboard). */
    provider_reference: z.string().optional(),
    failure_reason: z.string().optional(),
    created: z.number(),
  }),
);

/** A dispute the donor's bank opened on the payment, as the provider reports it. */
export const disputeRecordSchema = deferred(() =>
  z.object({
    provider_reference: z.string(),
    status: z.string(),
    reason: z.string(),
    amount_minor: z.number().int(),
    /** Whether the disputed amount was taken from the account (`withdrawn`) or given back (`reinstated`). */
    funds: z.enum(['withdrawn', 'reinstated']).optional(),
  }),
);
export type DisputeRecord = z.infer<typeof disputeRecordSchema>;
export type RefundRecord = z.infer<typeof refundRecordSchema>;

const action = () => z.object({ action_type: z.literal('redirect'), url: z.string() });

export const paymentRecordSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string(),
    created: z.number(),
    /** Service time of the last change. */
    updated: z.number(),
    status: z.enum(['pending', 'succeeded', 'failed', 'cancelled']),
    status_reason: z.string().optional(),
    /** Service time (Unix seconds) the payment first became `succeeded`; set once, by `withSucceededAt`. */
    succeeded_at: z.number().int().optional(),
    test_mode: z.boolean(),
    /** What was charged: with the donor's cover of the fees, the total T. */
    amount_minor: z.number().int(),
    /**
     * What the donor meant to give (A), set when the donor covered the fees (`cover_fees`): the
     * cover is `amount_minor` − this. Absent: nothing was covered, A = T.
     */
    intended_minor: z.number().int().optional(),
    /** The fees the cover was computed from (the charged candidate's, else its profile's). */
    covered_fees: z.object({ percent: z.string(), fixed: z.string() }).optional(),
    refunded_minor: z.number().int(),
    currency: z.string(),
    payment_method: z.enum(PAYMENT_METHODS),
    profile: z.string(),
    provider: z.string(),
    locale: z.string().optional(),
    return_url: z.string().optional(),
    action: action().optional(),
    payment_information: z.record(z.string(), z.unknown()).optional(),
    supporter_uuid: z.string().optional(),
    supporter: z.record(z.string(), z.unknown()).optional(),
    create_payment_source: z.boolean().optional(),
    created_payment_source_uuid: z.string().optional(),
    charged_payment_source_uuid: z.string().optional(),
    subscription_uuid: z.string().optional(),
    invoice_uuid: z.string().optional(),
    charge_attempt_uuid: z.string().optional(),
    /** The `subscription` object of the request, kept until the pending payment is decided. */
    subscription_request: z.unknown().optional(),
    refunds: z.array(refundRecordSchema),
    custom_parameters: z.record(z.string(), z.unknown()),
    svc_parameters: z.record(z.string(), z.unknown()),
    /** Counts every change; writes are guarded by the version they read. */
    version: z.number().int(),
    /** Counts the payment's events (1, 2, …): the `sequence` receivers order them by. */
    event_sequence: z.number().int(),
    /** The instrument to save as a payment source once a pending payment is approved. */
    instrument_token: z.string().optional(),
    /** The provider's own id of the payment (a Stripe PaymentIntent). */
    provider_reference: z.string().optional(),
    dispute: disputeRecordSchema.optional(),
    /** Refunds the provider did not answer for: asked again by the resolver until it does. */
    refunds_to_confirm: z.array(z.string()).optional(),
    /** The provider account the payment was made on (a Stripe Connect account, an Adyen merchant account), if not the platform's. */
    provider_account: z.string().optional(),
    /** The route's candidates passed over before the payment's provider, with why (domain/routing.ts). */
    providers_tried: z
      .array(z.object({ provider: z.string(), reason: z.string(), account: z.string().optional() }))
      .optional(),
    /** The provider's customer the payment was made for (a Stripe Customer), where its intent is looked for. */
    provider_customer: z.string().optional(),
    /** When the resolver asks the provider about this pending payment next (domain/recheck.ts). */
    next_check: z.number().optional(),
    /** sha256 of the token that authorises the simulated approval page. */
    approval_token_hash: z.string().optional(),
    /** The events of the write that stored this version (see @svc/events). */
    events: z.array(storedEventSchema),
  }),
);
export type PaymentRecord = z.infer<typeof paymentRecordSchema>;

/**
 * What the resolver asks about is spread over this many due partitions. Every pending Stripe
 * payment (3-D Secure, TWINT, SEPA) and every refund waiting on its provider is in the index
 * until it settles, one write in and one out: at a telethon's 5,000 payments a second that is
 * 10,000 writes a second, so 64 keeps each partition near 160, far under DynamoDB's 1,000 per
 * key (docs/load-model.md), and a burst in which only refunds wait still spreads thin enough for
 * the write-heat check (no key over 1/16). The resolver reads 64 small partitions a pass. (Items
 * written when there were 4 or 16 sit in partitions 0–15, which are among the 64 read.)
 */
export const UNKNOWN_OUTCOME_SHARDS = 64;
/** A payment whose provider did not answer is asked about again this long after its last change. */
export const ASK_AGAIN_SECONDS = 60;

export const unknownOutcomePartition = (shard: number) => key('PAYMENT_DUE', shard);

/** The due index's keys of something the resolver asks about at `at` (a payment or a source). */
export function recheckKeys(uuid: string, at: number) {
  return {
    duepk: unknownOutcomePartition(shardOf(uuid, UNKNOWN_OUTCOME_SHARDS)),
    duesk: `${timeKey(at)}#${uuid}`,
  };
}

/**
 * Sparse: only a payment pending with `provider_unavailable`, with refunds to confirm, or with a
 * next check (it waits on the provider) is in the due index, so the resolver reads just those; a
 * later version without any leaves it.
 */
function unknownOutcomeKeys(payment: PaymentRecord) {
  const unknownPayment = payment.status === 'pending' && payment.status_reason === 'provider_unavailable';
  const soon = unknownPayment || payment.refunds_to_confirm?.length ? payment.updated + ASK_AGAIN_SECONDS : undefined;
  // An unknown outcome is asked about a minute after each answer that did not settle it; a check
  // planned before it became unknown (its first) is not one it waits for.
  const planned = payment.status === 'pending' && !unknownPayment ? payment.next_check : undefined;
  const at = soon !== undefined && planned !== undefined ? Math.min(soon, planned) : (soon ?? planned);
  return at === undefined ? undefined : recheckKeys(payment.uuid, at);
}

/**
 * A payment: keys, the version its writes are guarded by, the events of this write (read off the
 * stream) and the rest of the record as one JSON document (every write replaces it whole).
 */
export const PAYMENT = defineEntity<PaymentRecord, string>({
  name: 'payment',
  summary: 'A payment, its refunds inside it.',
  prefix: 'PAYMENT',
  ...byUuid(),
  sort: 'PAYMENT',
  byKey: 'payment by uuid (get, refund, cancel)',
  indexes: [
    {
      index: 'due',
      pattern:
        'payments (or their refunds) whose provider’s answer is unknown or who wait on the provider, by when to ask again',
      shown: `duepk = PAYMENT_DUE#<shard 0-${UNKNOWN_OUTCOME_SHARDS - 1}>, duesk = <unix 12 digits>#<uuid>`,
      keys: (payment) => {
        const keys = unknownOutcomeKeys(payment);
        return keys ? { partition: keys.duepk, sort: keys.duesk } : undefined;
      },
    },
  ],
  version: 'version',
  storage: documentStorage(),
  parse: (record) => paymentRecordSchema.parse(record),
});

export const paymentKey = (uuid: string) => PAYMENT.key(uuid);

export function findPayment(uuid: string): Promise<PaymentRecord | undefined> {
  return PAYMENT.find(uuid);
}

export const paymentItem = (payment: PaymentRecord) => PAYMENT.item(payment);

/** Reads a stored payment item (also a stream image) back into the record. */
export const paymentFromItem = (item: Record<string, unknown>) => PAYMENT.fromItem(item);

/**
 * The payment with `succeeded_at`: the service time it first became `succeeded` (when the money
 * was taken, what receipts count by), set once and kept through every later change (refunds,
 * disputes). Every write of a payment passes through here, whichever path settled it (the
 * request, the donor's approval, a provider's event, the resolver, a recurring charge).
 */
export function withSucceededAt(payment: PaymentRecord, at: number = now()): PaymentRecord {
  if (payment.status !== 'succeeded' || payment.succeeded_at !== undefined) return payment;
  return { ...payment, succeeded_at: at };
}

export function newPaymentWrite(payment: PaymentRecord): TransactItem {
  return PAYMENT.create(withSucceededAt(payment)).item;
}

/**
 * Replaces a payment guarded by the version it was read at: any concurrent change (another
 * refund, a cancel, an approval) makes this write fail instead of overwriting it.
 */
export function paymentUpdateWrite(payment: PaymentRecord, readVersion: number): TransactItem {
  return PAYMENT.replace(withSucceededAt(payment), readVersion).item;
}
