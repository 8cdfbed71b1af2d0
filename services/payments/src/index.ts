export { EARLY_CALLBACK, EARLY_UNRECORDED_AFTER_SECONDS, UNRECORDED_PAYMENT } from './domain/early-callback-store';

export { paymentStatusEvents } from './domain/events';
export { PAID_AT_OTHER_PROVIDER } from './domain/provider-updates';
export {
  chargeSavedSource,
  feesOfSource,
  isProcessing,
  pendingRecurringPayment,
  type RecurringCharge,
  recurringFeeCover,
  settledRecurringPayment,
} from './domain/recurring';
export { type PaymentRequest, paymentRequestSchema } from './domain/request';
export { resolveUnknownPayments } from './domain/resolution';
export { ROUTE_CALLED } from './domain/routing';
export { searchPayments } from './domain/search';
export { intendedOf, paymentShape, paymentSourceShape, refundShape } from './domain/shapes';
export { createPaymentSource } from './domain/sources';
export {
  type PaymentForSubscription,
  type PaymentSubscriptionInput,
  paymentSubscriptionInput,
  type SubscriptionsPort,
  useSubscriptions,
} from './domain/subscriptions-port';
export { paymentEventData } from './event-data';
export { paymentsRoutes } from './handlers/routes';
export { CANCELLED_AFTER_SUCCESS, HANDLED_ADYEN_EVENTS } from './providers/adyen/adyen-notifications';
export { PROVIDER_FAULTS, type ProviderFault, providerFault, setProviderFault } from './providers/faults';
export { PROVIDER_NAMES } from './providers/registry';
export {
  STRIPE_API_VERSION,
  STRIPE_CONFIRM_RETRIES,
  STRIPE_CONFIRM_TIMEOUT_MS,
  STRIPE_RETRIES,
  STRIPE_TIMEOUT_MS,
  stripeClient,
} from './providers/stripe/stripe-config';
export { HANDLED_STRIPE_EVENTS, PROVIDER_EVENT } from './providers/stripe/stripe-events';
export { ensureWebhookEndpoint, replayStripeEvents } from './providers/stripe/stripe-operations';
export {
  findPayment,
  newPaymentWrite,
  PAYMENT,
  type PaymentRecord,
  paymentFromItem,
  paymentItem,
  paymentKey,
  paymentUpdateWrite,
  withSucceededAt,
} from './repository/payment-repository';
export { findPaymentSource, PAYMENT_SOURCE, type PaymentSourceRecord } from './repository/payment-source-repository';
export { PROVIDER_CUSTOMER } from './repository/provider-customer-repository';
export {
  allProviderHealth,
  forgetProviderHealth,
  OPEN_AFTER,
  PROVIDER_HEALTH,
  type ProviderHealth,
} from './repository/provider-health-repository';
export { forgetProviderSlots, PROVIDER_RATE, takeProviderSlot } from './repository/provider-rate-repository';
