import { newResourceUuid, now } from '@svc/core';
import { newEvent } from '@svc/events';
import { localDateOf, localMidnight } from '@svc/schedule';
import { type GuardedWrite, retryOnConflict, StaleVersionError, transactWrite } from '@svc/table';
import {
  RECEIPT,
  RECEIPT_OF,
  RECEIPT_SEQUENCE,
  type ReceiptRecord,
  type ReceiptSettingsRecord,
  type SequenceId,
} from '../repository/receipt-repository';
import type { Gift } from './gifts';
import { COUNTRY_RULES } from './settings';

/**
 * Issuing receipts: numbers in sequence per organisation and year without gaps, one valid receipt
 * per supporter, organisation and year.
 *
 * Receipts are written in transactions of up to ISSUE_CHUNK: the sequence item moved from the
 * number it was read at to that number plus the receipts written (a condition on the value read,
 * so a concurrent batch that moved it first makes this one read again), each receipt created, and
 * each supporter's `RECEIPT_OF` item filled only where it holds no valid receipt. Numbers are
 * given only by transactions that commit, so there is never a gap; a supporter whose receipt
 * another batch issued meanwhile fails the transaction on its `RECEIPT_OF` item and is left out
 * of the next try.
 */
export const ISSUE_CHUNK = 32;

/** The year's bounds in Unix seconds, in the country's calendar. */
export function yearBounds(settings: Pick<ReceiptSettingsRecord, 'country'>, year: number) {
  const { zone } = COUNTRY_RULES[settings.country];
  return { from: localMidnight(`${year}-01-01`, zone), to: localMidnight(`${year + 1}-01-01`, zone) };
}

/** What a supporter's gifts of the year come to: the gifts in the country's currency with something left. */
export function receiptContent(settings: ReceiptSettingsRecord, gifts: readonly Gift[]) {
  const { currency, zone } = COUNTRY_RULES[settings.country];
  const counted = gifts
    .filter((gift) => gift.currency === currency && gift.net_minor > 0)
    .map((gift) => ({
      payment_uuid: gift.payment_uuid,
      date: localDateOf(gift.succeeded_at, zone),
      amount_minor: gift.net_minor,
    }));
  const total = counted.reduce((sum, gift) => sum + gift.amount_minor, 0);
  return { currency, gifts: counted, total, receiptable: total > 0 && total >= settings.min_total };
}

/** A supporter's receipt to issue: the supporter and what it confirms. */
export interface ReceiptDraft {
  supporter_uuid: string;
  currency: string;
  total: number;
  gifts: ReceiptRecord['gifts'];
  /** The voided receipt this one replaces, with the version it was read at. */
  replacing?: { receipt: ReceiptRecord; receiptOfVersion: number };
}

/** A receipt being replaced changed since it was read: its replacement is decided again. */
export class ReplacedMeanwhile extends Error {
  constructor() {
    super('The receipt being replaced changed meanwhile');
  }
}

class AlreadyIssued extends Error {
  constructor(readonly supporterUuid: string) {
    super('The supporter already has a valid receipt for the year');
  }
}

/** Moves the sequence from `read` to `read + count` (created at its first use). */
function advanceSequence(id: SequenceId, read: number, count: number): GuardedWrite {
  return {
    item: {
      Update: {
        Key: RECEIPT_SEQUENCE.key(id),
        UpdateExpression: 'SET #last = :next, entity = :entity, organisation_uuid = :org, #year = :year',
        ConditionExpression: read === 0 ? 'attribute_not_exists(pk)' : '#last = :read',
        ExpressionAttributeNames: { '#last': 'last', '#year': 'year' },
        ExpressionAttributeValues: {
          ':next': read + count,
          ':entity': RECEIPT_SEQUENCE.description.name,
          ':org': id.organisation_uuid,
          ':year': id.year,
          ...(read === 0 ? {} : { ':read': read }),
        },
      },
    },
    onConditionFailed: () => new StaleVersionError(),
  };
}

/** Fills the supporter's RECEIPT_OF item with its first valid receipt of the year (none may be there). */
function claimFirst(id: SequenceId, supporterUuid: string, receiptUuid: string): GuardedWrite {
  return {
    item: {
      Update: {
        Key: RECEIPT_OF.key({ ...id, supporter_uuid: supporterUuid }),
        UpdateExpression:
          'SET receipt_uuid = :receipt, entity = :entity, organisation_uuid = :org, #year = :year, supporter_uuid = :supporter, #version = if_not_exists(#version, :zero) + :one',
        ConditionExpression: 'attribute_not_exists(receipt_uuid)',
        ExpressionAttributeNames: { '#year': 'year', '#version': 'version' },
        ExpressionAttributeValues: {
          ':receipt': receiptUuid,
          ':entity': RECEIPT_OF.description.name,
          ':org': id.organisation_uuid,
          ':year': id.year,
          ':supporter': supporterUuid,
          ':zero': 0,
          ':one': 1,
        },
      },
    },
    onConditionFailed: () => new AlreadyIssued(supporterUuid),
  };
}

function newReceipt(
  settings: ReceiptSettingsRecord,
  year: number,
  sequence: number,
  draft: ReceiptDraft,
  batchUuid: string | undefined,
): ReceiptRecord {
  const uuid = newResourceUuid('receipt');
  return {
    uuid,
    organisation_uuid: settings.organisation_uuid,
    supporter_uuid: draft.supporter_uuid,
    year,
    sequence,
    country: settings.country,
    total_minor: draft.total,
    currency: draft.currency,
    status: 'issued',
    ...(draft.replacing ? { replaces: draft.replacing.receipt.uuid } : {}),
    gifts: draft.gifts,
    issued_at: now(),
    ...(batchUuid ? { batch_uuid: batchUuid } : {}),
    version: 1,
    event_sequence: 1,
    events: [
      newEvent({
        name: 'svc.receipts.receipt.issued',
        object: 'receipt',
        object_uuid: uuid,
        organisation_uuid: settings.organisation_uuid,
        sequence: 1,
      }),
    ],
  };
}

/** The voided receipt as it is written beside its replacement (or alone). */
export function voided(receipt: ReceiptRecord, reason: string, replacedBy?: string): ReceiptRecord {
  return {
    ...receipt,
    status: 'voided',
    voided_at: now(),
    void_reason: reason,
    ...(replacedBy ? { replaced_by: replacedBy } : {}),
    version: receipt.version + 1,
    event_sequence: receipt.event_sequence + 1,
    events: [
      newEvent({
        name: 'svc.receipts.receipt.voided',
        object: 'receipt',
        object_uuid: receipt.uuid,
        organisation_uuid: receipt.organisation_uuid,
        sequence: receipt.event_sequence + 1,
      }),
    ],
  };
}

async function lastNumber(id: SequenceId): Promise<number> {
  return (await RECEIPT_SEQUENCE.find(id))?.last ?? 0;
}

/**
 * Issues the drafts (new supporters, or replacements) in numbered order; answers the receipts
 * written and the supporters left out because they already had a valid receipt.
 */
export async function issueReceipts(
  settings: ReceiptSettingsRecord,
  year: number,
  drafts: readonly ReceiptDraft[],
  batchUuid?: string,
): Promise<{ issued: ReceiptRecord[]; alreadyIssued: string[] }> {
  const id = { organisation_uuid: settings.organisation_uuid, year };
  const issued: ReceiptRecord[] = [];
  const alreadyIssued: string[] = [];
  for (let start = 0; start < drafts.length; start += ISSUE_CHUNK) {
    let chunk = drafts.slice(start, start + ISSUE_CHUNK);
    while (chunk.length > 0) {
      try {
        const written = await retryOnConflict(async () => {
          const read = await lastNumber(id);
          const receipts = chunk.map((draft, index) => newReceipt(settings, year, read + index + 1, draft, batchUuid));
          const writes: GuardedWrite[] = [advanceSequence(id, read, receipts.length)];
          receipts.forEach((receipt, index) => {
            const draft = chunk[index] as ReceiptDraft;
            writes.push(RECEIPT.create(receipt));
            if (draft.replacing) {
              const old = draft.replacing.receipt;
              const ofVersion = draft.replacing.receiptOfVersion;
              const of = {
                ...id,
                supporter_uuid: draft.supporter_uuid,
                receipt_uuid: receipt.uuid,
                version: ofVersion + 1,
              };
              // Not retried here with what was read before: the caller decides again.
              const meanwhile = () => new ReplacedMeanwhile();
              writes.push({
                ...RECEIPT.replace(voided(old, 'replaced', receipt.uuid), old.version),
                onConditionFailed: meanwhile,
              });
              writes.push({ ...RECEIPT_OF.replace(of, ofVersion), onConditionFailed: meanwhile });
            } else {
              writes.push(claimFirst(id, draft.supporter_uuid, receipt.uuid));
            }
          });
          await transactWrite(writes);
          return receipts;
        });
        issued.push(...written);
        chunk = [];
      } catch (error) {
        if (!(error instanceof AlreadyIssued)) throw error;
        alreadyIssued.push(error.supporterUuid);
        chunk = chunk.filter((draft) => draft.supporter_uuid !== error.supporterUuid);
      }
    }
  }
  return { issued, alreadyIssued };
}
