import { expect } from 'vitest';

/**
 * What a direct debit the donor's bank returned after it succeeded looks like, whichever provider
 * took it (issue 45, point 3; payments' `isReturnedDebit`): the payment succeeded, with a lost
 * dispute whose funds were withdrawn, announced in this order. Stripe's and Adyen's tests assert
 * the same, so the two providers cannot drift apart.
 */
export const RETURNED_DEBIT_EVENTS = [
  'svc.payments.payment.succeeded',
  'svc.payments.payment.disputed',
  'svc.payments.payment.dispute_closed',
  'svc.payments.payment.dispute_funds_withdrawn',
] as const;

// biome-ignore lint/suspicious/noExplicitAny: a payment as the API returns it
export function expectReturnedDebit(payment: any, amount: string, currency: string): void {
  expect(payment).toMatchObject({
    status: 'succeeded',
    payment_method: 'sepa_dd',
    dispute: { status: 'lost', funds: 'withdrawn', amount: { value: amount, currency } },
  });
}

/**
 * The recurring invoice a returned debit paid: open again (`debit_returned`), its attempt failed,
 * the next attempt planned by the plan's dunning schedule.
 */
// biome-ignore lint/suspicious/noExplicitAny: an invoice as the API returns it
export function expectReopenedInvoice(invoice: any): void {
  expect(invoice).toMatchObject({
    status: 'open',
    status_reason: 'debit_returned',
    failed_payment_attempts: 1,
    charge_attempts: [{ status: 'failed' }],
  });
}
