import type { EventData, EventDataBuilders } from '@svc/events';
import {
  chargeAttemptResponse,
  chargeAttemptShape,
  invoiceResponse,
  invoiceShape,
  shapedSubscription,
  subscriptionResponse,
} from './domain/shapes';
import { findSubscription, invoiceFromItem, subscriptionFromItem } from './repository/subscription-repository';

/** The `data` of subscription, invoice and charge attempt events: each as GET returns it. */
export const subscriptionEventData: EventDataBuilders = {
  subscription: {
    schema: subscriptionResponse,
    build: async (_event, item) => shapedSubscription(subscriptionFromItem(item)),
  } satisfies EventData<typeof subscriptionResponse>,
  invoice: {
    schema: invoiceResponse,
    build: async (_event, item) => invoiceShape(invoiceFromItem(item)),
  } satisfies EventData<typeof invoiceResponse>,
  charge_attempt: {
    schema: chargeAttemptResponse,
    build: async (event, item) => {
      const invoice = invoiceFromItem(item);
      const attempt = invoice.charge_attempts.find((a) => a.uuid === event.object_uuid);
      const subscription = await findSubscription(invoice.subscription_uuid);
      if (!attempt || !subscription) throw new Error(`Charge attempt ${event.object_uuid} cannot be shaped`);
      return chargeAttemptShape(attempt, invoice, subscription);
    },
  } satisfies EventData<typeof chargeAttemptResponse>,
};
