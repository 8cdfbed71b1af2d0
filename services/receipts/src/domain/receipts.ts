import {
  assertWholeOrganisationGrant,
  ConflictError,
  coversOrganisation,
  logger,
  onWholeOrganisation,
  type Principal,
  readFor,
  ValidationError,
} from '@svc/core';
import { localDateOf } from '@svc/schedule';
import { queryAll, retryOnConflict, StaleVersionError, transactWrite } from '@svc/table';
import {
  organisationYearReceipts,
  RECEIPT,
  RECEIPT_OF,
  type ReceiptRecord,
  supporterReceipts,
} from '../repository/receipt-repository';
import { giftsOfSupporter } from './gifts';
import { issueReceipts, ReplacedMeanwhile, receiptContent, voided, yearBounds } from './issue';
import { COUNTRY_RULES, NO_SETTINGS, requireSettings } from './settings';

export async function getReceipt(principal: Promise<Principal>, uuid: string): Promise<ReceiptRecord> {
  return readFor(principal, RECEIPT.find(uuid), 'Receipt not found', onWholeOrganisation);
}

export interface ReceiptQuery {
  organisation_uuid?: string;
  year?: number;
  supporter_uuid?: string;
  /** Receipts after this number (`<year>-<sequence>`): the next page of an organisation's year. */
  after?: string;
  size?: number;
}

/** Receipts an organisation's list answers at most at once (a Lambda answer holds 6 MB). */
export const MAX_RECEIPTS_PAGE = 500;

/**
 * `GET /receipts`: an organisation's receipts of a year in number order, or a supporter's (every
 * year, or one), voided ones included. Receipts carry a donor's name, address and gifts: every
 * read needs a grant on the whole organisation (a supporter's are filtered to those).
 */
export async function listReceipts(principal: Promise<Principal>, query: ReceiptQuery): Promise<ReceiptRecord[]> {
  const caller = await principal;
  if (query.supporter_uuid) {
    const items = await queryAll({
      index: 'gsi2',
      partition: supporterReceipts(query.supporter_uuid),
      ...(query.year !== undefined ? { sortBeginsWith: `${query.year}#` } : {}),
    });
    return items
      .map(RECEIPT.fromItem)
      .filter(
        (receipt) => query.organisation_uuid === undefined || receipt.organisation_uuid === query.organisation_uuid,
      )
      .filter((receipt) => coversOrganisation(caller, receipt.organisation_uuid));
  }
  if (!query.organisation_uuid || query.year === undefined) {
    throw ValidationError.field(
      'organisation_uuid',
      'error.validation.required',
      'Either supporter_uuid, or organisation_uuid with year',
    );
  }
  assertWholeOrganisationGrant(caller, query.organisation_uuid);
  const afterSequence = query.after === undefined ? 0 : Number(query.after.slice(5));
  const items = await queryAll({
    index: 'gsi1',
    partition: organisationYearReceipts(query.organisation_uuid, query.year),
    sortFrom: String(afterSequence + 1).padStart(10, '0'),
    limit: query.size ?? MAX_RECEIPTS_PAGE,
  });
  return items.map(RECEIPT.fromItem);
}

/**
 * `POST /receipts/{uuid}/void`: by the whole organisation's grant. The supporter's year then has
 * no valid receipt, and the next batch of that year issues a new one with what its gifts are then.
 */
export async function voidReceipt(principal: Promise<Principal>, uuid: string, reason: string | undefined) {
  const receipt = await readFor(principal, RECEIPT.find(uuid), 'Receipt not found', (caller, found) =>
    assertWholeOrganisationGrant(caller, found.organisation_uuid),
  );
  if (receipt.status === 'voided') return receipt;
  return retryOnConflict(async () => {
    const current = (await RECEIPT.find(uuid)) as ReceiptRecord;
    if (current.status === 'voided') return current;
    const id = {
      organisation_uuid: current.organisation_uuid,
      year: current.year,
      supporter_uuid: current.supporter_uuid,
    };
    const of = await RECEIPT_OF.find(id);
    const next = voided(current, reason ?? 'voided_by_organisation');
    await transactWrite([
      RECEIPT.replace(next, current.version),
      ...(of && of.receipt_uuid === current.uuid
        ? [RECEIPT_OF.replace({ ...id, version: of.version + 1 }, of.version)]
        : []),
    ]);
    return next;
  });
}

const sameGifts = (a: ReceiptRecord['gifts'], b: ReceiptRecord['gifts']) =>
  a.length === b.length &&
  a.every(
    (gift, index) => gift.payment_uuid === b[index]?.payment_uuid && gift.amount_minor === b[index]?.amount_minor,
  );

/**
 * After a payment of a supporter changed what it counts for (a refund, a dispute's funds taken or
 * given back, a refund that failed): if the supporter holds a valid receipt for the year the money
 * arrived in and its gifts are no longer what they are now, it is voided and a replacement issued
 * with the next number (in one transaction: never two valid ones, never none in between), or
 * voided alone when nothing receiptable is left. The gifts compared are the receipt's and the
 * changed payment (a gift left off because a refund or dispute took it all comes back when that
 * money does); gifts that merely arrived since are the next batch's business. Safe to run again:
 * a receipt that still matches is left alone.
 */
export async function reconcileAfterPaymentChange(
  organisationUuid: string,
  supporterUuid: string,
  succeededAt: number,
  changedPayment?: string,
) {
  const settings = await requireSettings(organisationUuid).catch((error: unknown) => {
    // No settings: no receipts to keep right. Any other failure is the message's to retry.
    if (error instanceof ConflictError && error.details[0]?.code === NO_SETTINGS) return undefined;
    throw error;
  });
  if (!settings) return 'no_settings';
  const year = Number(localDateOf(succeededAt, COUNTRY_RULES[settings.country].zone).slice(0, 4));
  return retryOnConflict(async () => {
    const id = { organisation_uuid: organisationUuid, year, supporter_uuid: supporterUuid };
    const of = await RECEIPT_OF.find(id);
    if (!of?.receipt_uuid) return 'no_receipt';
    const receipt = await RECEIPT.find(of.receipt_uuid);
    if (receipt?.status !== 'issued') return 'no_receipt';
    const { from, to } = yearBounds(settings, year);
    const content = receiptContent(settings, await giftsOfSupporter(organisationUuid, supporterUuid, from, to));
    const compared = new Set([
      ...receipt.gifts.map((gift) => gift.payment_uuid),
      ...(changedPayment ? [changedPayment] : []),
    ]);
    const gifts = content.gifts.filter((gift) => compared.has(gift.payment_uuid));
    if (sameGifts(gifts, receipt.gifts)) return 'unchanged';
    const total = gifts.reduce((sum, gift) => sum + gift.amount_minor, 0);
    if (total > 0 && total >= settings.min_total) {
      const { issued } = await issueReceipts(settings, year, [
        {
          supporter_uuid: supporterUuid,
          currency: content.currency,
          total,
          gifts,
          replacing: { receipt, receiptOfVersion: of.version },
        },
      ]).catch((error: unknown) => {
        throw error instanceof ReplacedMeanwhile ? new StaleVersionError() : error;
      });
      logger.info('A receipt was replaced after a payment changed', { receipt: receipt.uuid, by: issued[0]?.uuid });
      return 'replaced';
    }
    await transactWrite([
      RECEIPT.replace(voided(receipt, 'nothing_left_to_confirm'), receipt.version),
      RECEIPT_OF.replace({ ...id, version: of.version + 1 }, of.version),
    ]);
    return 'voided';
  });
}
