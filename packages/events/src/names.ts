/** Canonical event names (contract, "Webhooks and events"). */
export const EVENT_NAMES = [
  'svc.payments.payment.succeeded',
  'svc.payments.payment.failed',
  'svc.payments.payment.cancelled',
  'svc.payments.refund.succeeded',
  // A refund the provider failed after accepting it (a real provider reports it later).
  'svc.payments.refund.failed',
  // A donor's bank disputed the payment, and the dispute's end (won or lost).
  'svc.payments.payment.disputed',
  'svc.payments.payment.dispute_closed',
  // The provider took the disputed amount from the account, or gave it back (after a won dispute).
  'svc.payments.payment.dispute_funds_withdrawn',
  'svc.payments.payment.dispute_funds_reinstated',
  // A saved instrument the provider no longer charges (a SEPA mandate revoked by the donor's bank).
  'svc.payments.payment_source.deactivated',
  'svc.subscriptions.subscription.created',
  'svc.subscriptions.subscription.activated',
  'svc.subscriptions.subscription.suspended',
  'svc.subscriptions.subscription.cancelled',
  // A changed amount, interval or date (contract section 12), through the API or the portal.
  'svc.subscriptions.subscription.updated',
  'svc.subscriptions.invoice.created',
  'svc.subscriptions.invoice.paid',
  'svc.subscriptions.invoice.cancelled',
  'svc.subscriptions.charge_attempt.failed',
  'svc.organisations.organisation.approval_requested',
  'svc.organisations.organisation.approved',
  'svc.organisations.organisation.declined',
  'svc.onboarding.onboarding_process.created',
  'svc.onboarding.onboarding_process.succeeded',
  'svc.onboarding.onboarding_process.failed',
  'svc.reconciliation.reconciliation_report.created',
  // A yearly donation receipt issued, and one voided (by hand, or replaced after a refund).
  'svc.receipts.receipt.issued',
  'svc.receipts.receipt.voided',
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

export const EVENT_OBJECTS = [
  'payment',
  'refund',
  'payment_source',
  'subscription',
  'invoice',
  'charge_attempt',
  'organisation',
  'onboarding_process',
  'reconciliation_report',
  'receipt',
] as const;

export type EventObject = (typeof EVENT_OBJECTS)[number];

/** `svc.event.payment_gateway.payment.succeeded` and friends name the payment events too. */
const PAYMENT_GATEWAY_ALIAS = /^svc\.event\.payment_gateway\.(payment|refund)\.([a-z_]+)$/;

/** Resolves an alias to its canonical name; undefined when the name is unknown. */
export function canonicalEventName(name: string): EventName | undefined {
  const alias = PAYMENT_GATEWAY_ALIAS.exec(name);
  const candidate = alias ? `svc.payments.${alias[1]}.${alias[2]}` : name;
  return (EVENT_NAMES as readonly string[]).includes(candidate) ? (candidate as EventName) : undefined;
}
