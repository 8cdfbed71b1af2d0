import { type Assert, type Conforms, deferred, definedFields, now } from '@svc/core';
import { findPayment } from '@svc/payments';
import { localMidnight } from '@svc/schedule';
import * as z from 'zod';
import {
  type ChargeAttemptRecord,
  type InvoiceRecord,
  intendedOf,
  type SubscriptionRecord,
} from '../repository/records';
import { statusAt } from '../repository/state';
import { findPlan } from '../repository/subscription-repository';
import { shownNextDueDay } from './calendar';
import { GLOBAL_DEFAULT_PLAN } from './plans';

/**
 * The response shapes and the one schema of each (`/openapi.json` publishes the schemas; the type
 * checks below fail when a shape answers a field its schema does not declare, or misses one).
 * Calendar days become local-midnight Unix seconds; internals stay inside. The schemas are
 * `deferred`: only the API description builds them.
 */
const freeJson = () => z.record(z.string(), z.unknown());
const localMidnightSeconds = () =>
  z.number().int().describe("Unix seconds of local midnight in the subscription's timezone");

export const subscriptionResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string(),
    supporter_uuid: z.string().optional(),
    subscription_plan: z.object({ uuid: z.string(), name: z.string() }),
    payment_source_uuid: z.string(),
    payment_provider: z.string(),
    payment_method: z.string(),
    created: z.number().int(),
    currency: z.string(),
    amount: z.number().int().describe('Minor units: the gift per charge'),
    cover_fees: z
      .boolean()
      .describe(
        'The donor covers the fees: each charge is the total that leaves `amount` once the fees of the payment method’s profile are taken',
      ),
    timezone: z.string(),
    charged_by: z.literal('svc'),
    next_due_date: localMidnightSeconds().optional(),
    subscription_status: z.enum(['pending', 'active', 'suspended', 'cancelled', 'finished']),
    recurring_interval: z.string(),
    planned_effective_from: localMidnightSeconds().optional(),
    planned_since: z.number().int().optional(),
    planned_end: localMidnightSeconds().optional(),
    ended_at: z.number().int().optional(),
    cancellation: z
      .object({ reason: z.string(), comment: z.string().optional() })
      .optional()
      .describe('Why the supporter cancelled in the donor portal (a code of the organisation’s list)'),
    suspension_start: localMidnightSeconds().optional(),
    suspension_end: localMidnightSeconds().optional(),
    consecutive_failed_invoices: z.number().int(),
    test_mode: z.boolean(),
    custom_parameters: freeJson(),
    svc_parameters: freeJson(),
  }),
);

export const invoiceResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    subscription: z.object({ uuid: z.string() }),
    created: z.number().int(),
    status: z.enum(['open', 'paid', 'cancelled']),
    status_reason: z.string().optional(),
    amount: z.number().int().describe('Minor units: what its charge attempt charges (with cover_fees, the total)'),
    intended_amount: z.number().int().describe('Minor units: the gift (amount less fee_cover_amount)'),
    fee_cover_amount: z.number().int().describe('Minor units: what the donor adds to cover the fees; 0 without'),
    refunded_amount: z.number().int(),
    currency: z.string(),
    next_attempt_date: localMidnightSeconds().optional(),
    failed_payment_attempts: z.number().int(),
    is_manually_created: z.boolean(),
    charge_attempts: z.array(
      z.object({ uuid: z.string(), status: z.enum(['pending', 'succeeded', 'failed']), created: z.number().int() }),
    ),
    custom_parameters: freeJson(),
    svc_parameters: freeJson(),
  }),
);

export const chargeAttemptResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    created: z.number().int(),
    status: z.enum(['pending', 'succeeded', 'failed']),
    status_reason: z.string().optional(),
    payment_uuid: z.string(),
    invoice: invoiceResponse,
    subscription: subscriptionResponse,
  }),
);

type _Subscription = Assert<Conforms<ReturnType<typeof subscriptionShape>, z.output<typeof subscriptionResponse>>>;
type _Invoice = Assert<Conforms<Awaited<ReturnType<typeof invoiceShape>>, z.output<typeof invoiceResponse>>>;
type _ChargeAttempt = Assert<
  Conforms<Awaited<ReturnType<typeof chargeAttemptShape>>, z.output<typeof chargeAttemptResponse>>
>;

export interface PlanRef {
  uuid: string;
  name: string;
}

/** The names of the plans the subscriptions use (one coalesced read per plan). */
export async function planRefs(subscriptions: readonly SubscriptionRecord[]): Promise<Map<string, PlanRef>> {
  const uuids = [...new Set(subscriptions.map((s) => s.plan_uuid))];
  const plans = await Promise.all(
    uuids.map(async (uuid): Promise<PlanRef> => {
      if (uuid === GLOBAL_DEFAULT_PLAN.uuid) return GLOBAL_DEFAULT_PLAN;
      const plan = await findPlan(uuid);
      return { uuid, name: plan?.name ?? GLOBAL_DEFAULT_PLAN.name };
    }),
  );
  return new Map(plans.map((plan) => [plan.uuid, { uuid: plan.uuid, name: plan.name }]));
}

export function subscriptionShape(s: SubscriptionRecord, plan: PlanRef | undefined, at = now()) {
  const day = (value: string | undefined) => (value === undefined ? undefined : localMidnight(value, s.timezone));
  const status = statusAt(s, at);
  const live = status === 'active' || status === 'suspended';
  return {
    uuid: s.uuid,
    organisation_uuid: s.organisation_uuid,
    account_uuid: s.account_uuid,
    ...definedFields({ supporter_uuid: s.supporter_uuid }),
    subscription_plan: plan ?? { uuid: s.plan_uuid, name: '' },
    payment_source_uuid: s.payment_source_uuid,
    payment_provider: s.payment_provider,
    payment_method: s.payment_method,
    created: s.created,
    currency: s.currency,
    amount: s.amount,
    cover_fees: s.cover_fees === true,
    timezone: s.timezone,
    charged_by: 'svc' as const,
    ...definedFields({ next_due_date: live ? day(shownNextDueDay(s)) : undefined }),
    subscription_status: status,
    recurring_interval: s.recurring_interval,
    ...definedFields({ planned_effective_from: day(s.planned_effective_from) }),
    ...definedFields({ planned_since: s.planned_since }),
    ...definedFields({ planned_end: day(s.planned_end) }),
    ...definedFields({ ended_at: s.ended_at ?? (status === 'finished' ? day(s.planned_end) : undefined) }),
    ...(s.cancel_reason === undefined
      ? {}
      : { cancellation: { reason: s.cancel_reason, ...definedFields({ comment: s.cancel_comment }) } }),
    ...definedFields({ suspension_start: day(s.suspension_start) }),
    ...definedFields({ suspension_end: day(s.suspension_end) }),
    consecutive_failed_invoices: s.consecutive_failed_invoices,
    test_mode: s.test_mode,
    custom_parameters: s.custom_parameters,
    svc_parameters: s.svc_parameters,
  };
}

/** A subscription as its API GET shows it. */
export type SubscriptionShape = ReturnType<typeof subscriptionShape>;

/** Several subscriptions as GET shows them, with one read per plan they use. */
export async function shapedSubscriptions(subscriptions: readonly SubscriptionRecord[]): Promise<SubscriptionShape[]> {
  const plans = await planRefs(subscriptions);
  return subscriptions.map((subscription) => subscriptionShape(subscription, plans.get(subscription.plan_uuid)));
}

export async function shapedSubscription(subscription: SubscriptionRecord): Promise<SubscriptionShape> {
  const plans = await planRefs([subscription]);
  return subscriptionShape(subscription, plans.get(subscription.plan_uuid));
}

/** What was refunded of the invoice: the refunds of the payment that paid it. */
async function refundedOf(invoice: InvoiceRecord): Promise<number> {
  const paid = invoice.charge_attempts.find((attempt) => attempt.status === 'succeeded');
  if (!paid) return 0;
  return (await findPayment(paid.payment_uuid))?.refunded_minor ?? 0;
}

export async function invoiceShape(invoice: InvoiceRecord) {
  return {
    uuid: invoice.uuid,
    subscription: { uuid: invoice.subscription_uuid },
    created: invoice.created,
    status: invoice.status,
    ...definedFields({ status_reason: invoice.status_reason }),
    amount: invoice.amount,
    intended_amount: intendedOf(invoice),
    fee_cover_amount: invoice.amount - intendedOf(invoice),
    refunded_amount: await refundedOf(invoice),
    currency: invoice.currency,
    ...definedFields({
      next_attempt_date:
        invoice.status === 'open' && invoice.next_attempt_day !== undefined
          ? localMidnight(invoice.next_attempt_day, invoice.timezone)
          : undefined,
    }),
    failed_payment_attempts: invoice.failed_payment_attempts,
    is_manually_created: invoice.is_manually_created,
    charge_attempts: invoice.charge_attempts.map((attempt) => ({
      uuid: attempt.uuid,
      status: attempt.status,
      created: attempt.created,
    })),
    custom_parameters: invoice.custom_parameters,
    svc_parameters: invoice.svc_parameters,
  };
}

export async function chargeAttemptShape(
  attempt: ChargeAttemptRecord,
  invoice: InvoiceRecord,
  subscription: SubscriptionRecord,
) {
  return {
    uuid: attempt.uuid,
    created: attempt.created,
    status: attempt.status,
    ...definedFields({ status_reason: attempt.status_reason }),
    payment_uuid: attempt.payment_uuid,
    invoice: await invoiceShape(invoice),
    subscription: await shapedSubscription(subscription),
  };
}
