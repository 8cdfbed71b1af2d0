import type { EventDataBuilders } from '@svc/events';
import { chargeAttemptShape, invoiceShape, shapedSubscription } from './domain/shapes';
import { findSubscription, invoiceFromItem, subscriptionFromItem } from './repository/subscription-repository';

/** The `data` of subscription, invoice and charge attempt events: each as GET returns it. */
export const subscriptionEventData: EventDataBuilders = {
  subscription: async (_event, item) => shapedSubscription(subscriptionFromItem(item)),
  invoice: async (_event, item) => invoiceShape(invoiceFromItem(item)),
  charge_attempt: async (event, item) => {
    const invoice = invoiceFromItem(item);
    const attempt = invoice.charge_attempts.find((a) => a.uuid === event.object_uuid);
    const subscription = await findSubscription(invoice.subscription_uuid);
    if (!attempt || !subscription) throw new Error(`Charge attempt ${event.object_uuid} cannot be shaped`);
    return chargeAttemptShape(attempt, invoice, subscription);
  },
};
