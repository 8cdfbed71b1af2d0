import { storedEventSchema } from '@svc/events';
import { byUuid, defineEntity, key, timeKey } from '@svc/table';
import * as z from 'zod';

/**
 * How the receipts domain lays out its items (docs/access-patterns.md is made from these):
 *
 * - `RECEIPT_SETTINGS#<org>`: what an organisation's receipts say and from which total on.
 * - `RECEIPT#<uuid>`: a receipt, issued or voided, listed by organisation and year (gsi1) and by
 *   supporter (gsi2).
 * - `RECEIPT_OF#<org>#<year>#<supporter>`: which receipt is the supporter's valid one for the year.
 *   It is created in the very transaction that issues the first one (attribute_not_exists), so a
 *   supporter gets one receipt per organisation and year however many batches run at once, and a
 *   replacement moves it in the transaction that voids the old one: a gift is never on two valid
 *   receipts.
 * - `RECEIPT_SEQUENCE#<org>#<year>`: the last number given. Every issuing transaction moves it from
 *   the value it read to that value plus the receipts it writes, so numbers are given only by
 *   committed transactions: in sequence, without gaps, under concurrent batches.
 * - `RECEIPT_BATCH#<uuid>`: a batch, its cursor and counts.
 */

export const COUNTRIES = ['CH', 'DE', 'GB'] as const;
export type ReceiptCountry = (typeof COUNTRIES)[number];

export const addressSchema = z.object({
  line1: z.string(),
  postal_code: z.string(),
  city: z.string(),
  country: z.string(),
});

export const receiptSettingsRecordSchema = z.object({
  organisation_uuid: z.string(),
  country: z.enum(COUNTRIES),
  legal_name: z.string(),
  address: addressSchema,
  tax_exemption_reference: z.string(),
  signatory: z.string(),
  /** Minor units of the country's currency: receipts at or above it. */
  min_total: z.number().int(),
  /** Germany: the tax office's decision the official model prints (documents/receipt-document.ts). */
  germany: z
    .object({
      purposes: z.string(),
      tax_office: z.string(),
      basis: z.enum(['exemption_notice', 'statutes_finding']),
      decision_date: z.string(),
      assessment_period: z.string().optional(),
      machine_receipts_notified_on: z.string().optional(),
    })
    .optional(),
  version: z.number().int(),
  updated: z.number().int(),
});
export type ReceiptSettingsRecord = z.infer<typeof receiptSettingsRecordSchema>;

export const RECEIPT_SETTINGS = defineEntity<ReceiptSettingsRecord, string>({
  name: 'receipt_settings',
  summary: 'What an organisation’s yearly receipts say (country, legal name, tax reference) and their minimum.',
  prefix: 'RECEIPT_SETTINGS',
  idShown: '<organisation uuid>',
  sort: 'RECEIPT_SETTINGS',
  id: (settings) => settings.organisation_uuid,
  idParts: (organisationUuid) => [organisationUuid],
  byKey: 'the receipt settings of an organisation',
  version: 'version',
  parse: (value) => receiptSettingsRecordSchema.parse(value),
});

export const RECEIPT_STATUSES = ['issued', 'voided'] as const;

export const receiptRecordSchema = z.object({
  uuid: z.string(),
  organisation_uuid: z.string(),
  supporter_uuid: z.string(),
  year: z.number().int(),
  /** The place in the organisation's sequence of the year (1, 2, …). */
  sequence: z.number().int(),
  country: z.enum(COUNTRIES),
  total_minor: z.number().int(),
  currency: z.string(),
  status: z.enum(RECEIPT_STATUSES),
  /** The receipt this one replaces (a refund or lost dispute after its issue). */
  replaces: z.string().optional(),
  replaced_by: z.string().optional(),
  /** The gifts it confirms: payment uuid, the day the money arrived, what counts of it. */
  gifts: z.array(z.object({ payment_uuid: z.string(), date: z.string(), amount_minor: z.number().int() })),
  issued_at: z.number().int(),
  voided_at: z.number().int().optional(),
  void_reason: z.string().optional(),
  batch_uuid: z.string().optional(),
  version: z.number().int(),
  event_sequence: z.number().int(),
  events: z.array(storedEventSchema),
});
export type ReceiptRecord = z.infer<typeof receiptRecordSchema>;

/** `<year>-<sequence>`, the sequence zero-padded to six digits so numbers sort as text. */
export function receiptNumber(receipt: Pick<ReceiptRecord, 'year' | 'sequence'>): string {
  return `${receipt.year}-${String(receipt.sequence).padStart(6, '0')}`;
}

export const organisationYearReceipts = (organisationUuid: string, year: number) =>
  key('ORG', organisationUuid, 'RECEIPTS', year);
export const supporterReceipts = (supporterUuid: string) => key('SUPPORTER', supporterUuid, 'RECEIPTS');

export const RECEIPT = defineEntity<ReceiptRecord, string>({
  name: 'receipt',
  summary: 'A yearly donation receipt of a supporter: its number, total and gifts; issued or voided.',
  prefix: 'RECEIPT',
  ...byUuid(),
  sort: 'RECEIPT',
  byKey: 'receipt by uuid',
  indexes: [
    {
      index: 'gsi1',
      pattern: 'receipts of an organisation and year, in number order',
      shown: 'gsi1pk = ORG#<org>#RECEIPTS#<year>, gsi1sk = <sequence>#<uuid>',
      keys: (receipt) => ({
        partition: organisationYearReceipts(receipt.organisation_uuid, receipt.year),
        sort: key(String(receipt.sequence).padStart(10, '0'), receipt.uuid),
      }),
    },
    {
      index: 'gsi2',
      pattern: 'receipts of a supporter, by year and number',
      shown: 'gsi2pk = SUPPORTER#<uuid>#RECEIPTS, gsi2sk = <year>#<sequence>#<uuid>',
      keys: (receipt) => ({
        partition: supporterReceipts(receipt.supporter_uuid),
        sort: key(receipt.year, String(receipt.sequence).padStart(10, '0'), receipt.uuid),
      }),
    },
  ],
  version: 'version',
  parse: (value) => receiptRecordSchema.parse(value),
});

export interface ReceiptOfId {
  organisation_uuid: string;
  year: number;
  supporter_uuid: string;
}

const receiptOfSchema = z.object({
  organisation_uuid: z.string(),
  year: z.number().int(),
  supporter_uuid: z.string(),
  /** The valid receipt; absent once it was voided without a replacement (nothing left to confirm). */
  receipt_uuid: z.string().optional(),
  version: z.number().int(),
});
export type ReceiptOfRecord = z.infer<typeof receiptOfSchema>;

export const RECEIPT_OF = defineEntity<ReceiptOfRecord, ReceiptOfId>({
  name: 'receipt_of',
  summary: 'Which receipt is a supporter’s valid one for an organisation and year (one per supporter and year).',
  prefix: 'RECEIPT_OF',
  idShown: '<org>#<year>#<supporter uuid>',
  sort: 'RECEIPT_OF',
  id: (record) => ({
    organisation_uuid: record.organisation_uuid,
    year: record.year,
    supporter_uuid: record.supporter_uuid,
  }),
  idParts: (id) => [id.organisation_uuid, id.year, id.supporter_uuid],
  byKey: 'the valid receipt of a supporter, organisation and year',
  version: 'version',
  parse: (value) => receiptOfSchema.parse(value),
});

export interface SequenceId {
  organisation_uuid: string;
  year: number;
}

const sequenceSchema = z.object({ organisation_uuid: z.string(), year: z.number().int(), last: z.number().int() });
export type SequenceRecord = z.infer<typeof sequenceSchema>;

export const RECEIPT_SEQUENCE = defineEntity<SequenceRecord, SequenceId>({
  name: 'receipt_sequence',
  summary: 'The last receipt number an organisation gave in a year (moved only by issuing transactions).',
  prefix: 'RECEIPT_SEQUENCE',
  idShown: '<org>#<year>',
  sort: 'RECEIPT_SEQUENCE',
  id: (record) => ({ organisation_uuid: record.organisation_uuid, year: record.year }),
  idParts: (id) => [id.organisation_uuid, id.year],
  byKey: 'the receipt sequence of an organisation and year',
  parse: (value) => sequenceSchema.parse(value),
});

export const BATCH_STATUSES = ['queued', 'running', 'completed'] as const;

export const batchRecordSchema = z.object({
  uuid: z.string(),
  organisation_uuid: z.string(),
  year: z.number().int(),
  send_email: z.boolean(),
  status: z.enum(BATCH_STATUSES),
  /** The last supporter whose gifts were read: the next page starts after it. */
  cursor: z.string().optional(),
  counts: z.object({
    supporters: z.number().int(),
    issued: z.number().int(),
    below_min_total: z.number().int(),
    already_issued: z.number().int(),
    emailed: z.number().int(),
    without_email: z.number().int(),
    /** Mails the outbox refused (an address SES cannot take): the receipt stands, unmailed. */
    mail_failed: z.number().int().optional(),
  }),
  created: z.number().int(),
  updated: z.number().int(),
  completed: z.number().int().optional(),
  version: z.number().int(),
});
export type BatchRecord = z.infer<typeof batchRecordSchema>;

export const RECEIPT_BATCH = defineEntity<BatchRecord, string>({
  name: 'receipt_batch',
  summary: 'A batch issuing an organisation’s receipts of a year: where it is and what it did.',
  prefix: 'RECEIPT_BATCH',
  ...byUuid(),
  sort: 'RECEIPT_BATCH',
  byKey: 'receipt batch by uuid',
  indexes: [
    {
      index: 'gsi1',
      pattern: 'receipt batches of an organisation',
      shown: 'gsi1pk = ORG#<org>#RECEIPT_BATCHES, gsi1sk = <created>#<uuid>',
      keys: (batch) => ({
        partition: key('ORG', batch.organisation_uuid, 'RECEIPT_BATCHES'),
        sort: key(timeKey(batch.created), batch.uuid),
      }),
    },
  ],
  version: 'version',
  parse: (value) => batchRecordSchema.parse(value),
});
