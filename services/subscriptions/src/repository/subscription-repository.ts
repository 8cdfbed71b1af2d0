import { localMidnight } from '@svc/schedule';
import { byUuid, defineEntity, documentStorage, key, queryAll, shardOf, type TransactItem, timeKey } from '@svc/table';
import * as z from 'zod';
import {
  type InvoiceRecord,
  invoiceRecordSchema,
  type PlanRecord,
  planRecordSchema,
  type SubscriptionRecord,
  subscriptionRecordSchema,
} from './records';
import { dueIndexAt } from './state';

/**
 * How the subscriptions domain lays out its items in the one table: plans, subscriptions and
 * invoices are described once each below (`PLAN`, `SUBSCRIPTION`, `INVOICE`; docs/access-patterns.md
 * is made from them), and the organisation's default plan is a marker item in the organisation's
 * partition (`pk = ORG#<org>, sk = DEFAULT_PLAN`, unique by key).
 *
 * The due index is sparse: only an active subscription with a next due day (at its charge, or at
 * the charge's reminder while one is pending), and an open invoice with a retry or an unfinished
 * charge, carry `duepk`/`duesk`. A billing run reads each shard up
 * to now, so its cost follows what is due, not how many subscriptions exist.
 */
export const DUE_SHARDS = 16;

const defaultPlanSchema = z.object({ organisation_uuid: z.string(), plan_uuid: z.string() });

/** The organisation's one default plan: a marker in the organisation's partition, unique by key. */
export const DEFAULT_PLAN = defineEntity<z.infer<typeof defaultPlanSchema>, string>({
  name: 'default_plan',
  summary: 'Which plan is the organisation’s default: a marker in its partition, so there is one.',
  prefix: 'ORG',
  idShown: '<organisation uuid>',
  sort: 'DEFAULT_PLAN',
  id: (marker) => marker.organisation_uuid,
  idParts: (organisationUuid) => [organisationUuid],
  byKey: 'the organisation’s default plan (unique)',
  storage: {
    toAttributes: ({ plan_uuid }) => ({ plan_uuid }),
    fromAttributes: (item) => ({ ...item, organisation_uuid: String(item.pk).slice('ORG#'.length) }),
  },
  parse: (value) => defaultPlanSchema.parse(value),
});

export const defaultPlanKey = (organisationUuid: string) => DEFAULT_PLAN.key(organisationUuid);

export function duePartition(shard: number): string {
  return key('DUE', shard);
}

/** The sort key bound that selects everything due at or before `unixSeconds`. */
export function dueBefore(unixSeconds: number): string {
  return `${timeKey(unixSeconds)}$`;
}

// Plans

export const PLAN = defineEntity<PlanRecord, string>({
  name: 'subscription_plan',
  summary: 'A plan of recurring donations (interval, dunning, notifications) of an organisation.',
  prefix: 'PLAN',
  ...byUuid(),
  sort: 'PLAN',
  byKey: 'plan by uuid',
  indexes: [
    {
      index: 'gsi1',
      pattern: 'plans of an organisation',
      shown: 'gsi1pk = ORG#<org>#PLANS, gsi1sk = <created>#<uuid>',
      keys: (plan) => ({
        partition: organisationPlans(plan.organisation_uuid),
        sort: key(timeKey(plan.created), plan.uuid),
      }),
    },
  ],
  version: 'version',
  parse: (item) => planRecordSchema.parse(item),
});

const organisationPlans = (organisationUuid: string) => key('ORG', organisationUuid, 'PLANS');

export const planKey = (uuid: string) => PLAN.key(uuid);
export const planItem = (plan: PlanRecord) => PLAN.item(plan);

export function findPlan(uuid: string): Promise<PlanRecord | undefined> {
  return PLAN.find(uuid);
}

export async function plansOfOrganisation(organisationUuid: string): Promise<PlanRecord[]> {
  const items = await queryAll({ index: 'gsi1', partition: organisationPlans(organisationUuid) });
  return items.map(PLAN.fromItem);
}

export async function defaultPlanUuid(organisationUuid: string): Promise<string | undefined> {
  return (await DEFAULT_PLAN.find(organisationUuid))?.plan_uuid;
}

export function planPut(plan: PlanRecord, readVersion?: number): TransactItem {
  return PLAN.put(plan, readVersion);
}

/** Claims the organisation's single default: fails when another plan holds it. */
export function claimDefaultPlan(plan: PlanRecord): TransactItem {
  return {
    Put: {
      Item: DEFAULT_PLAN.item({ organisation_uuid: plan.organisation_uuid, plan_uuid: plan.uuid }),
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

export const SUBSCRIPTION = defineEntity<SubscriptionRecord, string>({
  name: 'subscription',
  summary: 'A recurring donation: its plan, amount, payment source and schedule.',
  prefix: 'SUBSCRIPTION',
  ...byUuid(),
  sort: 'SUBSCRIPTION',
  byKey: 'subscription by uuid',
  indexes: [
    {
      index: 'gsi1',
      pattern: 'a supporter’s subscriptions, by creation (the donor portal)',
      shown: 'gsi1pk = SUPPORTER#<supporter uuid>#SUBSCRIPTIONS, gsi1sk = <created, 12 digits>#<uuid>',
      // Sparse: a subscription without a supporter is in no supporter's list. The supporter is set
      // once (never changed, see updateSubscription) and `created` never changes: the keys are stable.
      keys: (subscription) =>
        subscription.supporter_uuid === undefined
          ? undefined
          : {
              partition: supporterSubscriptionsPartition(subscription.supporter_uuid),
              sort: key(String(subscription.created).padStart(12, '0'), subscription.uuid),
            },
    },
    {
      index: 'due',
      pattern: 'subscriptions due by a time: a charge, or its reminder 7 days before (billing run)',
      shown: 'duepk = DUE#<shard 0-15>, duesk = <unix 12 digits>#SUB#<uuid>',
      keys: (subscription) => {
        const due = dueIndexAt(subscription);
        if (due === undefined) return undefined;
        return {
          partition: duePartition(shardOf(subscription.uuid, DUE_SHARDS)),
          sort: `${timeKey(due)}#SUB#${subscription.uuid}`,
        };
      },
    },
  ],
  version: 'version',
  storage: documentStorage(),
  parse: (record) => subscriptionRecordSchema.parse(record),
});

export const subscriptionKey = (uuid: string) => SUBSCRIPTION.key(uuid);
export const subscriptionItem = (subscription: SubscriptionRecord) => SUBSCRIPTION.item(subscription);
export const subscriptionFromItem = (item: Record<string, unknown>) => SUBSCRIPTION.fromItem(item);

export function findSubscription(uuid: string): Promise<SubscriptionRecord | undefined> {
  return SUBSCRIPTION.find(uuid);
}

const supporterSubscriptionsPartition = (supporterUuid: string) => key('SUPPORTER', supporterUuid, 'SUBSCRIPTIONS');

/**
 * A supporter's subscriptions, oldest first (a donor has a handful). The index names them; each
 * is then read by key, strongly consistent, so a change the donor just made always shows (an
 * index lags its table in AWS).
 */
export async function subscriptionsOfSupporter(supporterUuid: string): Promise<SubscriptionRecord[]> {
  const entries = await queryAll({ index: 'gsi1', partition: supporterSubscriptionsPartition(supporterUuid) });
  // gsi1sk = <created>#<uuid> (the record itself is one JSON document on the item).
  const uuids = entries.map((entry) => String(entry.gsi1sk ?? '').split('#')[1] ?? '');
  const found = await Promise.all(uuids.filter(Boolean).map((uuid) => findSubscription(uuid)));
  return found.filter(
    (subscription): subscription is SubscriptionRecord => subscription?.supporter_uuid === supporterUuid,
  );
}

export function subscriptionPut(subscription: SubscriptionRecord, readVersion?: number): TransactItem {
  return SUBSCRIPTION.put(subscription, readVersion);
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

export const INVOICE = defineEntity<InvoiceRecord, readonly [string, string]>({
  name: 'invoice',
  summary: 'A due amount of a subscription, with its charge attempts.',
  prefix: 'SUBSCRIPTION',
  idShown: '<subscription uuid>',
  sort: ([, uuid]) => key('INVOICE', uuid),
  sortShown: 'INVOICE#<uuid>',
  id: (invoice) => [invoice.subscription_uuid, invoice.uuid] as const,
  idParts: ([subscriptionUuid]) => [subscriptionUuid],
  byKey: 'invoices of a subscription (sk begins with INVOICE#), one invoice',
  indexes: [
    {
      index: 'due',
      pattern: 'invoices due by a time: a retry, or a charge whose lease lapsed (billing run)',
      shown: 'duepk = DUE#<shard 0-15>, duesk = <unix 12 digits>#INV#<subscription uuid>#<uuid>',
      keys: (invoice) => {
        const due = invoiceDueAt(invoice);
        if (due === undefined) return undefined;
        return {
          partition: duePartition(shardOf(invoice.uuid, DUE_SHARDS)),
          sort: `${timeKey(due)}#INV#${invoice.subscription_uuid}#${invoice.uuid}`,
        };
      },
    },
  ],
  version: 'version',
  storage: documentStorage(),
  parse: (record) => invoiceRecordSchema.parse(record),
});

export const invoiceKey = (subscriptionUuid: string, uuid: string) => INVOICE.key([subscriptionUuid, uuid]);
export const invoiceItem = (invoice: InvoiceRecord) => INVOICE.item(invoice);
export const invoiceFromItem = (item: Record<string, unknown>) => INVOICE.fromItem(item);

export function findInvoice(subscriptionUuid: string, uuid: string): Promise<InvoiceRecord | undefined> {
  return INVOICE.find([subscriptionUuid, uuid]);
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
  return INVOICE.put(invoice, readVersion);
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
