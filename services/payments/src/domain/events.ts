import { type EventName, outboxWrite } from '@svc/events';
import type { TransactItem } from '@svc/table';
import type { PaymentRecord, RefundRecord } from '../repository/payment-repository';
import { paymentShape, refundShape } from './shapes';

const PAYMENT_EVENTS: Partial<Record<PaymentRecord['status'], EventName>> = {
  succeeded: 'svc.payments.payment.succeeded',
  failed: 'svc.payments.payment.failed',
  cancelled: 'svc.payments.payment.cancelled',
};

/** The outbox item announcing a payment's new status, if that status has an event. */
export function paymentStatusEvent(payment: PaymentRecord): TransactItem | undefined {
  const name = PAYMENT_EVENTS[payment.status];
  if (!name) return undefined;
  return outboxWrite({
    name,
    object: 'payment',
    object_uuid: payment.uuid,
    organisation_uuid: payment.organisation_uuid,
    account_uuid: payment.account_uuid,
    sequence: payment.event_sequence,
    data: paymentShape(payment),
  }).item;
}

export function refundEvent(payment: PaymentRecord, refund: RefundRecord): TransactItem {
  return outboxWrite({
    name: 'svc.payments.refund.succeeded',
    object: 'refund',
    object_uuid: refund.uuid,
    organisation_uuid: payment.organisation_uuid,
    account_uuid: payment.account_uuid,
    sequence: 1,
    data: refundShape(refund, payment),
  }).item;
}
