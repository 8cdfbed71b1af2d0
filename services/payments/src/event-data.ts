import type { EventData, EventDataBuilders } from '@svc/events';
import {
  paymentResponse,
  paymentShape,
  paymentSourceResponse,
  paymentSourceShape,
  refundResponse,
  refundShape,
} from './domain/shapes';
import { paymentFromItem } from './repository/payment-repository';
import { paymentSourceRecordSchema } from './repository/payment-source-repository';

/** The `data` of payment, refund and payment source events: the object as GET returns it. */
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
  payment_source: {
    schema: paymentSourceResponse,
    build: async (_event, item) => paymentSourceShape(paymentSourceRecordSchema.parse(item)),
  } satisfies EventData<typeof paymentSourceResponse>,
};
