import { definedFields, now } from '@svc/core';
import {
  feesOfSource,
  type PaymentForSubscription,
  type PaymentSourceRecord,
  type PaymentSubscriptionInput,
} from '@svc/payments';
import { localDateOf, resolveTimezone } from '@svc/schedule';
import type { TransactItem } from '@svc/table';
import type { SubscriptionRecord } from '../repository/records';
import { subscriptionPut } from '../repository/subscription-repository';
import { checkPlannedDates, dateOrThrow, intervalOrThrow } from './calendar';
import { resolvePlan } from './plans';
import { buildSubscription } from './subscriptions';

/**
 * Checks every rule of the request before the payment is authorised, so a bad one charges
 * nobody: the interval, the dates (today in the subscription's zone) and the plan.
 */
export async function checkPaymentSubscription(
  request: PaymentSubscriptionInput,
  organisationUuid: string,
  accountUuid: string,
): Promise<void> {
  intervalOrThrow(request.recurring_interval, 'subscription.recurring_interval');
  const from =
    request.planned_effective_from === undefined
      ? undefined
      : dateOrThrow(request.planned_effective_from, 'subscription.planned_effective_from');
  const end =
    request.planned_end === undefined ? undefined : dateOrThrow(request.planned_end, 'subscription.planned_end');
  checkPlannedDates(resolveTimezone(request.timezone), from, end, now(), 'subscription.');
  await resolvePlan(organisationUuid, accountUuid, request.plan_uuid, 'subscription.plan_uuid');
}

/**
 * A request checked at initialisation may be out of date when a pending payment is approved
 * (the next day, say): a start in the past starts today, and an end already reached means no
 * subscription. The donor has paid by then, so this never throws on dates.
 */
function stillPlannable(request: PaymentSubscriptionInput, at: number) {
  const day = localDateOf(at, resolveTimezone(request.timezone));
  const from = request.planned_effective_from;
  const start = from !== undefined && from < day ? day : from;
  if (request.planned_end !== undefined && request.planned_end <= (start ?? day)) return undefined;
  return { ...request, ...definedFields({ planned_effective_from: start }) };
}

/** The subscription of a succeeded payment and the write that creates it (in the payment's transaction). */
export async function subscriptionForPayment(
  requested: PaymentSubscriptionInput,
  payment: PaymentForSubscription,
  source: PaymentSourceRecord,
): Promise<{ subscription: SubscriptionRecord; write: TransactItem } | undefined> {
  const request = stillPlannable(requested, now());
  if (!request) return undefined;
  const plan = await resolvePlan(payment.organisation_uuid, payment.account_uuid, request.plan_uuid).catch(() =>
    resolvePlan(payment.organisation_uuid, payment.account_uuid, undefined),
  );
  const custom = Object.fromEntries(
    Object.entries(payment.custom_parameters).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
  const subscription = buildSubscription({
    input: {
      account_uuid: payment.account_uuid,
      payment_source_uuid: source.uuid,
      ...definedFields({ supporter_uuid: payment.supporter_uuid }),
      currency: payment.currency,
      // The gift; a donor who covered the fees on the payment covers them on every charge.
      amount: payment.amount_minor,
      ...(payment.cover_fees ? { cover_fees: true } : {}),
      recurring_interval: request.recurring_interval,
      test_mode: payment.test_mode,
      status: 'active',
      ...definedFields({ timezone: request.timezone }),
      ...definedFields({ planned_effective_from: request.planned_effective_from }),
      ...definedFields({ planned_end: request.planned_end }),
      custom_parameters: custom,
    },
    organisationUuid: payment.organisation_uuid,
    source,
    planUuid: plan.uuid,
    paidPeriod: true,
    fees: payment.cover_fees ? await feesOfSource(source) : undefined,
  });
  return { subscription, write: subscriptionPut(subscription) };
}
