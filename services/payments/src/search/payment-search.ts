import { logger, ServiceUnavailableError } from '@svc/core';
import type { SearchRequest } from '@svc/search';
import { grantScope, runSqlSearch, type SqlSearchSource, storableText } from '@svc/search';
import { searchDb } from '@svc/sql';
import { sql } from 'kysely';
import { paymentShape } from '../domain/shapes';
import { type PaymentRecord, paymentFromItem } from '../repository/payment-repository';

/**
 * Payments in the search engine (PostgreSQL, table `payment_search`, see @svc/sql's migrations):
 * one row per payment, the document as `GET /payments/{uuid}` returns it, beside typed columns.
 *
 * Rows follow the table two ways, both guarded by the item's version so a row never moves
 * backwards, whatever arrives twice, late or out of order:
 * - right after a write commits (`onItemsWritten`), so a payment answered 201 is in the next
 *   search (read-your-writes);
 * - from the table's stream (the projector), which retries until the row is written: the
 *   guarantee when the first way failed (the engine down, the process gone).
 */
export const PAYMENT_SEARCH: SqlSearchSource = {
  table: 'payment_search',
  columns: {
    uuid: { column: 'uuid', kind: 'text' },
    organisation_uuid: { column: 'organisation_uuid', kind: 'text' },
    account_uuid: { column: 'account_uuid', kind: 'text' },
    created: { column: 'created', kind: 'number' },
    status: { column: 'status', kind: 'text' },
    'amount.value': { column: 'amount_minor', kind: 'digits' },
    'amount.currency': { column: 'currency', kind: 'text' },
    payment_method: { column: 'payment_method', kind: 'text' },
  },
};

/** PostgreSQL text holds no U+0000: stored as U+FFFD, keys and values (queries map theirs alike). */
function storable(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storable);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [storableText(key), storable(inner)]));
  }
  return value;
}

/**
 * Upserts the payments' rows; of one payment's versions only the newest lands. Calls that arrive
 * while a statement runs are coalesced into the next one (group commit): under load one
 * statement carries many payments, which costs the engine far less than one statement each.
 * Every caller is answered when the statement holding its rows has run.
 */
export function projectPayments(payments: readonly PaymentRecord[]): Promise<void> {
  if (payments.length === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    waiting.push({ payments, resolve, reject });
    if (!draining) draining = drain();
  });
}

interface Waiting {
  payments: readonly PaymentRecord[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

const waiting: Waiting[] = [];
let draining: Promise<void> | undefined;

/** Rows in one statement at most: well inside PostgreSQL's bind parameters and the Data API's request size. */
const MAX_ROWS_PER_STATEMENT = 200;

async function drain(): Promise<void> {
  try {
    while (waiting.length > 0) {
      const batch = takeBatch();
      try {
        await upsertRows(batch.flatMap((entry) => entry.payments));
        for (const entry of batch) entry.resolve();
      } catch (error) {
        // One caller's bad row must not fail the others': each goes again on its own.
        if (batch.length === 1) batch[0]?.reject(error);
        else for (const entry of batch) await upsertRows(entry.payments).then(entry.resolve, entry.reject);
      }
    }
  } finally {
    draining = undefined;
  }
}

/** The waiting callers whose rows fit one statement (always at least one caller). */
function takeBatch(): Waiting[] {
  let rows = 0;
  let count = 0;
  while (count < waiting.length) {
    const size = waiting[count]?.payments.length ?? 0;
    if (count > 0 && rows + size > MAX_ROWS_PER_STATEMENT) break;
    rows += size;
    count += 1;
  }
  return waiting.splice(0, count);
}

async function upsertRows(payments: readonly PaymentRecord[]): Promise<void> {
  const newest = new Map<string, PaymentRecord>();
  for (const payment of payments) {
    const known = newest.get(payment.uuid);
    if (!known || known.version < payment.version) newest.set(payment.uuid, payment);
  }
  const all = [...newest.values()];
  for (let start = 0; start < all.length; start += MAX_ROWS_PER_STATEMENT) {
    await upsertStatement(all.slice(start, start + MAX_ROWS_PER_STATEMENT));
  }
}

async function upsertStatement(payments: readonly PaymentRecord[]): Promise<void> {
  const rows = payments.map(
    (p) => sql`(${p.organisation_uuid}, ${p.uuid}, ${p.account_uuid}, ${p.version}, ${String(p.created)}::bigint,
      ${p.status}, ${String(p.amount_minor)}::bigint, ${p.currency}, ${p.payment_method},
      ${JSON.stringify(storable(paymentShape(p)))}::jsonb)`,
  );
  await sql`INSERT INTO payment_search
      (organisation_uuid, uuid, account_uuid, version, created, status, amount_minor, currency, payment_method, document)
    VALUES ${sql.join(rows)}
    ON CONFLICT (organisation_uuid, uuid) DO UPDATE SET
      account_uuid = EXCLUDED.account_uuid, version = EXCLUDED.version, created = EXCLUDED.created,
      status = EXCLUDED.status, amount_minor = EXCLUDED.amount_minor, currency = EXCLUDED.currency,
      payment_method = EXCLUDED.payment_method, document = EXCLUDED.document
    WHERE payment_search.version < EXCLUDED.version`.execute(searchDb());
}

/** The payments among table items (a transaction's puts, a stream batch's new images). */
export function paymentsAmong(items: ReadonlyArray<Record<string, unknown>>): PaymentRecord[] {
  return items.filter((item) => item.entity === 'payment').map(paymentFromItem);
}

/**
 * The search over the caller's grants. The engine down is a 503 (nothing changed; payments are
 * still taken, and the stream fills the rows in once it is back).
 */
export async function searchPaymentRows(grants: Parameters<typeof grantScope>[0], request: SearchRequest) {
  try {
    return await runSqlSearch(searchDb(), PAYMENT_SEARCH, grantScope(grants), request);
  } catch (error) {
    logger.error('Payment search failed in the search engine', { error });
    throw new ServiceUnavailableError('Search is unavailable right now; try again shortly', { cause: error });
  }
}

/** Whether the engine holds no payment row at all (a new engine, or one never filled). */
export async function searchIsEmpty(): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM payment_search) AS found`.execute(
    searchDb(),
  );
  return !rows[0]?.found;
}
