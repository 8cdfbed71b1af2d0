import {
  ConflictError,
  deferred,
  definedFields,
  flatStringObject,
  freeJsonObject,
  isResumedRequest,
  NotFoundError,
  newResourceUuid,
  now,
  type Principal,
  ValidationError,
} from '@svc/core';
import { findPaymentSource, newPaymentWrite } from '@svc/payments';
import { retryOnConflict, transactWrite, versioned } from '@svc/table';
import * as z from 'zod';
import {
  type ChargeAttemptRecord,
  type InvoiceRecord,
  intendedOf,
  type SubscriptionRecord,
} from '../repository/records';
import { findInvoice, invoicePut, invoicesOf } from '../repository/subscription-repository';
import {
  attemptCharge,
  type BillingOutcome,
  chargeAndSettle,
  chargeInvoice,
  invoiceEvent,
  newInvoice,
  noOutcome,
  type OpenedAttempt,
  openAttempt,
} from './billing';
import { readSubscription } from './subscriptions';

export const createInvoiceInput = deferred(() =>
  z
    .object({
      amount: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
      custom_parameters: flatStringObject({ maxKeys: 256, maxKeyLength: 100, maxValueLength: 1000 }).optional(),
      svc_parameters: freeJsonObject({ maxKeyLength: 100 }).optional(),
    })
    .strict(),
);

/** Any status is taken here; anything but `paid`/`cancelled` is refused with the contract's code. */
export const closeInvoiceInput = deferred(() => z.object({ status: z.unknown() }).strict());

export async function listInvoices(principal: Promise<Principal>, subscriptionUuid: string) {
  const subscription = await readSubscription(principal, subscriptionUuid);
  return { subscription, invoices: await invoicesOf(subscription.uuid) };
}

async function readInvoice(subscription: SubscriptionRecord, invoiceUuid: string): Promise<InvoiceRecord> {
  const invoice = await findInvoice(subscription.uuid, invoiceUuid);
  if (!invoice) throw new NotFoundError('Invoice not found');
  return invoice;
}

export async function getInvoice(principal: Promise<Principal>, subscriptionUuid: string, invoiceUuid: string) {
  const subscription = await readSubscription(principal, subscriptionUuid);
  return { subscription, invoice: await readInvoice(subscription, invoiceUuid) };
}

/**
 * A manual invoice: open, charged only by the charge attempts the client creates (no dunning).
 * Its `amount` is the gift: a subscription that covers the fees shows (and charges) the total
 * on top, as its source's fees make it now.
 */
export async function createInvoice(
  principal: Promise<Principal>,
  subscriptionUuid: string,
  input: z.infer<typeof createInvoiceInput>,
) {
  const subscription = await readSubscription(principal, subscriptionUuid);
  const invoice = newInvoice(subscription, now(), {
    ...definedFields({ amount: input.amount }),
    ...definedFields({ custom: input.custom_parameters }),
    ...definedFields({ svc: input.svc_parameters }),
  });
  const source = subscription.cover_fees ? await findPaymentSource(subscription.payment_source_uuid) : undefined;
  if (source) chargeInvoice(invoice, await attemptCharge(subscription, source, intendedOf(invoice)));
  // A re-run of a request that died after storing the invoice returns that invoice.
  const earlier = isResumedRequest() ? await findInvoice(subscription.uuid, invoice.uuid) : undefined;
  if (earlier) return { subscription, invoice: earlier };
  await transactWrite([{ item: invoicePut(invoice) }]);
  return { subscription, invoice };
}

/** Closes an open invoice as `paid` (settled elsewhere) or `cancelled`; dunning stops. */
export async function closeInvoice(
  principal: Promise<Principal>,
  subscriptionUuid: string,
  invoiceUuid: string,
  status: unknown,
) {
  const subscription = await readSubscription(principal, subscriptionUuid);
  if (status !== 'paid' && status !== 'cancelled') {
    throw ValidationError.field(
      'status',
      'the_value_you_selected_is_not_a_valid_choice',
      'The value you selected is not a valid choice: send "paid" or "cancelled"',
    );
  }
  const invoice = await retryOnConflict(async () => {
    const read = await readInvoice(subscription, invoiceUuid);
    if (read.status !== 'open') {
      throw new ConflictError(`The invoice is ${read.status} already`, 'error.invoice.not_open', 'status');
    }
    if (read.charge_attempts.some((attempt) => attempt.status === 'pending')) {
      throw new ConflictError('A charge of this invoice is in progress', 'error.invoice.attempt_pending', 'status');
    }
    const at = now();
    const next: InvoiceRecord = { ...structuredClone(read), events: [], version: read.version + 1, updated: at };
    next.status = status;
    next.status_reason = status === 'paid' ? 'paid' : 'cancelled';
    delete next.next_attempt_day;
    next.events = [invoiceEvent(next, status)];
    await transactWrite([versioned(invoicePut(next, read.version))]);
    return next;
  });
  return { subscription, invoice };
}

/**
 * A charge attempt through the API: refused with 409 when the invoice is
 * paid or has a pending attempt. The check and the new attempt are one write guarded by the
 * invoice's version, so of concurrent requests exactly one creates an attempt. The provider is
 * asked at once; the response carries its answer.
 */
export async function createChargeAttempt(
  principal: Promise<Principal>,
  subscriptionUuid: string,
  invoiceUuid: string,
): Promise<{
  subscription: SubscriptionRecord;
  invoice: InvoiceRecord;
  attempt: ChargeAttemptRecord;
  outcome: BillingOutcome;
}> {
  const subscription = await readSubscription(principal, subscriptionUuid);
  const source = await findPaymentSource(subscription.payment_source_uuid);
  if (!source) throw new ConflictError('The subscription has no payment source', 'error.subscription.no_source');
  const requestRef = newResourceUuid('charge_attempt');
  const opened = await retryOnConflict(async (): Promise<OpenedAttempt> => {
    const read = await readInvoice(subscription, invoiceUuid);
    // A re-run of a request that died after opening its attempt continues that attempt: the
    // provider is asked again under the attempt's uuid and answers without charging twice.
    const earlier = isResumedRequest() ? read.charge_attempts.find((a) => a.request_ref === requestRef) : undefined;
    if (earlier) return { subscriptionUuid: subscription.uuid, invoice: read, attempt: earlier, source, retry: true };
    if (read.status === 'paid') {
      throw new ConflictError('The invoice is paid', 'error.invoice.paid');
    }
    if (read.charge_attempts.some((attempt) => attempt.status === 'pending')) {
      throw new ConflictError('The invoice has a pending charge attempt', 'error.invoice.attempt_pending');
    }
    const at = now();
    const next: InvoiceRecord = { ...structuredClone(read), events: [], version: read.version + 1, updated: at };
    const charge = await attemptCharge(subscription, source, intendedOf(read));
    const { attempt, payment } = openAttempt(next, subscription, source, false, at, requestRef, charge);
    await transactWrite([versioned(invoicePut(next, read.version)), { item: newPaymentWrite(payment) }]);
    return { subscriptionUuid: subscription.uuid, invoice: next, attempt, source };
  });
  const outcome = opened.attempt.status === 'pending' ? await chargeAndSettle(opened) : noOutcome();
  const { invoice } = await getInvoice(Promise.resolve(await principal), subscriptionUuid, invoiceUuid);
  const attempt = invoice.charge_attempts.find((a) => a.uuid === opened.attempt.uuid) ?? opened.attempt;
  const latest = await readSubscription(principal, subscriptionUuid);
  return { subscription: latest, invoice, attempt, outcome };
}
