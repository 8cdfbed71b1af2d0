import type { Migration } from './index';

/**
 * Subscriptions and organisations beside payments, and the engine's record of which projections
 * a rebuild has filled (a projection added by a release is filled once, on its own).
 *
 * A subscription's status moves with the clock without a write (a suspension starts and ends on
 * its days, a planned end finishes it), so its row keeps the stored status and those instants,
 * and the search derives the status, `next_due_date` and `ended_at` at the time it runs. Plan
 * names live in their own rows and are joined at search time, so renaming a plan renames it in
 * every subscription's document at once. An organisation's document lists all its accounts; a
 * caller granted single accounts sees only those, filtered at search time.
 */
export const m0002SubscriptionOrganisationSearch: Migration = {
  version: 2,
  name: 'subscription and organisation search',
  statements: [
    `CREATE TABLE IF NOT EXISTS search_projection_state (
       name text PRIMARY KEY,
       filled_at timestamptz NOT NULL DEFAULT now()
     )`,
    // An engine filled with payments before this version keeps them.
    `INSERT INTO search_projection_state (name)
       SELECT 'payments' WHERE EXISTS (SELECT 1 FROM payment_search)
       ON CONFLICT (name) DO NOTHING`,
    `CREATE TABLE IF NOT EXISTS subscription_search (
       organisation_uuid text COLLATE "C" NOT NULL,
       uuid text COLLATE "C" NOT NULL,
       account_uuid text COLLATE "C" NOT NULL,
       version integer NOT NULL,
       created bigint NOT NULL,
       plan_uuid text COLLATE "C" NOT NULL,
       -- As stored: pending, active, cancelled or finished.
       stored_status text COLLATE "C" NOT NULL,
       -- Local midnights (Unix seconds) of the planned end and the suspension's first and last
       -- days, from which the status at a given time follows.
       ends_at bigint,
       suspended_from bigint,
       suspended_until bigint,
       -- next_due_date while live; ended_at once ended by a call.
       next_due_date bigint,
       ended_at bigint,
       amount bigint NOT NULL,
       currency text COLLATE "C" NOT NULL,
       payment_method text COLLATE "C" NOT NULL,
       -- The document as GET returns it, without the fields derived at search time.
       document jsonb NOT NULL,
       PRIMARY KEY (organisation_uuid, uuid)
     )`,
    // Lists and the default sort (newest first).
    `CREATE INDEX IF NOT EXISTS subscription_search_created
       ON subscription_search (organisation_uuid, created DESC, uuid)`,
    // Status filters: the stored status narrows the rows the derived one is computed for.
    `CREATE INDEX IF NOT EXISTS subscription_search_status
       ON subscription_search (organisation_uuid, stored_status)`,
    // Dotted paths into the stored document (custom_parameters, supporter_uuid, …).
    `CREATE INDEX IF NOT EXISTS subscription_search_document
       ON subscription_search USING gin (document jsonb_path_ops)`,
    `CREATE TABLE IF NOT EXISTS subscription_plan_search (
       uuid text COLLATE "C" PRIMARY KEY,
       organisation_uuid text COLLATE "C" NOT NULL,
       version integer NOT NULL,
       name text NOT NULL
     )`,
    `CREATE TABLE IF NOT EXISTS organisation_search (
       organisation_uuid text COLLATE "C" NOT NULL,
       uuid text COLLATE "C" NOT NULL,
       version integer NOT NULL,
       created bigint NOT NULL,
       document jsonb NOT NULL,
       PRIMARY KEY (organisation_uuid, uuid)
     )`,
  ],
};
