import { definedFields } from '@svc/core';
import type { PaymentRecord, RefundRecord } from '../repository/payment-repository';
import type { PaymentSourceRecord } from '../repository/payment-source-repository';

/** The response shapes: stored internals (instrument tokens, approval hashes) never leave. */
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

export function paymentShape(p: PaymentRecord) {
  return {
    uuid: p.uuid,
    organisation_uuid: p.organisation_uuid,
    account_uuid: p.account_uuid,
    created: p.created,
    status: p.status,
    ...definedFields({ status_reason: p.status_reason }),
    test_mode: p.test_mode,
    amount: { value: String(p.amount_minor), currency: p.currency },
    refunded_amount: { value: String(p.refunded_minor), currency: p.currency },
    payment_method: p.payment_method,
    profile: p.profile,
    provider: p.provider,
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
