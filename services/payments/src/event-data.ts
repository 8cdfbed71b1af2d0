import type { EventData, EventDataBuilders } from '@svc/events';
import { paymentResponse, paymentShape, refundResponse, refundShape } from './domain/shapes';
import { paymentFromItem } from './repository/payment-repository';

/** The `data` of payment and refund events: the payment, or the refund, as GET returns it. */
export const paymentEventData: EventDataBuilders = {
  payment: {
    schema: paymentResponse,
    build: async (_event, item) => paymentShape(paymentFromItem(item)),
  } satisfies EventData<typeof paymentResponse>,
  refund: {
    schema: refundResponse,
    build: async (event, item) => {
      const payment = paymentFromItem(item);
      const refund = payment.refunds.find((r) => r.uuid === event.object_uuid);
      if (!refund) throw new Error(`Refund ${event.object_uuid} is not on payment ${payment.uuid}`);
      return refundShape(refund, payment);
    },
  } satisfies EventData<typeof refundResponse>,
};
