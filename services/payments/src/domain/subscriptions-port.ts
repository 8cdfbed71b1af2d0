import { parseOrThrow } from '@svc/core';
import type { TransactItem } from '@svc/table';
import * as z from 'zod';
import type { PaymentSourceRecord } from '../repository/payment-source-repository';
import type { ChargeOutcome } from './recurring';

/**
 * What payments needs of the subscriptions domain, which builds on payments (it charges saved
 * sources): the dependency points one way, subscriptions → payments. A payment that starts a
 * subscription, and a recurring charge settled later, reach subscriptions through this port,
 * which each composition root that runs payments code fills in once (`useSubscriptions`, from
 * `@svc/api`'s wiring: the Lambda entries, the local runtime, the tests).
 */
export interface SubscriptionsPort {
  /** Every rule of a payment's `subscription`, before the payment is authorised: a 4xx charges nobody. */
  checkPaymentSubscription(
    request: PaymentSubscriptionInput,
    organisationUuid: string,
    accountUuid: string,
  ): Promise<void>;
  /** The subscription a succeeded payment starts and its write (none when its dates have passed). */
  subscriptionForPayment(
    request: PaymentSubscriptionInput,
    payment: PaymentForSubscription,
    source: PaymentSourceRecord,
  ): Promise<{ subscription: { uuid: string }; write: TransactItem } | undefined>;
  /** A recurring charge the provider decided later: its invoice paid or dunned with the payment. */
  settleChargeAttempt(
    subscriptionUuid: string,
    invoiceUuid: string,
    attemptUuid: string,
    outcome: ChargeOutcome,
  ): Promise<unknown>;
  /** A recurring debit that came back after it paid its invoice: the invoice open again, dunning on. */
  reopenReturnedDebit(subscriptionUuid: string, invoiceUuid: string, attemptUuid: string): Promise<unknown>;
  /** A recurring charge recorded failed that the provider paid after all: attempt, payment and invoice paid. */
  recordLateRecurringSuccess(
    subscriptionUuid: string,
    invoiceUuid: string,
    attemptUuid: string,
    providerReference: string | undefined,
  ): Promise<'paid' | 'paid_twice' | 'none'>;
}

/**
 * The `subscription` object of a payment request: a recurring donation charged from the
 * payment source the payment saves. The payment pays the first period, so billing continues
 * one interval later (or from `planned_effective_from`).
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

export type PaymentSubscriptionInput = z.infer<typeof paymentSubscriptionInput>;

/** The request as the client sent it (kept on a pending payment until it is approved). */
export const parsePaymentSubscription = (raw: unknown): PaymentSubscriptionInput =>
  parseOrThrow(paymentSubscriptionInput, raw, 'subscription');

/** What a subscription takes from the payment that starts it. */
export interface PaymentForSubscription {
  organisation_uuid: string;
  account_uuid: string;
  /** The intended amount (the gift), whether or not the donor covered the fees. */
  amount_minor: number;
  /** The donor covered the fees on this payment: the subscription covers them on every charge. */
  cover_fees: boolean;
  currency: string;
  test_mode: boolean;
  supporter_uuid?: string;
  custom_parameters: Record<string, unknown>;
}

let port: SubscriptionsPort | undefined;

/** Fills the port in; each composition root does once (`wireDomains` in @svc/api). */
export function useSubscriptions(subscriptions: SubscriptionsPort): void {
  port = subscriptions;
}

export function subscriptions(): SubscriptionsPort {
  if (!port) {
    throw new Error(
      'No subscriptions domain is wired into this process: its entry must call wireDomains() from @svc/api',
    );
  }
  return port;
}
