import { parseSearchRequest, type SearchRequest } from '@svc/search';
import { grantScope, runSqlSearch, type SqlSearchSource, storableDocument } from '@svc/search/sql';
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
import { intendedOf, paymentShape } from '../domain/shapes';
import { type PaymentRecord, paymentFromItem } from '../repository/payment-repository';

/**
 * Payments in the search engine (PostgreSQL, table `payment_search`, see @svc/sql's migrations):
 * one row per payment, the document as `GET /payments/{uuid}` returns it, beside typed columns.
 * Filled as every projection is (`SearchProjection` in @svc/sql): right after each write, and
 * from the table's stream.
 */
export const PAYMENT_SEARCH: SqlSearchSource = {
  from: sql.table('payment_search'),
  columns: {
    uuid: { column: 'uuid', kind: 'text' },
    organisation_uuid: { column: 'organisation_uuid', kind: 'text' },
    account_uuid: { column: 'account_uuid', kind: 'text' },
    created: { column: 'created', kind: 'number' },
    status: { column: 'status', kind: 'text' },
    'amount.value': { column: 'amount_minor', kind: 'digits' },
    'intended_amount.value': { column: 'intended_amount_minor', kind: 'digits' },
    'fee_cover_amount.value': { column: 'fee_cover_minor', kind: 'digits' },
    'amount.currency': { column: 'currency', kind: 'text' },
    payment_method: { column: 'payment_method', kind: 'text' },
    // succeeded_at and supporter_uuid have columns too (for SQL that reads the table directly,
    // such as receipts), but they are often absent: the search language reads them from the
    // document, where "absent" means what it says (a typed column here is one always present).
  },
};

/**
 * Upserts the payments' rows in group commits (one statement for the calls that arrive while one
 * runs); of one payment's versions only the newest lands.
 */
export const projectPayments = groupCommit<PaymentRecord>({
  write: upsertStatement,
  key: (payment) => payment.uuid,
  version: (payment) => payment.version,
});

/** One row per payment; `intended_amount_minor` is computed by the engine (amount − cover, 0003). */
async function upsertStatement(payments: readonly PaymentRecord[]): Promise<void> {
  const bigint = (value: number | undefined) =>
    value === undefined ? sql`NULL::bigint` : sql`${String(value)}::bigint`;
  const rows = payments.map(
    (p) => sql`(${p.organisation_uuid}, ${p.uuid}, ${p.account_uuid}, ${p.version}, ${String(p.created)}::bigint,
      ${p.status}, ${String(p.amount_minor)}::bigint, ${String(p.amount_minor - intendedOf(p))}::bigint,
      ${p.currency}, ${p.payment_method},
      ${p.supporter_uuid ?? null}, ${bigint(p.succeeded_at)},
      ${JSON.stringify(storableDocument(paymentShape(p)))}::jsonb)`,
  );
  await sql`INSERT INTO payment_search
      (organisation_uuid, uuid, account_uuid, version, created, status, amount_minor, fee_cover_minor,
       currency, payment_method, supporter_uuid, succeeded_at, document)
    VALUES ${sql.join(rows)}
    ON CONFLICT (organisation_uuid, uuid) DO UPDATE SET
      account_uuid = EXCLUDED.account_uuid, version = EXCLUDED.version, created = EXCLUDED.created,
      status = EXCLUDED.status, amount_minor = EXCLUDED.amount_minor, fee_cover_minor = EXCLUDED.fee_cover_minor,
      currency = EXCLUDED.currency, payment_method = EXCLUDED.payment_method,
      supporter_uuid = EXCLUDED.supporter_uuid, succeeded_at = EXCLUDED.succeeded_at, document = EXCLUDED.document
    WHERE payment_search.version < EXCLUDED.version`.execute(searchDb());
}

/** The payments among table items (a transaction's puts, a stream batch's new images). */
export function paymentsAmong(items: ReadonlyArray<Record<string, unknown>>): PaymentRecord[] {
  return itemsOf(['payment'], items).map(paymentFromItem);
}

export const PAYMENT_PROJECTION: SearchProjection = {
  name: 'payments',
  entities: ['payment'],
  tables: ['payment_search'],
  project: async (items) => {
    const payments = paymentsAmong(items);
    await projectPayments(payments);
    return payments.length;
  },
};

/** The search over the caller's grants (503 when the engine is unavailable). */
export function searchPaymentRows(grants: Parameters<typeof grantScope>[0], request: SearchRequest) {
  return inSearchEngine('Payment search', (db) => runSqlSearch(db, PAYMENT_SEARCH, grantScope(grants), request));
}

/**
 * The embedded engine's warm-up of payment searches (the local runtime's `warmUpOnOpen`): the request's parsing,
 * the compiled SQL and the engine's plans of the usual shapes (a page of a filter on the typed
 * columns and a custom parameter; term and sum aggregations) over an organisation with no rows.
 */
const WARM_UP_REQUESTS = [
  {
    query: {
      $and: [
        { $term: { status: 'succeeded' } },
        { $range: { 'amount.value': { gte: 100, lte: 10_000 } } },
        { $range: { created: { gte: 0 } } },
        { $not: { $term: { 'custom_parameters.campaign': 'none' } } },
      ],
    },
    size: 50,
  },
  {
    query: { $match: {} },
    size: 0,
    aggs: { methods: { type: 'term', field: 'payment_method' }, total: { type: 'sum', field: 'amount.value' } },
  },
];

export async function warmUpPaymentSearch(db: SearchDatabase): Promise<void> {
  for (const request of WARM_UP_REQUESTS) {
    await runSqlSearch(
      db,
      PAYMENT_SEARCH,
      grantScope([{ organisation_uuid: NO_ROWS_ORGANISATION }]),
      parseSearchRequest(request),
    );
  }
}
