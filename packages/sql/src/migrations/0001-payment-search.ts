import type { Migration } from './index';

/**
 * Payments as the search language reads them: the document exactly as `GET /payments/{uuid}`
 * returns it (jsonb, for any dotted path), beside typed copies of the fields searches filter, sort
 * and aggregate on most. Every key and index leads with the organisation, so the table can later
 * be sharded by organisation (Aurora Limitless, Citus) without changing a query.
 */
export const m0001PaymentSearch: Migration = {
  version: 1,
  name: 'payment search',
  statements: [
    // The search language's "numeric": a JSON number, or a string of decimal digits with an
    // optional sign and fraction ("1000", "-3.50"); anything else is not numeric (NULL).
    `CREATE OR REPLACE FUNCTION svc_numeric(value jsonb) RETURNS numeric
       LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
         SELECT CASE jsonb_typeof(value)
           WHEN 'number' THEN value::numeric
           WHEN 'string' THEN CASE WHEN (value #>> '{}') ~ '^-?[0-9]+(\\.[0-9]+)?$'
                                   THEN (value #>> '{}')::numeric END
         END
       $fn$`,
    // The same as a double, as the language compares numbers; NULL beyond the doubles' range
    // (such a string is not numeric to the language).
    `CREATE OR REPLACE FUNCTION svc_double(value jsonb) RETURNS float8
       LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
         SELECT CASE WHEN abs(svc_numeric(value)) < 1.7976931348623158e308
                     THEN svc_numeric(value)::float8 END
       $fn$`,
    `CREATE TABLE IF NOT EXISTS payment_search (
       organisation_uuid text COLLATE "C" NOT NULL,
       uuid text COLLATE "C" NOT NULL,
       account_uuid text COLLATE "C" NOT NULL,
       -- The table item's version: a row only ever moves to a newer one.
       version integer NOT NULL,
       created bigint NOT NULL,
       status text COLLATE "C" NOT NULL,
       amount_minor bigint NOT NULL,
       currency text COLLATE "C" NOT NULL,
       payment_method text COLLATE "C" NOT NULL,
       document jsonb NOT NULL,
       PRIMARY KEY (organisation_uuid, uuid)
     )`,
    // Lists and the default sort (newest first), and every "last 30 days" range.
    `CREATE INDEX IF NOT EXISTS payment_search_created
       ON payment_search (organisation_uuid, created DESC, uuid)`,
    // Status filters ("failed payments this month"); their counts read the index alone.
    `CREATE INDEX IF NOT EXISTS payment_search_status
       ON payment_search (organisation_uuid, status, created DESC)
       INCLUDE (amount_minor, payment_method, currency, account_uuid)`,
    // Amount ranges within an organisation.
    `CREATE INDEX IF NOT EXISTS payment_search_amount
       ON payment_search (organisation_uuid, amount_minor)`,
    // Counts and aggregations over a whole organisation read this narrow index, not the rows
    // (index-only scans, once vacuum has marked the pages all-visible).
    `CREATE INDEX IF NOT EXISTS payment_search_facets
       ON payment_search (organisation_uuid, account_uuid)
       INCLUDE (status, payment_method, currency, amount_minor, created)`,
    // Dotted paths into the document (custom_parameters.campaign = "x"): jsonpath `@?` tests.
    `CREATE INDEX IF NOT EXISTS payment_search_document
       ON payment_search USING gin (document jsonb_path_ops)`,
  ],
};
