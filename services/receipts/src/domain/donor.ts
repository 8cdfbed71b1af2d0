import { NotFoundError } from '@svc/core';
import { queryAll } from '@svc/table';
import { RECEIPT, type ReceiptRecord, supporterReceipts } from '../repository/receipt-repository';
import { pdfOf } from './pdf';

/**
 * What the donor portal shows a signed-in donor (contract section 13, "the portal lists the
 * donor's receipts"): their receipts from the session's organisation, newest year first (voided
 * ones too, marked), and each one's PDF. Someone else's receipt is a 404, as if it did not exist.
 */
export async function donorReceipts(organisationUuid: string, supporterUuid: string): Promise<ReceiptRecord[]> {
  const items = await queryAll({ index: 'gsi2', partition: supporterReceipts(supporterUuid), descending: true });
  return items.map(RECEIPT.fromItem).filter((receipt) => receipt.organisation_uuid === organisationUuid);
}

export async function donorReceiptPdf(organisationUuid: string, supporterUuid: string, receiptUuid: string) {
  const receipt = await RECEIPT.find(receiptUuid);
  if (!receipt || receipt.organisation_uuid !== organisationUuid || receipt.supporter_uuid !== supporterUuid) {
    throw new NotFoundError('Not one of your receipts');
  }
  return { receipt, bytes: await pdfOf(receipt) };
}
