/**
 * Switzerland and the United Kingdom: a receipt that names the organisation and its tax
 * reference (Swiss exemption, UK charity number), the donor, the period and the total, then lists
 * the gifts (continued on following pages when long). No official form exists for either: a
 * Swiss cantonal tax office asks for those facts; in the UK the Gift Aid claim is made elsewhere
 * and this is the donor's own summary.
 */
import { formatIsoDate, issueDate } from './calendar-dates';
import { drawGiftTable } from './gift-table';
import { formatMoney } from './money-text';
import type { ReceiptDocument } from './receipt-document';
import {
  DATE_STYLE,
  donorDisplayName,
  languageOf,
  MONEY_STYLE,
  type ReceiptLanguage,
  STATUS_TEXT,
} from './receipt-language';
import { CONTENT_WIDTH, MARGIN, MUTED, type Sheet, VOID_RED } from './sheet';

type SummaryReceipt = Extract<ReceiptDocument, { country: 'CH' | 'GB' }>;

interface Facts {
  org: string;
  reference: string;
  donor: string;
  from: string;
  to: string;
  total: string;
}

interface SummaryText {
  title: (year: number) => string;
  number: (number: string) => string;
  issued: (date: string) => string;
  referenceLabel: string;
  donorLabel: string;
  statement: (facts: Facts) => string;
  context: (facts: Facts) => string;
  listTitle: string;
  continued: string;
  columns: { date: string; kind: string; amount: string };
  kinds: { money: string; membership_fee: string };
  total: string;
}

const SWISS: Readonly<Record<ReceiptLanguage, SummaryText>> = {
  de: {
    title: (year) => `Spendenbestätigung ${year}`,
    number: (number) => `Nr. ${number}`,
    issued: (date) => `Ausgestellt am ${date}`,
    referenceLabel: 'Steuerbefreiung (Referenz)',
    donorLabel: 'Spenderin / Spender',
    statement: (f) =>
      `Wir bestätigen, dass wir von ${f.donor} im Zeitraum vom ${f.from} bis ${f.to} Spenden im Gesamtbetrag von ${f.total} erhalten haben.`,
    context: (f) =>
      `${f.org} ist als gemeinnützige Institution von der Steuerpflicht befreit (${f.reference}). Spenden können im Rahmen der Bestimmungen von Bund und Kanton vom steuerbaren Einkommen abgezogen werden.`,
    listTitle: 'Einzelne Zuwendungen',
    continued: 'Einzelne Zuwendungen (Fortsetzung)',
    columns: { date: 'Datum', kind: 'Art', amount: 'Betrag' },
    kinds: { money: 'Geldspende', membership_fee: 'Mitgliederbeitrag' },
    total: 'Total',
  },
  fr: {
    title: (year) => `Attestation de dons ${year}`,
    number: (number) => `N° ${number}`,
    issued: (date) => `Établie le ${date}`,
    referenceLabel: 'Exonération fiscale (référence)',
    donorLabel: 'Donatrice / donateur',
    statement: (f) =>
      `Nous attestons avoir reçu de ${f.donor}, du ${f.from} au ${f.to}, des dons d’un montant total de ${f.total}.`,
    context: (f) =>
      `${f.org} est exonérée d’impôts en tant qu’institution d’utilité publique (${f.reference}). Les dons sont déductibles du revenu imposable dans les limites prévues par le droit fédéral et cantonal.`,
    listTitle: 'Détail des dons',
    continued: 'Détail des dons (suite)',
    columns: { date: 'Date', kind: 'Type', amount: 'Montant' },
    kinds: { money: 'Don', membership_fee: 'Cotisation' },
    total: 'Total',
  },
  it: {
    title: (year) => `Attestazione di donazione ${year}`,
    number: (number) => `N. ${number}`,
    issued: (date) => `Emessa il ${date}`,
    referenceLabel: 'Esenzione fiscale (riferimento)',
    donorLabel: 'Donatrice / donatore',
    statement: (f) =>
      `Confermiamo di aver ricevuto da ${f.donor}, dal ${f.from} al ${f.to}, donazioni per un importo totale di ${f.total}.`,
    context: (f) =>
      `${f.org} è esentata dalle imposte in quanto istituzione di pubblica utilità (${f.reference}). Le donazioni sono deducibili dal reddito imponibile nei limiti previsti dal diritto federale e cantonale.`,
    listTitle: 'Dettaglio delle donazioni',
    continued: 'Dettaglio delle donazioni (continua)',
    columns: { date: 'Data', kind: 'Tipo', amount: 'Importo' },
    kinds: { money: 'Donazione', membership_fee: 'Quota associativa' },
    total: 'Totale',
  },
  en: {
    title: (year) => `Donation receipt ${year}`,
    number: (number) => `No. ${number}`,
    issued: (date) => `Issued on ${date}`,
    referenceLabel: 'Tax exemption (reference)',
    donorLabel: 'Donor',
    statement: (f) =>
      `We confirm that we received donations from ${f.donor} totalling ${f.total} between ${f.from} and ${f.to}.`,
    context: (f) =>
      `${f.org} is exempt from tax as a non-profit institution (${f.reference}). Donations may be deducted from taxable income within the limits of federal and cantonal law.`,
    listTitle: 'Donations',
    continued: 'Donations (continued)',
    columns: { date: 'Date', kind: 'Type', amount: 'Amount' },
    kinds: { money: 'Donation', membership_fee: 'Membership fee' },
    total: 'Total',
  },
};

const BRITISH: SummaryText = {
  ...SWISS.en,
  title: (year) => `Summary of donations ${year}`,
  referenceLabel: 'Registered charity number',
  statement: (f) =>
    `This confirms that ${f.org} received donations from ${f.donor} totalling ${f.total} between ${f.from} and ${f.to}.`,
  context: () =>
    'This is a summary of your gifts for your records. It is not a Gift Aid declaration: Gift Aid is claimed separately on the gifts you have declared.',
  listTitle: 'Your donations',
};

/** A postal address as the country writes it: the UK puts the postcode on its own last line. */
function addressLines(address: SummaryReceipt['organisation']['address']): string[] {
  return address.country === 'GB'
    ? [address.line1, address.city, address.postal_code]
    : [address.line1, `${address.postal_code} ${address.city}`];
}

export function summaryTextOf(doc: SummaryReceipt): SummaryText {
  return doc.country === 'GB' ? BRITISH : SWISS[languageOf(doc)];
}

export function drawSummaryReceipt(sheet: Sheet, doc: SummaryReceipt): void {
  const text = summaryTextOf(doc);
  const status = STATUS_TEXT[languageOf(doc)];
  const money = (minor: number) => formatMoney(minor, doc.total.currency, MONEY_STYLE[doc.country]);
  const dated = (iso: string) => formatIsoDate(iso, DATE_STYLE[doc.country]);
  const org = doc.organisation;
  const facts: Facts = {
    org: org.legal_name,
    reference: org.tax_exemption_reference,
    donor: donorDisplayName(doc.donor.name),
    from: dated(doc.period.from),
    to: dated(doc.period.to),
    total: money(doc.total.minor),
  };
  const issued = dated(issueDate(doc.receipt.issued_at, doc.country));

  // Letterhead: the organisation on the left, the receipt's number and date on the right.
  const top = sheet.y;
  const standing = [text.number(doc.receipt.number), text.issued(issued)];
  if (doc.receipt.replaces_number) standing.push(status.replaces(doc.receipt.replaces_number));
  sheet.place(standing.join('\n'), MARGIN.left + CONTENT_WIDTH * 0.55, top, {
    size: 8.5,
    color: MUTED,
    align: 'right',
    width: CONTENT_WIDTH * 0.45,
  });
  const left = { width: CONTENT_WIDTH * 0.55 };
  sheet.text(org.legal_name, { ...left, size: 11, weight: 'bold', after: 1 });
  sheet.text(addressLines(org.address).join('\n'), { ...left, size: 9 });
  sheet.text(`${text.referenceLabel}: ${org.tax_exemption_reference}`, { ...left, size: 8.5, color: MUTED, after: 30 });

  sheet.text(text.donorLabel, { size: 7.5, color: MUTED, after: 1 });
  sheet.text(facts.donor, { size: 10.5, weight: 'bold', after: 1 });
  if (doc.donor.address_lines?.length) sheet.text(doc.donor.address_lines.join('\n'), { size: 9.5 });
  sheet.space(28);

  if (doc.receipt.status === 'voided')
    sheet.text(status.voidBanner, { size: 11, weight: 'bold', color: VOID_RED, after: 8 });
  sheet.text(text.title(doc.receipt.year), { size: 16, weight: 'bold', after: 12 });
  sheet.text(text.statement(facts), { size: 10.5, after: 8 });
  sheet.text(text.context(facts), { size: 9.5, color: '#333333', after: 22 });
  sheet.text(`${org.address.city}, ${issued}`, { size: 9.5, after: 2 });
  sheet.text(`${org.signatory}\n${org.legal_name}`, { size: 9.5, after: 26 });

  const heading = (next: Sheet, title: string) => {
    next.text(title, { size: 11, weight: 'bold', after: 2 });
    next.text(`${text.number(doc.receipt.number)} · ${facts.donor} · ${facts.from} – ${facts.to}`, {
      size: 8,
      color: MUTED,
      after: 6,
    });
  };
  heading(sheet, text.listTitle);
  drawGiftTable(sheet, {
    columns: [
      { header: text.columns.date, share: 2, align: 'left' },
      { header: text.columns.kind, share: 4, align: 'left' },
      { header: text.columns.amount, share: 2, align: 'right' },
    ],
    rows: doc.gifts.map((gift) => [dated(gift.date), text.kinds[gift.kind], money(gift.amount_minor)]),
    totalLabel: text.total,
    total: facts.total,
    continued: (next) => heading(next, text.continued),
  });
}
