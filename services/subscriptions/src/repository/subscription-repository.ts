import { createHash } from 'node:crypto';
import { localMidnight } from '@svc/schedule';
import { getItem, key, queryAll, type TransactItem, timeKey } from '@svc/table';
import {
  type InvoiceRecord,
  invoiceRecordSchema,
  type PlanRecord,
  planRecordSchema,
  type SubscriptionRecord,
  subscriptionRecordSchema,
} from './records';
import { billableFrom } from './state';

/**
 * How the subscriptions domain lays out its items in the one table.
 *
 * | pattern                                   | index | key                                                             |
 * |-------------------------------------------|-------|-----------------------------------------------------------------|
 * | plan by uuid                              | table | pk = PLAN#<uuid>, sk = PLAN                                     |
 * | plans of an organisation                  | gsi1  | gsi1pk = ORG#<org>#PLANS, gsi1sk = <created>#<uuid>             |
 * | the organisation's default plan (unique)  | table | pk = ORG#<org>, sk = DEFAULT_PLAN                               |
 * | subscription by uuid                      | table | pk = SUBSCRIPTION#<uuid>, sk = SUBSCRIPTION                     |
 * | invoices of a subscription / one invoice  | table | pk = SUBSCRIPTION#<uuid>, sk = INVOICE#<uuid>                   |
 * | work due by a time (billing run)          | due   | duepk = DUE#<shard 0-15>, duesk = <unix 12 digits>#SUB#<uuid> or …#INV#<sub>#<inv> |
 *
 * The due index is sparse: only an active subscription with a next due day, and an open invoice
 * with a retry or an unfinished charge, carry `duepk`/`duesk`. A billing run reads each shard up
 * to now, so its cost follows what is due, not how many subscriptions exist.
 */
export const DUE_SHARDS = 16;

function shardOf(uuid: string, shards: number): number {
  return (createHash('sha1').update(uuid).digest()[0] ?? 0) % shards;
}

export const planKey = (uuid: string) => ({ pk: key('PLAN', uuid), sk: 'PLAN' });
export const defaultPlanKey = (organisationUuid: string) => ({ pk: key('ORG', organisationUuid), sk: 'DEFAULT_PLAN' });
export const subscriptionKey = (uuid: string) => ({ pk: key('SUBSCRIPTION', uuid), sk: 'SUBSCRIPTION' });
export const invoiceKey = (subscriptionUuid: string, uuid: string) => ({
  pk: key('SUBSCRIPTION', subscriptionUuid),
  sk: key('INVOICE', uuid),
});

export function duePartition(shard: number): string {
  return key('DUE', shard);
}

/** The sort key bound that selects everything due at or before `unixSeconds`. */
export function dueBefore(unixSeconds: number): string {
  return `${timeKey(unixSeconds)}$`;
}

// Plans

export function planItem(plan: PlanRecord): Record<string, unknown> {
  return {
    ...planKey(plan.uuid),
    entity: 'subscription_plan',
    gsi1pk: key('ORG', plan.organisation_uuid, 'PLANS'),
    gsi1sk: key(timeKey(plan.created), plan.uuid),
    ...plan,
  };
}

export async function findPlan(uuid: string): Promise<PlanRecord | undefined> {
  const item = await getItem(planKey(uuid));
  return item ? planRecordSchema.parse(item) : undefined;
}

export async function plansOfOrganisation(organisationUuid: string): Promise<PlanRecord[]> {
  const items = await queryAll({ index: 'gsi1', partition: key('ORG', organisationUuid, 'PLANS') });
  return items.map((item) => planRecordSchema.parse(item));
}

export async function defaultPlanUuid(organisationUuid: string): Promise<string | undefined> {
  const item = await getItem(defaultPlanKey(organisationUuid));
  return typeof item?.plan_uuid === 'string' ? item.plan_uuid : undefined;
}

export function planPut(plan: PlanRecord, readVersion?: number): TransactItem {
  return {
    Put: {
      Item: planItem(plan),
      ...(readVersion === undefined
        ? { ConditionExpression: 'attribute_not_exists(pk)' }
        : { ConditionExpression: 'version = :read', ExpressionAttributeValues: { ':read': readVersion } }),
    },
  };
}

/** Claims the organisation's single default: fails when another plan holds it. */
export function claimDefaultPlan(plan: PlanRecord): TransactItem {
  return {
    Put: {
      Item: { ...defaultPlanKey(plan.organisation_uuid), entity: 'default_plan', plan_uuid: plan.uuid },
      ConditionExpression: 'attribute_not_exists(pk) OR plan_uuid = :self',
      ExpressionAttributeValues: { ':self': plan.uuid },
    },
  };
}

export function releaseDefaultPlan(plan: PlanRecord): TransactItem {
  return {
    Delete: {
      Key: defaultPlanKey(plan.organisation_uuid),
      ConditionExpression: 'plan_uuid = :self',
      ExpressionAttributeValues: { ':self': plan.uuid },
    },
  };
}

// Subscriptions and invoices: keys, the version their writes are guarded by, the events of the
// write (read off the stream) and the rest as one JSON document (see the payments domain).

function documentOf<T extends { version: number; events: unknown }>(record: T) {
  const { version, events, ...document } = record;
  return { version, events, document: JSON.stringify(document) };
}

function recordOf(item: Record<string, unknown>): Record<string, unknown> {
  return { ...JSON.parse(String(item.document)), version: item.version, events: item.events };
}

export function subscriptionItem(subscription: SubscriptionRecord): Record<string, unknown> {
  const due = billableFrom(subscription);
  return {
    ...subscriptionKey(subscription.uuid),
    entity: 'subscription',
    ...(due === undefined
      ? {}
      : {
          duepk: duePartition(shardOf(subscription.uuid, DUE_SHARDS)),
          duesk: `${timeKey(due)}#SUB#${subscription.uuid}`,
        }),
    ...documentOf(subscription),
  };
}

export function subscriptionFromItem(item: Record<string, unknown>): SubscriptionRecord {
  return subscriptionRecordSchema.parse(recordOf(item));
}

export async function findSubscription(uuid: string): Promise<SubscriptionRecord | undefined> {
  const item = await getItem(subscriptionKey(uuid));
  return item ? subscriptionFromItem(item) : undefined;
}

export function subscriptionPut(subscription: SubscriptionRecord, readVersion?: number): TransactItem {
  return versionedPut(subscriptionItem(subscription), readVersion);
}

/** Guards a write on the subscription not having changed since it was read (no write to it). */
export function subscriptionUnchanged(subscription: SubscriptionRecord): TransactItem {
  return {
    ConditionCheck: {
      Key: subscriptionKey(subscription.uuid),
      ConditionExpression: 'version = :read',
      ExpressionAttributeValues: { ':read': subscription.version },
    },
  };
}

/**
 * When the billing worker next has to look at the invoice: a lapsed charge lease (whatever the
 * invoice's status, so no attempt stays pending), or the day of an open invoice's next retry.
 */
export function invoiceDueAt(invoice: InvoiceRecord): number | undefined {
  const pending = invoice.charge_attempts.find((attempt) => attempt.status === 'pending');
  if (pending) return pending.lease_until;
  if (invoice.status !== 'open') return undefined;
  return invoice.next_attempt_day === undefined ? undefined : localMidnight(invoice.next_attempt_day, invoice.timezone);
}

export function invoiceItem(invoice: InvoiceRecord): Record<string, unknown> {
  const due = invoiceDueAt(invoice);
  return {
    ...invoiceKey(invoice.subscription_uuid, invoice.uuid),
    entity: 'invoice',
    ...(due === undefined
      ? {}
      : {
          duepk: duePartition(shardOf(invoice.uuid, DUE_SHARDS)),
          duesk: `${timeKey(due)}#INV#${invoice.subscription_uuid}#${invoice.uuid}`,
        }),
    ...documentOf(invoice),
  };
}

export function invoiceFromItem(item: Record<string, unknown>): InvoiceRecord {
  return invoiceRecordSchema.parse(recordOf(item));
}

export async function findInvoice(subscriptionUuid: string, uuid: string): Promise<InvoiceRecord | undefined> {
  const item = await getItem(invoiceKey(subscriptionUuid, uuid));
  return item ? invoiceFromItem(item) : undefined;
}

export async function invoicesOf(subscriptionUuid: string): Promise<InvoiceRecord[]> {
  const items = await queryAll({
    partition: key('SUBSCRIPTION', subscriptionUuid),
    sortBeginsWith: 'INVOICE#',
    consistent: true,
  });
  return items.map(invoiceFromItem).sort((a, b) => a.created - b.created || a.uuid.localeCompare(b.uuid));
}

export function invoicePut(invoice: InvoiceRecord, readVersion?: number): TransactItem {
  return versionedPut(invoiceItem(invoice), readVersion);
}

function versionedPut(item: Record<string, unknown>, readVersion: number | undefined): TransactItem {
  return {
    Put: {
      Item: item,
      ...(readVersion === undefined
        ? { ConditionExpression: 'attribute_not_exists(pk)' }
        : { ConditionExpression: 'version = :read', ExpressionAttributeValues: { ':read': readVersion } }),
    },
  };
}

/** A due-index entry: what is due, when. */
export type DueEntry =
  | { kind: 'subscription'; subscription_uuid: string; due: number }
  | { kind: 'invoice'; subscription_uuid: string; invoice_uuid: string; due: number };

export function dueEntryOf(item: Record<string, unknown>): DueEntry | undefined {
  const [time, kind, first, second] = String(item.duesk ?? '').split('#');
  const due = Number(time);
  if (kind === 'SUB' && first) return { kind: 'subscription', subscription_uuid: first, due };
  if (kind === 'INV' && first && second) {
    return { kind: 'invoice', subscription_uuid: first, invoice_uuid: second, due };
  }
  return undefined;
}
