export { paymentStatusEvents } from './domain/events';
export {
  chargeSavedSource,
  isProcessing,
  pendingRecurringPayment,
  type RecurringCharge,
  settledRecurringPayment,
} from './domain/recurring';
export { resolveUnknownPayments } from './domain/resolution';
export { searchPayments } from './domain/search';
export { paymentShape, paymentSourceShape, refundShape } from './domain/shapes';
export { paymentsRoutes } from './handlers/routes';
export { projectStreamRecords } from './handlers/search-projector';
export {
  findPayment,
  newPaymentWrite,
  type PaymentRecord,
  paymentFromItem,
  paymentItem,
  paymentUpdateWrite,
} from './repository/payment-repository';
export { findPaymentSource, type PaymentSourceRecord } from './repository/payment-source-repository';
export { PAYMENT_SEARCH, paymentsAmong, projectPayments, searchIsEmpty } from './search/payment-search';
export { progressBar, type RebuildOptions, type RebuildSummary, rebuildSearch } from './search/rebuild';
