import { ValidationError } from '@svc/core';
import type { PaymentSourceRecord } from '@svc/payments';
import { parseInterval, parseLocalDate } from '@svc/schedule';
import type { TransactItem } from '@svc/table';
import * as z from 'zod';
import { subscriptionPut } from '../repository/items';
import type { SubscriptionRecord } from '../repository/records';
import { resolvePlan } from './plans';
import { buildSubscription } from './subscriptions';

/**
 * The `subscription` object of a payment request (interface 2.7): a recurring donation charged
 * from the payment source the payment saves. The payment pays the first period, so billing
 * continues one interval later (or from `planned_effective_from`).
 */
export const paymentSubscriptionInput = z
  .object({
    recurring_interval: z.string().trim().min(1, 'This value should not be blank').max(200),
    timezone: z.string().max(100).optional(),
    planned_effective_from: z.string().max(10).optional(),
    planned_end: z.string().max(10).optional(),
    plan_uuid: z
      .guid()
      .transform((value) => value.toLowerCase())
      .optional(),
  })
  .strict();

export interface PaymentForSubscription {
  organisation_uuid: string;
  account_uuid: string;
  amount_minor: number;
  currency: string;
  test_mode: boolean;
  supporter_uuid?: string;
  custom_parameters: Record<string, unknown>;
}

function parseRequest(raw: unknown) {
  const parsed = paymentSubscriptionInput.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const property = ['subscription', ...(issue?.path ?? [])].join('.');
    throw ValidationError.field(property, 'error.validation.not_valid', issue?.message ?? 'Not valid');
  }
  return parsed.data;
}

/** Checks the request before the payment is authorised, so a bad one charges nobody. */
export async function checkPaymentSubscription(
  raw: unknown,
  organisationUuid: string,
  accountUuid: string,
): Promise<void> {
  const request = parseRequest(raw);
  const interval = parseInterval(request.recurring_interval);
  if (!interval.ok) {
    throw ValidationError.field(
      'subscription.recurring_interval',
      'error.validation.not_valid',
      `${interval.message} (at character ${interval.position + 1})`,
    );
  }
  for (const field of ['planned_effective_from', 'planned_end'] as const) {
    const value = request[field];
    if (value !== undefined && parseLocalDate(value) === undefined) {
      throw ValidationError.field(
        `subscription.${field}`,
        'error.validation.not_valid',
        'A calendar date as YYYY-MM-DD',
      );
    }
  }
  await resolvePlan(organisationUuid, accountUuid, request.plan_uuid, 'subscription.plan_uuid');
}

/** The subscription of a succeeded payment and the write that creates it (in the payment's transaction). */
export async function subscriptionForPayment(
  raw: unknown,
  payment: PaymentForSubscription,
  source: PaymentSourceRecord,
): Promise<{ subscription: SubscriptionRecord; write: TransactItem }> {
  const request = parseRequest(raw);
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
      ...(payment.supporter_uuid === undefined ? {} : { supporter_uuid: payment.supporter_uuid }),
      currency: payment.currency,
      amount: payment.amount_minor,
      recurring_interval: request.recurring_interval,
      test_mode: payment.test_mode,
      status: 'active',
      ...(request.timezone === undefined ? {} : { timezone: request.timezone }),
      ...(request.planned_effective_from === undefined
        ? {}
        : { planned_effective_from: request.planned_effective_from }),
      ...(request.planned_end === undefined ? {} : { planned_end: request.planned_end }),
      custom_parameters: custom,
    },
    organisationUuid: payment.organisation_uuid,
    source,
    planUuid: plan.uuid,
    paidPeriod: true,
  });
  return { subscription, write: subscriptionPut(subscription) };
}
