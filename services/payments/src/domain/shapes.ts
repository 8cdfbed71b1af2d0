import { type Assert, type Conforms, deferred, definedFields } from '@svc/core';
import * as z from 'zod';
import { PAYMENT_METHODS } from '../providers/provider';
import type { PaymentRecord, RefundRecord } from '../repository/payment-repository';
import type { PaymentSourceRecord } from '../repository/payment-source-repository';
import { moneyOutput } from './request';

/**
 * The response shapes and the one schema of each (`/openapi.json` publishes the schemas; the
 * type checks below fail when a shape answers a field its schema does not declare, or misses
 * one). Stored internals (instrument tokens, approval hashes) never leave. The schemas are
 * `deferred`: only the API description builds them.
 */
const freeJson = () => z.record(z.string(), z.unknown());
const redirect = () => z.object({ action_type: z.literal('redirect'), url: z.string() });

export const refundResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    payment_uuid: z.string(),
    created: z.number().int(),
    amount: moneyOutput,
    status: z
      .enum(['pending', 'succeeded', 'failed'])
      .describe('pending until the provider has answered (a SEPA refund for days); failed frees its amount again'),
    failure_reason: z.string().optional(),
  }),
);

export const paymentResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string(),
    created: z.number().int(),
    status: z.enum(['pending', 'succeeded', 'failed', 'cancelled']),
    status_reason: z.string().optional(),
    succeeded_at: z
      .number()
      .int()
      .optional()
      .describe('Unix seconds (service time) the payment first became succeeded; kept after refunds and disputes'),
    test_mode: z.boolean(),
    amount: moneyOutput.describe('What was charged: with cover_fees, the total that covers the fees'),
    intended_amount: moneyOutput.describe('The gift the donor meant: amount less fee_cover_amount'),
    fee_cover_amount: moneyOutput.describe('What the donor added to cover the fees (cover_fees); "0" otherwise'),
    refunded_amount: moneyOutput,
    payment_method: z.enum(PAYMENT_METHODS),
    profile: z.string(),
    provider: z.string(),
    providers_tried: z
      .array(z.object({ provider: z.string(), reason: z.string() }))
      .optional()
      .describe(
        'Providers of the profile’s route passed over before `provider`, with why: circuit_open, connection_refused, rate_limited, limit_reached, unusable',
      ),
    locale: z.string().optional(),
    return_url: z.string().optional(),
    action: redirect().optional().describe('Where to send the donor while the payment is pending'),
    payment_information: freeJson().optional(),
    supporter_uuid: z.string().optional(),
    supporter: freeJson().optional().describe('The supporter fields sent with the payment'),
    created_payment_source_uuid: z.string().optional(),
    charged_payment_source_uuid: z.string().optional(),
    subscription_uuid: z.string().optional(),
    invoice_uuid: z.string().optional(),
    charge_attempt_uuid: z.string().optional(),
    dispute: z
      .object({
        status: z.string(),
        reason: z.string(),
        amount: moneyOutput,
        funds: z
          .enum(['withdrawn', 'reinstated'])
          .optional()
          .describe('Whether the provider took the disputed amount from the account, or gave it back'),
      })
      .optional(),
    refunds: z.array(refundResponse),
    custom_parameters: freeJson(),
    svc_parameters: freeJson(),
  }),
);

export const paymentSourceResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string(),
    created: z.number().int(),
    status: z
      .enum(['pending', 'active', 'failed', 'inactive'])
      .describe('inactive: the provider no longer charges it (a SEPA mandate revoked)'),
    status_reason: z.string().optional(),
    test_mode: z.boolean(),
    payment_method: z.enum(PAYMENT_METHODS),
    profile: z.string(),
    provider: z.string(),
    action: redirect().optional(),
    payment_information: freeJson(),
    supporter_uuid: z.string().optional(),
    custom_parameters: freeJson(),
  }),
);

type _Refund = Assert<Conforms<ReturnType<typeof refundShape>, z.output<typeof refundResponse>>>;
type _Payment = Assert<Conforms<ReturnType<typeof paymentShape>, z.output<typeof paymentResponse>>>;
type _Source = Assert<Conforms<ReturnType<typeof paymentSourceShape>, z.output<typeof paymentSourceResponse>>>;

export function refundShape(refund: RefundRecord, payment: Pick<PaymentRecord, 'uuid' | 'currency'>) {
  return {
    uuid: refund.uuid,
    payment_uuid: payment.uuid,
    created: refund.created,
    amount: { value: String(refund.amount_minor), currency: payment.currency },
    status: refund.status,
    ...definedFields({ failure_reason: refund.failure_reason }),
  };
}

/** The gift of a payment (A): what the donor meant to give, the whole amount unless they covered the fees. */
export function intendedOf(p: Pick<PaymentRecord, 'amount_minor' | 'intended_minor'>): number {
  return p.intended_minor ?? p.amount_minor;
}

export function paymentShape(p: PaymentRecord) {
  return {
    uuid: p.uuid,
    organisation_uuid: p.organisation_uuid,
    account_uuid: p.account_uuid,
    created: p.created,
    status: p.status,
    ...definedFields({ status_reason: p.status_reason }),
    ...definedFields({ succeeded_at: p.succeeded_at }),
    test_mode: p.test_mode,
    amount: { value: String(p.amount_minor), currency: p.currency },
    // Every payment shows all three, so a ledger sums the same columns for each: a payment without
    // a cover gave its whole amount (intended = amount, cover 0).
    intended_amount: { value: String(intendedOf(p)), currency: p.currency },
    fee_cover_amount: { value: String(p.amount_minor - intendedOf(p)), currency: p.currency },
    refunded_amount: { value: String(p.refunded_minor), currency: p.currency },
    payment_method: p.payment_method,
    profile: p.profile,
    provider: p.provider,
    ...(p.providers_tried?.length
      ? { providers_tried: p.providers_tried.map(({ provider, reason }) => ({ provider, reason })) }
      : {}),
    ...definedFields({ locale: p.locale }),
    ...definedFields({ return_url: p.return_url }),
    ...definedFields({ action: p.status === 'pending' ? p.action : undefined }),
    ...definedFields({ payment_information: p.payment_information }),
    ...definedFields({ supporter_uuid: p.supporter_uuid }),
    ...definedFields({ supporter: p.supporter }),
    ...definedFields({ created_payment_source_uuid: p.created_payment_source_uuid }),
    ...definedFields({ charged_payment_source_uuid: p.charged_payment_source_uuid }),
    ...definedFields({ subscription_uuid: p.subscription_uuid }),
    ...definedFields({ invoice_uuid: p.invoice_uuid }),
    ...definedFields({ charge_attempt_uuid: p.charge_attempt_uuid }),
    ...definedFields({
      dispute: p.dispute && {
        status: p.dispute.status,
        reason: p.dispute.reason,
        amount: { value: String(p.dispute.amount_minor), currency: p.currency },
        ...definedFields({ funds: p.dispute.funds }),
      },
    }),
    refunds: p.refunds.map((r) => refundShape(r, p)),
    custom_parameters: p.custom_parameters,
    svc_parameters: p.svc_parameters,
  };
}

export function paymentSourceShape(s: PaymentSourceRecord) {
  return {
    uuid: s.uuid,
    organisation_uuid: s.organisation_uuid,
    account_uuid: s.account_uuid,
    created: s.created,
    status: s.status,
    ...definedFields({ status_reason: s.status_reason }),
    test_mode: s.test_mode,
    payment_method: s.payment_method,
    profile: s.profile,
    provider: s.provider,
    ...definedFields({ action: s.status === 'pending' ? s.action : undefined }),
    payment_information: s.payment_information,
    ...definedFields({ supporter_uuid: s.supporter_uuid }),
    custom_parameters: s.custom_parameters,
  };
}
