import { type Assert, type Conforms, deferred, definedFields } from '@svc/core';
import * as z from 'zod';
import {
  BATCH_STATUSES,
  type BatchRecord,
  batchRecordSchema,
  RECEIPT_STATUSES,
  type ReceiptRecord,
  receiptNumber,
} from '../repository/receipt-repository';

const money = () => z.object({ value: z.string().describe('Minor units, as a string'), currency: z.string() });

export const receiptResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    number: z.string().describe('<year>-<sequence>: in sequence per organisation and year, without gaps'),
    year: z.number().int(),
    organisation_uuid: z.string(),
    supporter_uuid: z.string(),
    country: z.string(),
    total: money(),
    status: z.enum(RECEIPT_STATUSES),
    replaces: z.string().optional().describe('The voided receipt this one replaces'),
    replaced_by: z.string().optional().describe('The receipt that replaced this voided one'),
    payments: z.array(z.string()).describe('The payments it confirms'),
    gifts: z
      .array(z.object({ payment_uuid: z.string(), date: z.string(), amount: money() }))
      .describe('Each payment with the day its money arrived and what of it counts (less refunds and lost disputes)'),
    issued_at: z.number().int().describe('Unix seconds'),
    voided_at: z.number().int().optional(),
    void_reason: z.string().optional(),
    batch_uuid: z.string().optional(),
  }),
);

export function receiptShape(receipt: ReceiptRecord) {
  const amount = (minor: number) => ({ value: String(minor), currency: receipt.currency });
  return {
    uuid: receipt.uuid,
    number: receiptNumber(receipt),
    year: receipt.year,
    organisation_uuid: receipt.organisation_uuid,
    supporter_uuid: receipt.supporter_uuid,
    country: receipt.country,
    total: amount(receipt.total_minor),
    status: receipt.status,
    ...definedFields({ replaces: receipt.replaces, replaced_by: receipt.replaced_by }),
    payments: receipt.gifts.map((gift) => gift.payment_uuid),
    gifts: receipt.gifts.map((gift) => ({
      payment_uuid: gift.payment_uuid,
      date: gift.date,
      amount: amount(gift.amount_minor),
    })),
    issued_at: receipt.issued_at,
    ...definedFields({
      voided_at: receipt.voided_at,
      void_reason: receipt.void_reason,
      batch_uuid: receipt.batch_uuid,
    }),
  };
}

export const batchResponse = deferred(() =>
  batchRecordSchema.omit({ cursor: true, version: true }).extend({ status: z.enum(BATCH_STATUSES) }),
);

export function batchShape(batch: BatchRecord) {
  const { cursor: _cursor, version: _version, ...shown } = batch;
  return shown;
}

type _Receipt = Assert<Conforms<ReturnType<typeof receiptShape>, z.output<typeof receiptResponse>>>;
type _Batch = Assert<Conforms<ReturnType<typeof batchShape>, z.output<typeof batchResponse>>>;
