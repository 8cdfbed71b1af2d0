export { chargeAttemptShape, invoiceShape, shapedSubscription } from './domain/shapes';
export { subscriptionEventData } from './event-data';
export { resetBillingQueueClient } from './handlers/billing-queue';
export { handler as billingRunHandler } from './handlers/billing-run';
export { processBillingBatch } from './handlers/billing-worker';
export { subscriptionsRoutes } from './handlers/routes';
export { subscriptionsForPayments } from './payments-port';
export type { DueEntry } from './repository/subscription-repository';
export {
  DEFAULT_PLAN,
  findSubscription,
  INVOICE,
  invoiceFromItem,
  PLAN,
  SUBSCRIPTION,
  subscriptionFromItem,
} from './repository/subscription-repository';
