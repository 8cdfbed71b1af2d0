import type { Principal } from '@svc/core';
import { localMidnight } from '@svc/schedule';
import { parseSearchRequest, type SearchRequest } from '@svc/search';
import { grantScope, runSqlSearch, type SqlSearchSource, storableDocument, storableText } from '@svc/search/sql';
import {
  groupCommit,
  inSearchEngine,
  itemsOf,
  NO_ROWS_ORGANISATION,
  type SearchDatabase,
  type SearchProjection,
  searchDb,
} from '@svc/sql';
import { sql } from 'kysely';
import { shownNextDueDay } from '../domain/calendar';
import { GLOBAL_DEFAULT_PLAN } from '../domain/plans';
import { subscriptionShape } from '../domain/shapes';
import { type PlanRecord, planRecordSchema, type SubscriptionRecord } from '../repository/records';
import { subscriptionFromItem } from '../repository/subscription-repository';

/**
 * Subscriptions in the search engine (tables `subscription_search`, `subscription_plan_search`).
 *
 * A subscription's document is what `GET /subscriptions/{uuid}` returns at the time of the
 * search. Three of its fields move with the clock without a write (`subscription_status`,
 * `next_due_date`, `ended_at`: a suspension starts and ends on its days, a planned end finishes
 * the subscription) and one with another item (`subscription_plan.name`, when the plan is
 * renamed). So the row keeps the rest of the document and the instants those follow from, and
 * the search derives the four in SQL at the search's time, as `statusAt` and `subscriptionShape`
 * do: the same answer as GET, and no rewrite of rows when a day passes.
 */
const COLUMNS: SqlSearchSource['columns'] = {
  uuid: { column: 'uuid', kind: 'text' },
  organisation_uuid: { column: 'organisation_uuid', kind: 'text' },
  account_uuid: { column: 'account_uuid', kind: 'text' },
  created: { column: 'created', kind: 'number' },
  subscription_status: { column: 'status', kind: 'text' },
  amount: { column: 'amount', kind: 'number' },
  currency: { column: 'currency', kind: 'text' },
  payment_method: { column: 'payment_method', kind: 'text' },
};

/** The subscriptions as GET would show them at `at` (Unix seconds). */
export function subscriptionsAt(at: number): SqlSearchSource {
  const time = sql`${String(at)}::bigint`;
  return {
    columns: COLUMNS,
    from: sql`(SELECT s.organisation_uuid, s.uuid, s.account_uuid, s.created, st.status, s.amount, s.currency,
        s.payment_method,
        s.document
          || jsonb_build_object(
               'subscription_status', st.status,
               'subscription_plan', jsonb_build_object('uuid', s.plan_uuid, 'name', COALESCE(p.name, ${GLOBAL_DEFAULT_PLAN.name})))
          || CASE WHEN st.status IN ('active', 'suspended') AND s.next_due_date IS NOT NULL
                  THEN jsonb_build_object('next_due_date', s.next_due_date) ELSE '{}'::jsonb END
          || CASE WHEN s.ended_at IS NOT NULL THEN jsonb_build_object('ended_at', s.ended_at)
                  WHEN st.status = 'finished' AND s.ends_at IS NOT NULL THEN jsonb_build_object('ended_at', s.ends_at)
                  ELSE '{}'::jsonb END AS document
      FROM subscription_search AS s
      LEFT JOIN subscription_plan_search AS p ON p.uuid = s.plan_uuid
      CROSS JOIN LATERAL (SELECT CASE
          WHEN s.stored_status IN ('cancelled', 'finished') THEN s.stored_status
          WHEN s.ends_at IS NOT NULL AND ${time} >= s.ends_at THEN 'finished'
          WHEN s.stored_status = 'active' AND s.suspended_from IS NOT NULL AND ${time} >= s.suspended_from
               AND (s.suspended_until IS NULL OR ${time} < s.suspended_until) THEN 'suspended'
          ELSE s.stored_status END COLLATE "C" AS status) AS st)`,
  };
}

export function searchSubscriptionRows(caller: Principal, request: SearchRequest, at: number) {
  return inSearchEngine('Subscription search', (db) =>
    runSqlSearch(db, subscriptionsAt(at), grantScope(caller.grants), request),
  );
}

/**
 * The embedded engine's warm-up of subscription searches (the local runtime's `warmUpOnOpen`): a page of a filter
 * on the derived status and the amount, over an organisation with no rows.
 */
export function warmUpSubscriptionSearch(db: SearchDatabase): Promise<unknown> {
  return runSqlSearch(
    db,
    subscriptionsAt(0),
    grantScope([{ organisation_uuid: NO_ROWS_ORGANISATION }]),
    parseSearchRequest({
      query: { $and: [{ $term: { subscription_status: 'active' } }, { $range: { amount: { gte: 100 } } }] },
      size: 50,
    }),
  );
}

/** The fields derived at search time, left out of the stored document. */
const DERIVED = ['subscription_status', 'subscription_plan', 'next_due_date', 'ended_at'] as const;

function storedDocument(s: SubscriptionRecord): Record<string, unknown> {
  const document: Record<string, unknown> = subscriptionShape(s, undefined, 0);
  for (const field of DERIVED) delete document[field];
  return storableDocument(document) as Record<string, unknown>;
}

const midnightOf = (s: SubscriptionRecord, day: string | undefined) =>
  day === undefined ? null : String(localMidnight(day, s.timezone));

async function upsertSubscriptions(subscriptions: readonly SubscriptionRecord[]): Promise<void> {
  const rows = subscriptions.map(
    (s) => sql`(${s.organisation_uuid}, ${s.uuid}, ${s.account_uuid}, ${s.version}, ${String(s.created)}::bigint,
      ${s.plan_uuid}, ${s.status}, ${midnightOf(s, s.planned_end)}::bigint,
      ${midnightOf(s, s.suspension_start)}::bigint, ${midnightOf(s, s.suspension_end)}::bigint,
      ${midnightOf(s, shownNextDueDay(s))}::bigint, ${s.ended_at === undefined ? null : String(s.ended_at)}::bigint,
      ${String(s.amount)}::bigint, ${s.currency}, ${s.payment_method}, ${JSON.stringify(storedDocument(s))}::jsonb)`,
  );
  await sql`INSERT INTO subscription_search (organisation_uuid, uuid, account_uuid, version, created, plan_uuid,
      stored_status, ends_at, suspended_from, suspended_until, next_due_date, ended_at, amount, currency,
      payment_method, document)
    VALUES ${sql.join(rows)}
    ON CONFLICT (organisation_uuid, uuid) DO UPDATE SET
      account_uuid = EXCLUDED.account_uuid, version = EXCLUDED.version, created = EXCLUDED.created,
      plan_uuid = EXCLUDED.plan_uuid, stored_status = EXCLUDED.stored_status, ends_at = EXCLUDED.ends_at,
      suspended_from = EXCLUDED.suspended_from, suspended_until = EXCLUDED.suspended_until,
      next_due_date = EXCLUDED.next_due_date, ended_at = EXCLUDED.ended_at, amount = EXCLUDED.amount,
      currency = EXCLUDED.currency, payment_method = EXCLUDED.payment_method, document = EXCLUDED.document
    WHERE subscription_search.version < EXCLUDED.version`.execute(searchDb());
}

async function upsertPlans(plans: readonly PlanRecord[]): Promise<void> {
  const rows = plans.map((p) => sql`(${p.uuid}, ${p.organisation_uuid}, ${p.version}, ${storableText(p.name)})`);
  await sql`INSERT INTO subscription_plan_search (uuid, organisation_uuid, version, name)
    VALUES ${sql.join(rows)}
    ON CONFLICT (uuid) DO UPDATE SET
      organisation_uuid = EXCLUDED.organisation_uuid, version = EXCLUDED.version, name = EXCLUDED.name
    WHERE subscription_plan_search.version < EXCLUDED.version`.execute(searchDb());
}

const projectSubscriptions = groupCommit<SubscriptionRecord>({
  write: upsertSubscriptions,
  key: (subscription) => subscription.uuid,
  version: (subscription) => subscription.version,
});

const projectPlans = groupCommit<PlanRecord>({
  write: upsertPlans,
  key: (plan) => plan.uuid,
  version: (plan) => plan.version,
});

export const SUBSCRIPTION_PROJECTION: SearchProjection = {
  name: 'subscriptions',
  entities: ['subscription', 'subscription_plan'],
  tables: ['subscription_search', 'subscription_plan_search'],
  project: async (items) => {
    const subscriptions = itemsOf(['subscription'], items).map(subscriptionFromItem);
    const plans = itemsOf(['subscription_plan'], items).map((item) => planRecordSchema.parse(item));
    await Promise.all([projectSubscriptions(subscriptions), projectPlans(plans)]);
    return subscriptions.length + plans.length;
  },
};
