import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  assertWholeOrganisationGrant,
  logger,
  NotFoundError,
  newResourceUuid,
  now,
  type Principal,
  readFor,
  sdkClient,
  ValidationError,
} from '@svc/core';
import { findOrganisation } from '@svc/organisations';
import { localDateOf } from '@svc/schedule';
import { retryOnConflict, transactWrite } from '@svc/table';
import * as z from 'zod';
import {
  type BatchRecord,
  RECEIPT,
  RECEIPT_BATCH,
  RECEIPT_OF,
  type ReceiptRecord,
  type ReceiptSettingsRecord,
} from '../repository/receipt-repository';
import { bySupporter, giftsOfOrganisation, giftsOfSupporters, SUPPORTERS_PER_PAGE } from './gifts';
import { issueReceipts, type ReceiptDraft, receiptContent, yearBounds } from './issue';
import { mailReceipts } from './mail';
import { reconcileAfterPaymentChange } from './receipts';
import { COUNTRY_RULES, requireSettings } from './settings';

/**
 * Receipt batches: `POST /receipt-batches` writes the batch and puts one message on the receipts
 * queue; each message is one page of supporters (their gifts of the year read in one statement,
 * their receipts issued, the batch's cursor and counts moved on) and sends the message of the
 * next page. Memory holds one page whatever the batch's size. A worker that dies anywhere leaves
 * its message to come back: the page is read again from the batch's cursor, and a supporter
 * whose receipt was already issued is left out by its RECEIPT_OF item, so nothing is issued
 * twice and nothing is skipped.
 */
export const batchInput = z.strictObject({
  organisation_uuid: z.uuid(),
  year: z.number().int().min(2000).max(2100),
  send_email: z.boolean().optional(),
});
export type BatchInput = z.infer<typeof batchInput>;

export const receiptsMessageSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('batch'), batch_uuid: z.string() }),
  z.strictObject({ type: z.literal('payment'), payment_uuid: z.string() }),
]);
export type ReceiptsMessage = z.infer<typeof receiptsMessageSchema>;

let queueClient: SQSClient | undefined;

export function resetReceiptsQueueClient(): void {
  queueClient = undefined;
}

export async function sendReceiptsMessage(message: ReceiptsMessage): Promise<void> {
  const url = process.env.SVC_RECEIPTS_QUEUE_URL;
  if (!url) throw new Error('SVC_RECEIPTS_QUEUE_URL is not set');
  queueClient ??= sdkClient(new SQSClient({}));
  await queueClient.send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(message) }));
}

const EMPTY_COUNTS: BatchRecord['counts'] = {
  supporters: 0,
  issued: 0,
  below_min_total: 0,
  already_issued: 0,
  emailed: 0,
  without_email: 0,
  mail_failed: 0,
};

/** POST: the whole organisation's grant; the year must be over in the country's calendar. */
export async function startBatch(principal: Promise<Principal>, input: BatchInput): Promise<BatchRecord> {
  await readFor(principal, findOrganisation(input.organisation_uuid), 'Organisation not found', (caller, found) =>
    assertWholeOrganisationGrant(caller, found.uuid),
  );
  const settings = await requireSettings(input.organisation_uuid);
  const today = localDateOf(now(), COUNTRY_RULES[settings.country].zone);
  if (input.year >= Number(today.slice(0, 4))) {
    throw ValidationError.field('year', 'error.receipts.year_not_over', 'Receipts are issued for a year that is over');
  }
  const batch: BatchRecord = {
    uuid: newResourceUuid('receipt_batch'),
    organisation_uuid: input.organisation_uuid,
    year: input.year,
    send_email: input.send_email ?? false,
    status: 'queued',
    counts: { ...EMPTY_COUNTS },
    created: now(),
    updated: now(),
    version: 1,
  };
  await transactWrite([RECEIPT_BATCH.create(batch)]);
  await sendReceiptsMessage({ type: 'batch', batch_uuid: batch.uuid });
  return batch;
}

export async function getBatch(principal: Promise<Principal>, uuid: string): Promise<BatchRecord> {
  return readFor(principal, RECEIPT_BATCH.find(uuid), 'Receipt batch not found', (caller, found) =>
    assertWholeOrganisationGrant(caller, found.organisation_uuid),
  );
}

/** One page of a batch; answers whether the batch goes on (its next message was sent). */
export async function runBatchPage(batchUuid: string, supportersPerPage = SUPPORTERS_PER_PAGE): Promise<boolean> {
  const batch = await RECEIPT_BATCH.find(batchUuid);
  if (!batch) throw new NotFoundError(`Receipt batch ${batchUuid} not found`);
  if (batch.status === 'completed') return false;
  const settings = await requireSettings(batch.organisation_uuid);
  const { from, to } = yearBounds(settings, batch.year);
  const pages = giftsOfOrganisation(batch.organisation_uuid, from, to, batch.cursor, supportersPerPage);
  const page = (await pages.next()).value ?? [];
  await pages.return(undefined);
  const groups = bySupporter(page);
  const drafts: ReceiptDraft[] = [];
  let belowMin = 0;
  for (const gifts of groups) {
    const content = receiptContent(settings, gifts);
    const supporter = gifts[0]?.supporter_uuid as string;
    if (content.receiptable) {
      drafts.push({
        supporter_uuid: supporter,
        currency: content.currency,
        total: content.total,
        gifts: content.gifts,
      });
    } else belowMin += 1;
  }
  const { issued, alreadyIssued } = await issueReceipts(settings, batch.year, drafts, batch.uuid);
  // A refund handled while this page was read and issued found no receipt to replace yet: the
  // page's gifts are read again once its receipts are written, and any that moved are replaced.
  await recheckIssued(settings, batch.year, issued);
  // Receipts of this very batch issued by an earlier try of the page (which died before mailing)
  // are mailed too: a mail's id is its receipt's, so none goes twice.
  const mailable = batch.send_email ? [...issued, ...(await ownEarlierReceipts(batch, alreadyIssued))] : [];
  const mailed = batch.send_email
    ? await mailReceipts(settings, mailable)
    : { emailed: 0, without_email: 0, mail_failed: 0 };
  const cursor = groups[groups.length - 1]?.[0]?.supporter_uuid;
  const done = groups.length === 0;
  const moved = await retryOnConflict(async () => {
    const current = (await RECEIPT_BATCH.find(batchUuid)) as BatchRecord;
    // Another message of this batch took the page first (SQS delivers at least once): its counts
    // and its next message stand, this one ends here.
    if (current.status === 'completed' || current.cursor !== batch.cursor) return false;
    const counts = { ...current.counts };
    counts.supporters += groups.length;
    counts.issued += issued.length;
    counts.below_min_total += belowMin;
    counts.already_issued += alreadyIssued.length;
    counts.emailed += mailed.emailed;
    counts.without_email += mailed.without_email;
    counts.mail_failed = (counts.mail_failed ?? 0) + mailed.mail_failed;
    const next: BatchRecord = {
      ...current,
      status: done ? 'completed' : 'running',
      ...(cursor ? { cursor } : {}),
      counts,
      updated: now(),
      ...(done ? { completed: now() } : {}),
      version: current.version + 1,
    };
    await transactWrite([RECEIPT_BATCH.replace(next, current.version)]);
    return true;
  });
  if (!moved) return false;
  if (done) {
    logger.info('A receipt batch is complete', { batch: batchUuid });
    return false;
  }
  await sendReceiptsMessage({ type: 'batch', batch_uuid: batchUuid });
  return true;
}

/** The page's receipts whose gifts changed between the read and the write, replaced now. */
async function recheckIssued(settings: ReceiptSettingsRecord, year: number, issued: readonly ReceiptRecord[]) {
  if (issued.length === 0) return;
  const { from, to } = yearBounds(settings, year);
  const now = await giftsOfSupporters(
    settings.organisation_uuid,
    issued.map((receipt) => receipt.supporter_uuid),
    from,
    to,
  );
  const bySupporterNow = new Map(bySupporter(now).map((gifts) => [gifts[0]?.supporter_uuid as string, gifts]));
  for (const receipt of issued) {
    const content = receiptContent(settings, bySupporterNow.get(receipt.supporter_uuid) ?? []);
    const issuedGifts = new Map(receipt.gifts.map((gift) => [gift.payment_uuid, gift.amount_minor]));
    const changed =
      content.gifts.filter((gift) => issuedGifts.has(gift.payment_uuid)).length !== receipt.gifts.length ||
      content.gifts.some(
        (gift) => issuedGifts.has(gift.payment_uuid) && issuedGifts.get(gift.payment_uuid) !== gift.amount_minor,
      );
    if (changed) {
      await reconcileAfterPaymentChange(settings.organisation_uuid, receipt.supporter_uuid, from);
    }
  }
}

/** Of the supporters found already issued, the receipts this batch itself issued (an earlier try). */
async function ownEarlierReceipts(batch: BatchRecord, supporters: readonly string[]): Promise<ReceiptRecord[]> {
  const found = await Promise.all(
    supporters.map(async (supporter) => {
      const of = await RECEIPT_OF.find({
        organisation_uuid: batch.organisation_uuid,
        year: batch.year,
        supporter_uuid: supporter,
      });
      return of?.receipt_uuid ? RECEIPT.find(of.receipt_uuid) : undefined;
    }),
  );
  return found.filter(
    (receipt): receipt is ReceiptRecord => receipt?.batch_uuid === batch.uuid && receipt.status === 'issued',
  );
}

export type IssuedReceipts = readonly ReceiptRecord[];
