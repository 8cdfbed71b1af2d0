import { type EventDataBuilders, eventData } from '@svc/events';
import { paymentResponse, paymentShape, refundResponse, refundShape } from './domain/shapes';
import { paymentFromItem } from './repository/payment-repository';

/** The `data` of payment and refund events: the payment, or the refund, as GET returns it. */
export const paymentEventData: EventDataBuilders = {
  payment: eventData(paymentResponse, async (_event, item) => paymentShape(paymentFromItem(item))),
  refund: eventData(refundResponse, async (event, item) => {
    const payment = paymentFromItem(item);
    const refund = payment.refunds.find((r) => r.uuid === event.object_uuid);
    if (!refund) throw new Error(`Refund ${event.object_uuid} is not on payment ${payment.uuid}`);
    return refundShape(refund, payment);
  }),
};
