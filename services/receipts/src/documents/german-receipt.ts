/**
 * Germany: "Sammelbestätigung über Geldzuwendungen" after the official model, then its annex
 * listing every gift ("Anlage zur Sammelbestätigung").
 *
 * Sources (read 2026-11-29 from stored copies of the pages named):
 * - BMF-Schreiben of 7 November 2013, IV C 4 - S 2223/07/0018 :005, DOK 2013/0239390, "Muster
 *   für Zuwendungsbestätigungen (§ 10b EStG)", transcript at
 *   https://doczz.net/doc/6152086/muster-f%C3%BCr-zuwendungsbest%C3%A4tigungen--%C2%A7-10b-estg-
 *   : the models are binding (§ 50 Abs. 1 EStDV); only the passages that apply need be taken
 *   over, but the notes on liability and on the recognition of the receipt always; wording and
 *   order of the passages are kept, no rewording; no thanks or advertising on the receipt; at
 *   most one DIN A4 page. The model's wording is the one set below, compared against several
 *   published reproductions of the model.
 * - The rules for collective confirmations (BMF-Schreiben of 30 August 2012, kept in 2013), as
 *   summarised at http://www.mariontriess.de/?p=1620 and https://hotlib.net/htrd/983224/p24
 *   : "Sammelbestätigung" instead of "Bestätigung"; the total; the period covered; the sentence
 *   that no other confirmation was or will be issued; every gift listed with date, amount and
 *   kind on the back or in an annex marked "Anlage zur Sammelbestätigung vom …" whose total
 *   equals the confirmation's; for each gift whether it waives reimbursement of expenses.
 * - Amount in words, http://sportbund-pfalz.de/zuwendungsbestaetigungen.html (the BMF letter's
 *   point 4): in figures and in letters; spelling the digits is enough.
 * - Machine-made receipts, R 10b.1 Abs. 4 EStR, as set out in Reuber, Die Besteuerung der
 *   Vereine, Tz. 97 (Stand EL 134, 11/2023),
 *   https://www.haufe.de/steuern/reuber-die-besteuerung-der-vereine/reuber-die-besteuerung-der-vereine-spendenzuwendungen-3-maschinell-erstellte-zuwendungs-spendenbestaetigung_idesk_PI33847_HI10389393.html
 *   : valid without a handwritten signature once the procedure was notified to the tax office,
 *   and the receipt must state that notification; money donations only (never goods or expense
 *   waivers). No official wording exists for that statement: ours says the receipt was made by
 *   machine, is valid without signature, and when and to which Finanzamt the procedure was
 *   notified. A PDF sent as a read-only file is accepted (BMF 6 February 2017, BStBl I 2017,
 *   287, cited in Littmann/Bitz/Pust § 10b Rn. 136, haufe.de, Stand 08/2022).
 */
import { germanAmountInWords } from './amount-in-words';
import { formatIsoDate, issueDate } from './calendar-dates';
import { drawGiftTable } from './gift-table';
import { formatMoney } from './money-text';
import type { ReceiptDocument } from './receipt-document';
import { donorDisplayName, STATUS_TEXT } from './receipt-language';
import { A4, CONTENT_WIDTH, MARGIN, MUTED, type Sheet, VOID_RED } from './sheet';

type GermanReceipt = Extract<ReceiptDocument, { country: 'DE' }>;

export const DE_TEXT = {
  issuerLabel: 'Aussteller (Bezeichnung und Anschrift der steuerbegünstigten Einrichtung)',
  title: 'Sammelbestätigung über Geldzuwendungen',
  titleWithFees: 'Sammelbestätigung über Geldzuwendungen/Mitgliedsbeiträge',
  subtitle:
    'im Sinne des § 10b des Einkommensteuergesetzes an eine der in § 5 Abs. 1 Nr. 9 des Körperschaftsteuergesetzes bezeichneten Körperschaften, Personenvereinigungen oder Vermögensmassen',
  donorLabel: 'Name und Anschrift des Zuwendenden:',
  inFigures: 'Gesamtbetrag der Zuwendung - in Ziffern -',
  inLetters: '- in Buchstaben -',
  period: 'Zeitraum der Sammelbestätigung:',
  exemptionNotice: (purposes: string, office: string, taxNumber: string, date: string, period: string) =>
    `Wir sind wegen Förderung ${purposes} nach dem Freistellungsbescheid bzw. nach der Anlage zum Körperschaftsteuerbescheid des Finanzamtes ${office} StNr. ${taxNumber} vom ${date} für den letzten Veranlagungszeitraum ${period} nach § 5 Abs. 1 Nr. 9 des Körperschaftsteuergesetzes von der Körperschaftsteuer und nach § 3 Nr. 6 des Gewerbesteuergesetzes von der Gewerbesteuer befreit.`,
  statutesFinding: (purposes: string, office: string, taxNumber: string, date: string) =>
    `Die Einhaltung der satzungsmäßigen Voraussetzungen nach den §§ 51, 59, 60 und 61 AO wurde vom Finanzamt ${office} StNr. ${taxNumber} mit Bescheid vom ${date} nach § 60a AO gesondert festgestellt. Wir fördern nach unserer Satzung: Förderung ${purposes}.`,
  useConfirmed: (purposes: string) =>
    `Es wird bestätigt, dass die Zuwendung nur zur Förderung ${purposes} verwendet wird.`,
  waiverInAnnex:
    'Ob es sich um den Verzicht auf Erstattung von Aufwendungen handelt, ist der Anlage zur Sammelbestätigung zu entnehmen.',
  noOtherConfirmation:
    'Es wird bestätigt, dass über die in der Gesamtsumme enthaltenen Zuwendungen keine weiteren Bestätigungen, weder formelle Zuwendungsbestätigungen noch Beitragsquittungen oder ähnliches ausgestellt wurden und werden.',
  signatureCaption: '(Ort, Datum und Unterschrift des Zuwendungsempfängers)',
  machineMade: (office: string, notifiedOn: string) =>
    `Diese Zuwendungsbestätigung wurde maschinell erstellt und ist ohne Unterschrift gültig. Die Nutzung des maschinellen Verfahrens wurde dem Finanzamt ${office} am ${notifiedOn} angezeigt (R 10b.1 Abs. 4 EStR).`,
  noteHeading: 'Hinweis:',
  liability:
    'Wer vorsätzlich oder grob fahrlässig eine unrichtige Zuwendungsbestätigung erstellt oder veranlasst, dass Zuwendungen nicht zu den in der Zuwendungsbestätigung angegebenen steuerbegünstigten Zwecken verwendet werden, haftet für die entgangene Steuer (§ 10b Abs. 4 EStG, § 9 Abs. 3 KStG, § 9 Nr. 5 GewStG).',
  recognition:
    'Diese Bestätigung wird nicht als Nachweis für die steuerliche Berücksichtigung der Zuwendung anerkannt, wenn das Datum des Freistellungsbescheides länger als 5 Jahre bzw. das Datum der Feststellung der Einhaltung der satzungsmäßigen Voraussetzungen nach § 60a Abs. 1 AO länger als 3 Jahre seit Ausstellung des Bescheides zurückliegt (§ 63 Abs. 5 AO).',
  annexTitle: (date: string) => `Anlage zur Sammelbestätigung vom ${date}`,
  annexContinued: (date: string) => `Anlage zur Sammelbestätigung vom ${date} (Fortsetzung)`,
  columns: {
    date: 'Datum der Zuwendung',
    kind: 'Art der Zuwendung (Geldzuwendung/Mitgliedsbeitrag)',
    waiver: 'Verzicht auf die Erstattung von Aufwendungen (ja/nein)',
    amount: 'Betrag',
  },
  kinds: { money: 'Geldzuwendung', membership_fee: 'Mitgliedsbeitrag' },
  total: 'Gesamtsumme',
} as const;

const dated = (iso: string) => formatIsoDate(iso, 'dotted');

/** The receipt's number and what it replaces (top right), and whether it is void. */
function drawStanding(sheet: Sheet, doc: GermanReceipt): void {
  const status = STATUS_TEXT.de;
  const lines = [`Nr. ${doc.receipt.number}`];
  if (doc.receipt.replaces_number) lines.push(status.replaces(doc.receipt.replaces_number));
  sheet.text(lines.join('\n'), { size: 8, color: MUTED, align: 'right', after: 2 });
  if (doc.receipt.status === 'voided') {
    sheet.text(status.voidBanner, { size: 11, weight: 'bold', color: VOID_RED, after: 4 });
  }
}

function drawConfirmation(sheet: Sheet, doc: GermanReceipt): void {
  const org = doc.organisation;
  const exemption = doc.germany;
  const money = formatMoney(doc.total.minor, doc.total.currency, 'de-DE');
  drawStanding(sheet, doc);

  // Framed blocks: their text set in from the frame.
  const inset = { x: MARGIN.left + 6, width: CONTENT_WIDTH - 12 };
  const issuerTop = sheet.y + 8;
  sheet.space(8).text(DE_TEXT.issuerLabel, { ...inset, size: 7.5, color: MUTED, after: 2 });
  sheet.text(org.legal_name, { ...inset, size: 10.5, weight: 'bold', after: 1 });
  sheet.text(`${org.address.line1}, ${org.address.postal_code} ${org.address.city}`, { ...inset, size: 9.5 });
  sheet.frame(issuerTop, 5).space(18);

  const withFees = doc.gifts.some((gift) => gift.kind === 'membership_fee');
  sheet.text(withFees ? DE_TEXT.titleWithFees : DE_TEXT.title, { size: 14, weight: 'bold', after: 3 });
  sheet.text(DE_TEXT.subtitle, { size: 8.5, after: 14 });

  const donorTop = sheet.y;
  sheet.text(DE_TEXT.donorLabel, { ...inset, size: 7.5, color: MUTED, after: 2 });
  sheet.text(donorDisplayName(doc.donor.name), { ...inset, size: 10, weight: 'bold', after: 1 });
  sheet.text((doc.donor.address_lines ?? []).join(', ') || ' ', { ...inset, size: 9.5 });
  sheet.frame(donorTop, 5).space(16);

  // Figures, letters, period: three framed cells side by side, as in the model.
  const cells = [
    { label: DE_TEXT.inFigures, value: money, share: 0.2 },
    { label: DE_TEXT.inLetters, value: germanAmountInWords(doc.total.minor, doc.total.currency), share: 0.47 },
    { label: DE_TEXT.period, value: `${dated(doc.period.from)} – ${dated(doc.period.to)}`, share: 0.33 },
  ];
  const top = sheet.y;
  let x = MARGIN.left;
  const heights = cells.map((cell) => {
    const width = CONTENT_WIDTH * cell.share;
    const label = sheet.place(cell.label, x + 5, top, { size: 7.5, color: MUTED, width: width - 10 });
    const value = sheet.place(cell.value, x + 5, top + label + 3, { size: 9.5, weight: 'bold', width: width - 10 });
    x += width;
    return label + 3 + value;
  });
  sheet.y = top + Math.max(...heights);
  x = MARGIN.left;
  for (const cell of cells) {
    sheet.frame(top, 5, x, CONTENT_WIDTH * cell.share);
    x += CONTENT_WIDTH * cell.share;
  }
  sheet.space(18);

  const body = { size: 9.5, after: 7 };
  sheet.text(
    exemption.basis === 'exemption_notice'
      ? DE_TEXT.exemptionNotice(
          exemption.purposes,
          exemption.tax_office,
          org.tax_exemption_reference,
          dated(exemption.decision_date),
          exemption.assessment_period ?? '',
        )
      : DE_TEXT.statutesFinding(
          exemption.purposes,
          exemption.tax_office,
          org.tax_exemption_reference,
          dated(exemption.decision_date),
        ),
    body,
  );
  sheet.text(DE_TEXT.useConfirmed(exemption.purposes), body);
  sheet.text(DE_TEXT.waiverInAnnex, body);
  sheet.text(DE_TEXT.noOtherConfirmation, { ...body, after: 22 });

  const issued = dated(issueDate(doc.receipt.issued_at, 'DE'));
  sheet.text(`${org.address.city}, ${issued}      ${org.signatory}`, { size: 9.5, after: 2 });
  sheet.rule().space(2);
  sheet.text(DE_TEXT.signatureCaption, { size: 7.5, color: MUTED, after: 8 });
  if (exemption.machine_receipts_notified_on) {
    sheet.text(DE_TEXT.machineMade(exemption.tax_office, dated(exemption.machine_receipts_notified_on)), {
      size: 8.5,
      weight: 'bold',
      after: 8,
    });
  }

  // The notes close the page, at its foot when there is room.
  const note = `${DE_TEXT.liability}\n\n${DE_TEXT.recognition}`;
  const noteHeight =
    sheet.measure(DE_TEXT.noteHeading, { size: 7.5, weight: 'bold' }) + sheet.measure(note, { size: 7.5 });
  sheet.y = Math.max(sheet.y, A4.height - MARGIN.bottom - noteHeight);
  sheet.text(DE_TEXT.noteHeading, { size: 7.5, weight: 'bold' });
  sheet.text(note, { size: 7.5 });
  if (sheet.y > A4.height - MARGIN.bottom + 0.5) {
    throw new Error('The German confirmation no longer fits one A4 page');
  }
}

function drawAnnexHeading(sheet: Sheet, doc: GermanReceipt, continued: boolean): void {
  const issued = dated(issueDate(doc.receipt.issued_at, 'DE'));
  sheet.text(continued ? DE_TEXT.annexContinued(issued) : DE_TEXT.annexTitle(issued), {
    size: continued ? 10 : 12,
    weight: 'bold',
    after: 3,
  });
  sheet.text(
    `Nr. ${doc.receipt.number} · ${donorDisplayName(doc.donor.name)} · ${DE_TEXT.period} ${dated(doc.period.from)} – ${dated(doc.period.to)}`,
    { size: 8.5, color: MUTED, after: 10 },
  );
}

/** Page one: the confirmation; from page two: the annex with every gift and their total. */
export function drawGermanReceipt(sheet: Sheet, doc: GermanReceipt): void {
  drawConfirmation(sheet, doc);
  sheet.newPage();
  drawAnnexHeading(sheet, doc, false);
  drawGiftTable(sheet, {
    columns: [
      { header: DE_TEXT.columns.date, share: 2, align: 'left' },
      { header: DE_TEXT.columns.kind, share: 3, align: 'left' },
      { header: DE_TEXT.columns.waiver, share: 3, align: 'center' },
      { header: DE_TEXT.columns.amount, share: 2, align: 'right' },
    ],
    rows: doc.gifts.map((gift) => [
      dated(gift.date),
      DE_TEXT.kinds[gift.kind],
      gift.waiver_of_reimbursement ? 'ja' : 'nein',
      formatMoney(gift.amount_minor, doc.total.currency, 'de-DE'),
    ]),
    totalLabel: DE_TEXT.total,
    total: formatMoney(doc.total.minor, doc.total.currency, 'de-DE'),
    continued: (next) => drawAnnexHeading(next, doc, true),
  });
}
