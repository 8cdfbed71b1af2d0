import { deferred } from '@svc/core';
import { storedEventSchema } from '@svc/events';
import * as z from 'zod';

/**
 * The stored records of the subscriptions domain. Dates that are calendar days in the
 * subscription's time zone (due days, suspension and plan dates) are kept as `YYYY-MM-DD` and
 * turned into local-midnight Unix seconds only at the API edge, so a change of time zone or a
 * daylight-saving change never shifts a stored day.
 *
 * The schemas are `deferred` (built at their first parse, not at cold start): an operation reads
 * few of them.
 */
const localDate = () => z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const parameters = () => z.record(z.string(), z.string());

export const dunningSchema = deferred(() =>
  z.object({
    retry_delays_days: z.array(z.number().int()),
    max_consecutive_failed_invoices: z.number().int(),
    on_max_failed: z.enum(['cancel', 'suspend']),
  }),
);
export type Dunning = z.infer<typeof dunningSchema>;

export const notificationSchema = deferred(() =>
  z.object({
    supporter_receipts: z.boolean(),
    failure_recipient_emails: z.array(z.string()),
  }),
);
export type Notification = z.infer<typeof notificationSchema>;

export const planRecordSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string().optional(),
    name: z.string(),
    is_default: z.boolean(),
    dunning_configuration: dunningSchema,
    notification_configuration: notificationSchema,
    created: z.number().int(),
    updated: z.number().int(),
    version: z.number().int(),
  }),
);
export type PlanRecord = z.infer<typeof planRecordSchema>;

export const SUBSCRIPTION_STATUSES = ['pending', 'active', 'cancelled', 'finished'] as const;

export const subscriptionRecordSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string(),
    supporter_uuid: z.string().optional(),
    plan_uuid: z.string(),
    payment_source_uuid: z.string(),
    payment_provider: z.string(),
    payment_method: z.string(),
    created: z.number().int(),
    updated: z.number().int(),
    currency: z.string(),
    /** The gift per charge (with `cover_fees`, each charge's total covers its fees on top). */
    amount: z.number().int(),
    /**
     * The donor covers the fees of every charge (contract section 13): each charge is the total
     * that leaves `amount` once the fees of the source's profile are taken. Absent: not covered.
     */
    cover_fees: z.boolean().optional(),
    timezone: z.string(),
    recurring_interval: z.string(),
    /** The stored status; `suspended` and `finished` are also derived from the clock (see state.ts). */
    status: z.enum(SUBSCRIPTION_STATUSES),
    /** The day billing counts from: the first due day of keyword intervals. Set on activation. */
    anchor: localDate().optional(),
    /** The next due day; absent while pending, after the end and once cancelled. */
    next_due_day: localDate().optional(),
    /** The latest period that was invoiced (or paid by the payment that created the subscription). */
    last_period: localDate().optional(),
    /** The due day whose charge reminder was sent, or passed over (state.ts reminderAt). */
    reminded_for: localDate().optional(),
    planned_effective_from: localDate().optional(),
    planned_end: localDate().optional(),
    planned_since: z.number().int().optional(),
    ended_at: z.number().int().optional(),
    /** Why the supporter cancelled in the portal: a code of the organisation's list, and a comment. */
    cancel_reason: z.string().optional(),
    cancel_comment: z.string().optional(),
    /** A new source the donor set up in the portal, used once the provider makes it active. */
    pending_source_uuid: z.string().optional(),
    suspension_start: localDate().optional(),
    /** The day billing resumes; absent for an indefinite suspension. */
    suspension_end: localDate().optional(),
    consecutive_failed_invoices: z.number().int(),
    test_mode: z.boolean(),
    custom_parameters: parameters(),
    svc_parameters: z.record(z.string(), z.unknown()),
    version: z.number().int(),
    event_sequence: z.number().int(),
    events: z.array(storedEventSchema),
  }),
);
export type SubscriptionRecord = z.infer<typeof subscriptionRecordSchema>;

export const chargeAttemptRecordSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    /** 1, 2, … within the invoice. */
    number: z.number().int(),
    status: z.enum(['pending', 'succeeded', 'failed']),
    status_reason: z.string().optional(),
    created: z.number().int(),
    payment_uuid: z.string(),
    payment_source_uuid: z.string(),
    /** Created by the billing worker (true) or through the API (false). */
    automatic: z.boolean(),
    /** While pending: until when the worker that created it owns the charge (crash recovery). */
    lease_until: z.number().int().optional(),
    /** The Idempotency-Key'd request that created it through the API: its re-run finds it here. */
    request_ref: z.string().optional(),
    event_sequence: z.number().int(),
  }),
);
export type ChargeAttemptRecord = z.infer<typeof chargeAttemptRecordSchema>;

export const invoiceRecordSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    subscription_uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string(),
    created: z.number().int(),
    updated: z.number().int(),
    status: z.enum(['open', 'paid', 'cancelled']),
    status_reason: z.string().optional(),
    /** What its latest charge attempt charges (or will): with a cover of the fees, the total. */
    amount: z.number().int(),
    /** The gift the invoice is for; absent on invoices from before fee cover: `amount`. */
    intended_amount: z.number().int().optional(),
    currency: z.string(),
    /** The billing period (due day) of an automatic invoice. */
    period: localDate().optional(),
    timezone: z.string(),
    next_attempt_day: localDate().optional(),
    failed_payment_attempts: z.number().int(),
    is_manually_created: z.boolean(),
    charge_attempts: z.array(chargeAttemptRecordSchema),
    custom_parameters: parameters(),
    svc_parameters: z.record(z.string(), z.unknown()),
    version: z.number().int(),
    event_sequence: z.number().int(),
    events: z.array(storedEventSchema),
  }),
);
export type InvoiceRecord = z.infer<typeof invoiceRecordSchema>;

/** The gift an invoice is for (an invoice from before fee cover: its amount). */
export const intendedOf = (invoice: Pick<InvoiceRecord, 'amount' | 'intended_amount'>): number =>
  invoice.intended_amount ?? invoice.amount;
