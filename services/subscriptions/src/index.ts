export {
  chargeAttemptShape,
  invoiceShape,
  type SubscriptionShape,
  shapedSubscription,
  shapedSubscriptions,
  subscriptionResponse,
} from './domain/shapes';
export {
  BY_API,
  BY_BILLING,
  BY_PORTAL,
  type CancelReason,
  cancelSubscription,
  changeTerms,
  type PortalSupporter,
  readSubscriptionAs,
  resumeSubscription,
  type SubscriptionActor,
  skipCharge,
  suspendSubscription,
  type TermsChange,
  usePaymentSource,
} from './domain/subscriptions';
export { subscriptionEventData } from './event-data';
export { resetBillingQueueClient } from './handlers/billing-queue';
export { handler as billingRunHandler } from './handlers/billing-run';
export { processBillingBatch } from './handlers/billing-worker';
export { subscriptionsRoutes } from './handlers/routes';
export { subscriptionsForPayments } from './payments-port';
export { SUBSCRIPTION_STATUSES, type SubscriptionRecord } from './repository/records';
export type { DueEntry } from './repository/subscription-repository';
export {
  DEFAULT_PLAN,
  findSubscription,
  INVOICE,
  invoiceFromItem,
  PLAN,
  SUBSCRIPTION,
  subscriptionFromItem,
  subscriptionsOfSupporter,
} from './repository/subscription-repository';
