import { handleSqsBatch, oneByOne } from '@svc/core';
import type { EventName } from '@svc/events';
import { findPayment } from '@svc/payments';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import { type ReceiptsMessage, receiptsMessageSchema, runBatchPage } from './batches';
import { searchedPaymentVersion } from './gifts';
import { reconcileAfterPaymentChange } from './receipts';

/**
 * The payment events after which a receipt already issued may no longer be right: the event bus
 * sends them to the receipts queue (a rule on their detail-type, infra/constructs/receipts.ts; the
 * local bus does the same), each as the whole EventBridge event with the payment in its data.
 */
export const RECEIPT_PAYMENT_EVENTS = [
  'svc.payments.refund.succeeded',
  'svc.payments.refund.failed',
  'svc.payments.payment.dispute_funds_withdrawn',
  'svc.payments.payment.dispute_funds_reinstated',
  'svc.payments.payment.dispute_closed',
] as const satisfies readonly EventName[];

/** What the worker needs of such an event: which payment (a refund's data names it, a payment's is it). */
const paymentEventSchema = z.object({
  'detail-type': z.enum(RECEIPT_PAYMENT_EVENTS),
  detail: z.object({
    object: z.enum(['payment', 'refund']),
    object_uuid: z.string(),
    data: z.object({ payment_uuid: z.string().optional() }),
  }),
});

type Work = ReceiptsMessage | { type: 'nothing' };

/** The search engine has not caught up with a payment yet: an expected refusal, tried again. */
class SearchBehind extends Error {
  readonly expected = true;
  constructor(paymentUuid: string) {
    super(`The search engine's row of payment ${paymentUuid} is older than the payment`);
  }
}

export function parseReceiptsMessage(body: unknown): Work {
  if (typeof body === 'object' && body !== null && 'detail-type' in body) {
    const { detail } = paymentEventSchema.parse(body);
    const paymentUuid = detail.object === 'payment' ? detail.object_uuid : detail.data.payment_uuid;
    return paymentUuid ? { type: 'payment', payment_uuid: paymentUuid } : { type: 'nothing' };
  }
  return receiptsMessageSchema.parse(body);
}

/**
 * The receipts queue's worker: a batch's next page, or a payment whose refund or dispute may
 * change a receipt already issued. Messages one by one (a page is a few hundred supporters; the
 * queue's batch size is small): a failed one comes back alone.
 */
async function work(message: Work): Promise<string> {
  if (message.type === 'nothing') return 'nothing';
  if (message.type === 'batch') return (await runBatchPage(message.batch_uuid)) ? 'page' : 'batch_done';
  // The payment as it is now (the event may be older than its last change).
  const payment = await findPayment(message.payment_uuid);
  // A payment of no supporter, or one that never succeeded, is on no receipt.
  if (!payment?.supporter_uuid || payment.succeeded_at === undefined) return 'nothing';
  // Receipts read gifts from the search engine, which follows the table's stream on its own: a row
  // older than the payment read here would make the change look like none. The message comes back.
  const searched = await searchedPaymentVersion(payment.organisation_uuid, payment.uuid);
  if (searched === undefined || searched < payment.version) throw new SearchBehind(payment.uuid);
  return reconcileAfterPaymentChange(
    payment.organisation_uuid,
    payment.supporter_uuid,
    payment.succeeded_at,
    payment.uuid,
  );
}

export async function processReceiptsBatch(event: SQSEvent): Promise<{ response: SQSBatchResponse; done: number }> {
  const { response, results } = await handleSqsBatch(event, 'a receipts message', parseReceiptsMessage, (messages) =>
    oneByOne(messages, work),
  );
  return { response, done: results.filter((result) => result !== 'nothing').length };
}
