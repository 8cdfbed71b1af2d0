import { type EventDataBuilders, eventData } from '@svc/events';
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
  subscription: eventData(subscriptionResponse, async (_event, item) => shapedSubscription(subscriptionFromItem(item))),
  invoice: eventData(invoiceResponse, async (_event, item) => invoiceShape(invoiceFromItem(item))),
  charge_attempt: eventData(chargeAttemptResponse, async (event, item) => {
    const invoice = invoiceFromItem(item);
    const attempt = invoice.charge_attempts.find((a) => a.uuid === event.object_uuid);
    const subscription = await findSubscription(invoice.subscription_uuid);
    if (!attempt || !subscription) throw new Error(`Charge attempt ${event.object_uuid} cannot be shaped`);
    return chargeAttemptShape(attempt, invoice, subscription);
  }),
};
