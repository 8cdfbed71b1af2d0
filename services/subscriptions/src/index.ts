export { settle as settleChargeAttempt } from './domain/billing';
export { checkPaymentSubscription, subscriptionForPayment } from './domain/from-payment';
export { chargeAttemptShape, invoiceShape, subscriptionResponse } from './domain/shapes';
export { resetBillingQueueClient } from './handlers/billing-queue';
export { handler as billingRunHandler } from './handlers/billing-run';
export { processBillingBatch } from './handlers/billing-worker';
export { subscriptionsRoutes } from './handlers/routes';
export { findSubscription, invoiceFromItem, subscriptionFromItem } from './repository/items';
export { SUBSCRIPTION_PROJECTION } from './search/subscription-search';
