import { type EventName, newEvent, type StoredEvent } from '@svc/events';
import type { PaymentRecord, RefundRecord } from '../repository/payment-repository';

const PAYMENT_EVENTS: Partial<Record<PaymentRecord['status'], EventName>> = {
  succeeded: 'svc.payments.payment.succeeded',
  failed: 'svc.payments.payment.failed',
  cancelled: 'svc.payments.payment.cancelled',
};

/**
 * The events a payment write carries (see @svc/events): the payment's new status, if that
 * status has an event. The pipeline builds their `data` from the written item with
 * `paymentShape` (and `refundShape` for refunds).
 */
export function paymentStatusEvents(payment: PaymentRecord): StoredEvent[] {
  const name = PAYMENT_EVENTS[payment.status];
  return name ? [eventOfPayment(payment, name)] : [];
}

function eventOfPayment(payment: PaymentRecord, name: EventName): StoredEvent {
  return newEvent({
    name,
    object: 'payment',
    object_uuid: payment.uuid,
    organisation_uuid: payment.organisation_uuid,
    account_uuid: payment.account_uuid,
    sequence: payment.event_sequence,
  });
}

/**
 * A payment event that is not a status (a dispute opened or closed), numbered in the payment's
 * sequence.
 */
export function paymentEvent(
  payment: PaymentRecord,
  name:
    | 'svc.payments.payment.disputed'
    | 'svc.payments.payment.dispute_closed'
    | 'svc.payments.payment.dispute_funds_withdrawn'
    | 'svc.payments.payment.dispute_funds_reinstated',
): StoredEvent {
  payment.event_sequence += 1;
  return eventOfPayment(payment, name);
}

export function refundEvents(payment: PaymentRecord, refund: RefundRecord): StoredEvent[] {
  return [
    newEvent({
      name: 'svc.payments.refund.succeeded',
      object: 'refund',
      object_uuid: refund.uuid,
      organisation_uuid: payment.organisation_uuid,
      account_uuid: payment.account_uuid,
      sequence: 1,
    }),
  ];
}
