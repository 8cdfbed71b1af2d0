/**
 * What tests and the bench drive below the API: one billing run, the steps of charging an
 * invoice, and the table items of subscriptions and invoices (to load many at once).
 */
export { newInvoice, openAttempt } from './domain/billing';
export { runBilling } from './domain/billing-run';
export type { SubscriptionRecord } from './repository/records';
export {
  type DueEntry,
  dueBefore,
  invoiceItem,
  subscriptionItem,
  subscriptionKey,
} from './repository/subscription-repository';
