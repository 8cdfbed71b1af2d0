import type { Principal } from '@svc/core';
import { findSupporter, type Supporter } from '@svc/supporters';
import type { ReceiptDocument } from '../documents/receipt-document';
import {
  RECEIPT,
  type ReceiptRecord,
  type ReceiptSettingsRecord,
  receiptNumber,
} from '../repository/receipt-repository';
import { documentKey, readDocument, writeDocument } from '../storage/documents';
import { getReceipt } from './receipts';
import { requireSettings } from './settings';

/** The donor as the document names them: their name, or their organisation's. */
function donorOf(supporter: Supporter | undefined): ReceiptDocument['donor'] {
  const name =
    supporter?.first_name && supporter.last_name
      ? { first_name: supporter.first_name, last_name: supporter.last_name }
      : { organisation_name: supporter?.legal_entity ?? supporter?.raw_name ?? supporter?.last_name ?? 'Unbekannt' };
  const street = [supporter?.street, supporter?.house_number].filter(Boolean).join(' ');
  const town = [supporter?.postal_code, supporter?.city].filter(Boolean).join(' ');
  const lines = [
    supporter?.care_of,
    street,
    supporter?.address_addendum,
    supporter?.post_office_box,
    town,
    supporter?.country,
  ].filter((line): line is string => Boolean(line?.trim()));
  return { name, ...(lines.length > 0 ? { address_lines: lines } : {}) };
}

/** What the document prints of a receipt (the numbers, totals and gifts the domain decided). */
export async function documentOf(receipt: ReceiptRecord, settings: ReceiptSettingsRecord): Promise<ReceiptDocument> {
  const supporter = await findSupporter(receipt.supporter_uuid);
  const replaced = receipt.replaces ? await RECEIPT.find(receipt.replaces) : undefined;
  const common = {
    locale: supporter?.locale ?? (settings.country === 'GB' ? 'en' : 'de'),
    organisation: {
      legal_name: settings.legal_name,
      address: settings.address,
      tax_exemption_reference: settings.tax_exemption_reference,
      signatory: settings.signatory,
    },
    donor: donorOf(supporter),
    receipt: {
      number: receiptNumber(receipt),
      year: receipt.year,
      issued_at: receipt.issued_at * 1000,
      status: receipt.status,
      ...(replaced ? { replaces_number: receiptNumber(replaced) } : {}),
    },
    total: { minor: receipt.total_minor, currency: receipt.currency },
    gifts: receipt.gifts.map((gift) => ({
      date: gift.date,
      amount_minor: gift.amount_minor,
      kind: 'money' as const,
      waiver_of_reimbursement: false,
    })),
    period: { from: `${receipt.year}-01-01`, to: `${receipt.year}-12-31` },
  };
  if (receipt.country === 'DE') {
    if (!settings.germany) throw new Error('German receipt settings lack the tax office’s decision');
    return { country: 'DE', ...common, germany: settings.germany };
  }
  return { country: receipt.country, ...common };
}

/**
 * A receipt's PDF: the stored one, or rendered now and stored (one object per receipt and status:
 * a voided receipt's document says it is void, the issued one stays as it was).
 */
export async function pdfOf(receipt: ReceiptRecord): Promise<Uint8Array> {
  const key = documentKey(receipt);
  const stored = await readDocument(key);
  if (stored) return stored;
  // pdfkit and the fonts are loaded at the first document, not at every cold start.
  const { renderReceiptPdf } = await import('../documents/render-receipt');
  const bytes = await renderReceiptPdf(await documentOf(receipt, await requireSettings(receipt.organisation_uuid)));
  await writeDocument(key, bytes);
  return bytes;
}

export async function receiptPdf(principal: Promise<Principal>, uuid: string) {
  const receipt = await getReceipt(principal, uuid);
  return { bytes: await pdfOf(receipt), filename: `receipt-${receiptNumber(receipt)}.pdf` };
}
