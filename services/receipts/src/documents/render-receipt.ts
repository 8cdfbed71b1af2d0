import { parseOrThrow } from '@svc/core';
import PDFDocument from 'pdfkit';
import { issueInstant } from './calendar-dates';
import { receiptFontPath } from './font-paths';
import { drawGermanReceipt } from './german-receipt';
import { ReceiptDocument } from './receipt-document';
import { languageOf, PAGE_TEXT, type ReceiptLanguage, STATUS_TEXT } from './receipt-language';
import { A4, CONTENT_WIDTH, MARGIN, MUTED, Sheet, VOID_RED } from './sheet';
import { drawSummaryReceipt } from './summary-receipt';

const TITLES: Readonly<Record<ReceiptLanguage, string>> = {
  de: 'Zuwendungsbestätigung',
  fr: 'Attestation de dons',
  it: 'Attestazione di donazione',
  en: 'Donation receipt',
};

const LANG: Readonly<Record<ReceiptDocument['country'], Readonly<Record<ReceiptLanguage, string>>>> = {
  CH: { de: 'de-CH', fr: 'fr-CH', it: 'it-CH', en: 'en-CH' },
  DE: { de: 'de-DE', fr: 'de-DE', it: 'de-DE', en: 'de-DE' },
  GB: { de: 'en-GB', fr: 'en-GB', it: 'en-GB', en: 'en-GB' },
};

/**
 * Every page: its number ("Nr. 2025-000042 · Seite 2 von 3"); on a voided receipt's pages the
 * word VOID / UNGÜLTIG across the page and before the number (where text extraction reads it
 * whole), so no page of a voided receipt can pass for a valid one.
 */
function stampPages(sheet: Sheet, doc: ReceiptDocument, language: ReceiptLanguage): void {
  const { start, count } = sheet.pdf.bufferedPageRange();
  for (let index = start; index < start + count; index += 1) {
    sheet.pdf.switchToPage(index);
    const voided = doc.receipt.status === 'voided';
    const page = PAGE_TEXT[language](doc.receipt.number, index - start + 1, count);
    sheet.footer(voided ? `${STATUS_TEXT[language].void} · ${page}` : page, A4.height - 34, {
      size: 7.5,
      weight: voided ? 'bold' : 'regular',
      color: voided ? VOID_RED : MUTED,
      align: 'right',
    });
    if (voided) {
      const pdf = sheet.pdf;
      pdf.save();
      pdf.rotate(-38, { origin: [A4.width / 2, A4.height / 2] });
      pdf.fillOpacity(0.16);
      sheet.place(STATUS_TEXT[language].void, MARGIN.left - 60, A4.height / 2 - 50, {
        size: 96,
        weight: 'bold',
        color: VOID_RED,
        align: 'center',
        width: CONTENT_WIDTH + 120,
      });
      pdf.restore();
    }
  }
}

/**
 * A receipt as a PDF: A4, DejaVu Sans embedded (subset) as its only font, text extractable.
 * Validates its input (a ValidationError names each bad field) and never renders a voided
 * receipt without its mark.
 */
export async function renderReceiptPdf(input: ReceiptDocument): Promise<Uint8Array> {
  const doc = parseOrThrow(ReceiptDocument, input, 'receipt_document');
  const language = languageOf(doc);
  const created = issueInstant(doc.receipt.issued_at);
  const pdf = new PDFDocument({
    size: 'A4',
    margins: MARGIN,
    // The first font pdfkit opens is this one, so it never loads a standard font (not embedded,
    // and its metrics are files a bundle does not carry).
    font: receiptFontPath('regular'),
    bufferPages: true,
    lang: LANG[doc.country][language],
    displayTitle: true,
    info: {
      Title: `${TITLES[language]} ${doc.receipt.number}`,
      Author: doc.organisation.legal_name,
      Subject: `${TITLES[language]} ${doc.receipt.year}`,
      CreationDate: created,
      ModDate: created,
    },
  });
  const chunks: Buffer[] = [];
  const finished = new Promise<Uint8Array>((resolve, reject) => {
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });
  const sheet = new Sheet(pdf);
  if (doc.country === 'DE') drawGermanReceipt(sheet, doc);
  else drawSummaryReceipt(sheet, doc);
  stampPages(sheet, doc, language);
  pdf.end();
  return finished;
}
