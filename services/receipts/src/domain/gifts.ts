import { inSearchEngine } from '@svc/sql';
import { sql } from 'kysely';

/**
 * The gifts a receipt or a Gift Aid claim confirms, read from the payments' rows in the search
 * engine (payment_search: one row per payment, the document as GET /payments/{uuid} answers it).
 *
 * A gift is a succeeded live payment of a supporter, dated by the day its money arrived
 * (`succeeded_at`, the moment the payment became succeeded). What counts of it is its amount (the
 * whole total the donor paid, fees they chose to cover included) less what was refunded (pending
 * refunds included: that money is on its way back) and less the amount of a lost dispute (a
 * returned debit is one). Test-mode payments never count.
 */
export interface Gift {
  payment_uuid: string;
  supporter_uuid: string;
  organisation_uuid: string;
  currency: string;
  /** Unix seconds: when the payment succeeded. */
  succeeded_at: number;
  /** The whole total the donor paid, in minor units. */
  amount_minor: number;
  /** What of it the organisation keeps: less refunds and withdrawn disputed funds. */
  net_minor: number;
}

/** Supporters read per page: their gifts of the period are one statement. */
export const SUPPORTERS_PER_PAGE = 200;

interface GiftRow {
  uuid: string;
  supporter_uuid: string;
  organisation_uuid: string;
  currency: string;
  succeeded_at: string | number;
  amount_minor: string | number;
  refunded: string | null;
  dispute_status: string | null;
  dispute_minor: string | null;
}

/** The part of a gift the organisation keeps (never below zero). */
export function netOf(amount: number, refunded: number, disputeLost: number): number {
  return Math.max(0, amount - refunded - disputeLost);
}

function giftOf(row: GiftRow): Gift {
  const amount = Number(row.amount_minor);
  // Only a lost dispute takes money off (a SEPA debit returned is one, payments' provider-updates):
  // an open one may still be won, and a receipt is replaced when it ends.
  const lost = row.dispute_status === 'lost' ? Number(row.dispute_minor ?? 0) : 0;
  return {
    payment_uuid: row.uuid,
    supporter_uuid: row.supporter_uuid,
    organisation_uuid: row.organisation_uuid,
    currency: row.currency,
    succeeded_at: Number(row.succeeded_at),
    amount_minor: amount,
    net_minor: netOf(amount, Number(row.refunded ?? 0), lost),
  };
}

/** The conditions every gift query shares: succeeded, live, of a supporter, in [from, to). */
function giftConditions(organisationUuid: string, from: number, to: number) {
  return sql`organisation_uuid = ${organisationUuid} AND status = 'succeeded' AND supporter_uuid IS NOT NULL
    AND succeeded_at >= ${String(from)}::bigint AND succeeded_at < ${String(to)}::bigint
    AND COALESCE((document->>'test_mode')::boolean, false) = false`;
}

const GIFT_COLUMNS = sql`uuid, supporter_uuid, organisation_uuid, currency, succeeded_at, amount_minor,
  document->'refunded_amount'->>'value' AS refunded, document->'dispute'->>'status' AS dispute_status,
  document->'dispute'->'amount'->>'value' AS dispute_minor`;

/**
 * The organisation's gifts of [from, to) (Unix seconds), a page of whole supporters at a time, in
 * supporter order and, within a supporter, by the day the money arrived. Memory stays bounded by
 * one page whatever the number of supporters; `after` resumes after a supporter (a batch's cursor).
 */
export async function* giftsOfOrganisation(
  organisationUuid: string,
  from: number,
  to: number,
  after?: string,
  supportersPerPage = SUPPORTERS_PER_PAGE,
): AsyncGenerator<Gift[]> {
  let cursor = after ?? '';
  for (;;) {
    const page = await inSearchEngine('Gifts of an organisation', async (db) => {
      const supporters = await sql<{ supporter_uuid: string }>`SELECT DISTINCT supporter_uuid FROM payment_search
        WHERE ${giftConditions(organisationUuid, from, to)} AND supporter_uuid > ${cursor}
        ORDER BY supporter_uuid LIMIT ${supportersPerPage}`.execute(db);
      const uuids = supporters.rows.map((row) => row.supporter_uuid);
      if (uuids.length === 0) return [];
      const rows = await sql<GiftRow>`SELECT ${GIFT_COLUMNS} FROM payment_search
        WHERE ${giftConditions(organisationUuid, from, to)} AND supporter_uuid IN (${sql.join(uuids)})
        ORDER BY supporter_uuid, succeeded_at, uuid`.execute(db);
      return rows.rows.map(giftOf);
    });
    if (page.length === 0) return;
    yield page;
    cursor = page[page.length - 1]?.supporter_uuid ?? cursor;
  }
}

/** One supporter's gifts to an organisation in [from, to): what a receipt is recomputed from. */
export function giftsOfSupporter(organisationUuid: string, supporterUuid: string, from: number, to: number) {
  return inSearchEngine('Gifts of a supporter', async (db) => {
    const rows = await sql<GiftRow>`SELECT ${GIFT_COLUMNS} FROM payment_search
      WHERE ${giftConditions(organisationUuid, from, to)} AND supporter_uuid = ${supporterUuid}
      ORDER BY succeeded_at, uuid`.execute(db);
    return rows.rows.map(giftOf);
  });
}

/** Some supporters' gifts to an organisation in [from, to), in supporter order (one statement). */
export function giftsOfSupporters(
  organisationUuid: string,
  supporterUuids: readonly string[],
  from: number,
  to: number,
) {
  if (supporterUuids.length === 0) return Promise.resolve([]);
  return inSearchEngine('Gifts of supporters', async (db) => {
    const rows = await sql<GiftRow>`SELECT ${GIFT_COLUMNS} FROM payment_search
      WHERE ${giftConditions(organisationUuid, from, to)} AND supporter_uuid IN (${sql.join([...supporterUuids])})
      ORDER BY supporter_uuid, succeeded_at, uuid`.execute(db);
    return rows.rows.map(giftOf);
  });
}

/** Groups a page of gifts (in supporter order) by supporter. */
export function bySupporter(gifts: readonly Gift[]): Gift[][] {
  const groups: Gift[][] = [];
  for (const gift of gifts) {
    const last = groups[groups.length - 1];
    if (last && last[0]?.supporter_uuid === gift.supporter_uuid) last.push(gift);
    else groups.push([gift]);
  }
  return groups;
}

/** The version of a payment's row in the search engine (undefined: no row yet). */
export function searchedPaymentVersion(organisationUuid: string, paymentUuid: string) {
  return inSearchEngine('A payment’s search row', async (db) => {
    const rows = await sql<{ version: string | number }>`SELECT version FROM payment_search
      WHERE organisation_uuid = ${organisationUuid} AND uuid = ${paymentUuid}`.execute(db);
    const version = rows.rows[0]?.version;
    return version === undefined ? undefined : Number(version);
  });
}
