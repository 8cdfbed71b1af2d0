import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReceiptDocument } from './receipt-document';

/** Receipts for the tests, one per case, and poppler's tools to read what was rendered. */

export const RESULTS_DIR = join(import.meta.dirname, '../../../../.test-results/receipts');

/** `count` gifts from 5 January on, amounts that add up to `total` (the last takes the rest). */
export function giftsAddingUpTo(count: number, total: number, year: number, waiverEvery = 0) {
  const each = Math.floor(total / count);
  return Array.from({ length: count }, (_, index) => {
    const day = new Date(Date.UTC(year, 0, 5 + index * 5));
    return {
      date: day.toISOString().slice(0, 10),
      amount_minor: index === count - 1 ? total - each * (count - 1) : each,
      kind: 'money' as const,
      waiver_of_reimbursement: waiverEvery > 0 && index % waiverEvery === waiverEvery - 1,
    };
  });
}

export const swissReceipt = (): ReceiptDocument => ({
  country: 'CH',
  locale: 'de-CH',
  organisation: {
    legal_name: 'Stiftung Bergwasser',
    address: { line1: 'Seestrasse 12', postal_code: '8002', city: 'Zürich', country: 'CH' },
    tax_exemption_reference: 'KStA ZH 2019/0815',
    signatory: 'Anna Muster, Präsidentin',
  },
  donor: {
    name: { first_name: 'Jürg', last_name: 'Meier' },
    address_lines: ['Bahnhofstrasse 1', '3011 Bern'],
  },
  receipt: { number: '2025-000042', year: 2025, issued_at: Date.UTC(2026, 0, 15, 9), status: 'issued' },
  total: { minor: 123456, currency: 'CHF' },
  gifts: [
    { date: '2025-02-03', amount_minor: 5000, kind: 'money', waiver_of_reimbursement: false },
    { date: '2025-06-30', amount_minor: 18456, kind: 'money', waiver_of_reimbursement: false },
    { date: '2025-12-24', amount_minor: 100000, kind: 'money', waiver_of_reimbursement: false },
  ],
  period: { from: '2025-01-01', to: '2025-12-31' },
});

/** 60 gifts (the annex spans pages), 1.234,56 € in all, every seventh a waiver of expenses. */
export const germanReceipt = (): ReceiptDocument => ({
  country: 'DE',
  locale: 'de-DE',
  organisation: {
    legal_name: 'Kinderhilfe Nordstadt e. V.',
    address: { line1: 'Lindenallee 7', postal_code: '10115', city: 'Berlin', country: 'DE' },
    tax_exemption_reference: '27/640/12345',
    signatory: 'Dr. Petra Schulz, Schatzmeisterin',
  },
  donor: {
    name: { first_name: 'Max', last_name: 'Müßig' },
    address_lines: ['Gartenweg 3', '20095 Hamburg'],
  },
  receipt: { number: '2025-000007', year: 2025, issued_at: '2026-01-20', status: 'issued' },
  total: { minor: 123456, currency: 'EUR' },
  gifts: giftsAddingUpTo(60, 123456, 2025, 7),
  period: { from: '2025-01-01', to: '2025-12-31' },
  germany: {
    purposes: 'der Jugendhilfe',
    tax_office: 'Berlin für Körperschaften I',
    basis: 'exemption_notice',
    decision_date: '2024-03-14',
    assessment_period: '2020 bis 2022',
    machine_receipts_notified_on: '2023-11-02',
  },
});

export const britishReceipt = (): ReceiptDocument => ({
  country: 'GB',
  locale: 'en-GB',
  organisation: {
    legal_name: 'Riverside Food Bank',
    address: { line1: '14 Mill Lane', postal_code: 'YO1 7HH', city: 'York', country: 'GB' },
    tax_exemption_reference: '1123456',
    signatory: 'Sam Taylor, Treasurer',
  },
  donor: { name: { organisation_name: 'Acme Widgets Ltd' } },
  receipt: { number: '2025-000003', year: 2025, issued_at: '2026-01-31T10:00:00Z', status: 'issued' },
  total: { minor: 1050001, currency: 'GBP' },
  gifts: [
    { date: '2025-04-06', amount_minor: 1000000, kind: 'money', waiver_of_reimbursement: false },
    { date: '2025-09-01', amount_minor: 50001, kind: 'membership_fee', waiver_of_reimbursement: false },
  ],
  period: { from: '2025-01-01', to: '2025-12-31' },
});

/** Text extracted from a PDF, in reading order (pdftotext -layout). */
export function pdfText(pdf: Uint8Array, args: string[] = ['-layout']): string {
  return execFileSync('pdftotext', [...args, '-', '-'], { input: pdf, encoding: 'utf8' });
}

/** Runs a poppler tool on the PDF written to a temporary file (pdffonts and pdfinfo read files). */
export function popplerOn(tool: 'pdffonts' | 'pdfinfo', pdf: Uint8Array, args: string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), 'receipt-'));
  try {
    const file = join(dir, 'receipt.pdf');
    writeFileSync(file, pdf);
    return execFileSync(tool, [...args, file], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Keeps the PDF and its pages as PNGs (60 dpi) under .test-results/receipts/<name>…; returns the PNGs. */
export function keepPictures(name: string, pdf: Uint8Array): string[] {
  mkdirSync(RESULTS_DIR, { recursive: true });
  for (const file of readdirSync(RESULTS_DIR).filter((entry) => entry.startsWith(`${name}-`))) {
    rmSync(join(RESULTS_DIR, file));
  }
  writeFileSync(join(RESULTS_DIR, `${name}.pdf`), pdf);
  execFileSync('pdftoppm', ['-png', '-r', '60', join(RESULTS_DIR, `${name}.pdf`), join(RESULTS_DIR, name)]);
  return readdirSync(RESULTS_DIR)
    .filter((entry) => entry.startsWith(`${name}-`) && entry.endsWith('.png'))
    .map((entry) => join(RESULTS_DIR, entry));
}
