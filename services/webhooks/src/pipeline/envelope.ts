import { EVENTS_ATTRIBUTE, type EventObject, eventsOfChange, itemFromStreamImage, type StoredEvent } from '@svc/events';
import { organisationSchema, organisationShape } from '@svc/organisations';
import { paymentFromItem, paymentShape, refundShape } from '@svc/payments';
import { reconciliationReportShape, reportRecordSchema } from '@svc/reconciliation';
import {
  chargeAttemptShape,
  findSubscription,
  invoiceFromItem,
  invoiceShape,
  subscriptionFromItem,
  subscriptionResponse,
} from '@svc/subscriptions';
import type { DynamoDBRecord } from 'aws-lambda';
import type { Envelope } from '../repository/items';

/**
 * From a stream record to the events it announces, each with its `data`: the object as its GET
 * returns it, built from the written item (the new image) by the owning domain's shape function.
 * The item is the state the event announces, so `data` is never newer or older than the event.
 */
type Item = Record<string, unknown>;
type DataOf = (event: StoredEvent, item: Item) => Promise<Record<string, unknown>>;

const DATA: Partial<Record<EventObject, DataOf>> = {
  payment: async (_event, item) => paymentShape(paymentFromItem(item)),
  refund: async (event, item) => {
    const payment = paymentFromItem(item);
    const refund = payment.refunds.find((r) => r.uuid === event.object_uuid);
    if (!refund) throw new Error(`Refund ${event.object_uuid} is not on payment ${payment.uuid}`);
    return refundShape(refund, payment);
  },
  subscription: async (_event, item) => subscriptionResponse(subscriptionFromItem(item)),
  invoice: async (_event, item) => invoiceShape(invoiceFromItem(item)),
  charge_attempt: async (event, item) => {
    const invoice = invoiceFromItem(item);
    const attempt = invoice.charge_attempts.find((a) => a.uuid === event.object_uuid);
    const subscription = await findSubscription(invoice.subscription_uuid);
    if (!attempt || !subscription) throw new Error(`Charge attempt ${event.object_uuid} cannot be shaped`);
    return chargeAttemptShape(attempt, invoice, subscription);
  },
  organisation: async (_event, item) => {
    const organisation = organisationSchema.parse(item);
    return organisationShape(organisation, organisation.account_uuids);
  },
  reconciliation_report: async (_event, item) => reconciliationReportShape(reportRecordSchema.parse(item)),
};

/** Lets capabilities that build on webhooks (onboarding, reconciliation) add their shapes. */
export function registerEventData(object: EventObject, dataOf: DataOf): void {
  DATA[object] = dataOf;
}

export async function envelopesOf(record: DynamoDBRecord): Promise<Envelope[]> {
  // Most written items (deliveries, responses, grants…) carry no events: nothing to unmarshal.
  const raw = record.dynamodb?.NewImage as Record<string, unknown> | undefined;
  if (!raw || !(EVENTS_ATTRIBUTE in raw)) return [];
  // DynamoDB Local writes empty maps in stream images oddly; itemFromStreamImage repairs and unmarshalls.
  const newItem = itemFromStreamImage(record.dynamodb?.NewImage as Record<string, unknown> | undefined);
  const oldItem = itemFromStreamImage(record.dynamodb?.OldImage as Record<string, unknown> | undefined);
  const events = eventsOfChange(newItem, oldItem);
  if (events.length === 0 || !newItem) return [];
  return Promise.all(
    events.map(async (event) => {
      const dataOf = DATA[event.object as EventObject];
      const data = dataOf ? await dataOf(event, newItem) : {};
      return { ...event, data };
    }),
  );
}
