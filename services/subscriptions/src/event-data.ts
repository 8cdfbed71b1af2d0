import { deferred } from '@svc/core';
import { changedBySchema, type EventData, type EventDataBuilders } from '@svc/events';
import {
  chargeAttemptResponse,
  chargeAttemptShape,
  invoiceResponse,
  invoiceShape,
  shapedSubscription,
  subscriptionResponse,
} from './domain/shapes';
import { findSubscription, invoiceFromItem, subscriptionFromItem } from './repository/subscription-repository';

/**
 * A subscription event's `data`: the subscription as GET returns it, and who made the change
 * (`changed_by`, contract section 12; the pipeline adds it from the stored event).
 */
const subscriptionEventSchema = deferred(() =>
  subscriptionResponse.unwrap().extend({
    changed_by: changedBySchema.optional().meta({
      description:
        'Who made the change: the supporter in the portal, the organisation through the API, or the billing run',
    }),
  }),
);

/** The `data` of subscription, invoice and charge attempt events: each as GET returns it. */
export const subscriptionEventData: EventDataBuilders = {
  subscription: {
    schema: subscriptionEventSchema,
    build: async (_event, item) => shapedSubscription(subscriptionFromItem(item)),
  } satisfies EventData<typeof subscriptionEventSchema>,
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
