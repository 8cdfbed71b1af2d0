import { existsSync, statSync } from 'node:fs';
import { ValidationError } from '@svc/core';
import { describe, expect, it } from 'vitest';
import { formatIsoDate } from './calendar-dates';
import { DE_TEXT } from './german-receipt';
import { renderReceiptPdf } from './index';
import type { ReceiptDocument } from './receipt-document';
import { britishReceipt, germanReceipt, keepPictures, pdfText, popplerOn, swissReceipt } from './testing-receipts';

/** Text with every run of white space as one space: sentences survive line wrapping. */
const flat = (text: string) => text.replace(/\s+/g, ' ');

const pageCount = (pdf: Uint8Array) => Number(/Pages:\s+(\d+)/.exec(popplerOn('pdfinfo', pdf))?.[1]);

/** One page's text: in reading order (cells whole), or laid out as printed (table rows on one line). */
const pageText = (pdf: Uint8Array, page: number, layout = false) =>
  pdfText(pdf, [...(layout ? ['-layout'] : []), '-f', String(page), '-l', String(page)]);

/** Every page's size line from pdfinfo. */
function pageSizes(pdf: Uint8Array): string[] {
  const info = popplerOn('pdfinfo', pdf, ['-f', '1', '-l', String(pageCount(pdf))]);
  return [...info.matchAll(/Page\s+\d+ size:\s+(.+)/g)].map((match) => match[1]?.trim() ?? '');
}

/** The fonts pdffonts lists: name, type, and whether each is embedded and has a ToUnicode map. */
function fontsOf(pdf: Uint8Array): { name: string; type: string; embedded: boolean; unicode: boolean }[] {
  const lines = popplerOn('pdffonts', pdf).split('\n').slice(2).filter(Boolean);
  return lines.map((line) => {
    const columns = line.trim().split(/\s+/);
    // name, type (may be two words), encoding, emb, sub, uni, object ID
    const [name = '', ...rest] = columns;
    const [emb, , uni] = rest.slice(-5, -2);
    return { name, type: rest.slice(0, -6).join(' '), embedded: emb === 'yes', unicode: uni === 'yes' };
  });
}

function expectA4WithEmbeddedFonts(pdf: Uint8Array): void {
  const sizes = pageSizes(pdf);
  expect(sizes.length).toBeGreaterThan(0);
  for (const size of sizes) expect(size).toMatch(/^595\.28 x 841\.89 pts \(A4\)/);
  const fonts = fontsOf(pdf);
  expect(fonts.length).toBeGreaterThan(0);
  for (const font of fonts) {
    expect(font.name).toMatch(/^[A-Z]{6}\+DejaVuSans(-Bold)?$/);
    expect(font).toMatchObject({ type: 'CID TrueType', embedded: true, unicode: true });
  }
  // The TrueType program itself is in the file (no standard font is referenced instead).
  const raw = Buffer.from(pdf).toString('latin1');
  expect(raw).toContain('/FontFile2');
  expect(raw).not.toMatch(/\/BaseFont\s*\/(Helvetica|Times|Courier|Symbol|ZapfDingbats)/);
}

function expectPicturesKept(name: string, pdf: Uint8Array): void {
  const pictures = keepPictures(name, pdf);
  expect(pictures).toHaveLength(pageCount(pdf));
  for (const picture of pictures) {
    expect(existsSync(picture)).toBe(true);
    expect(statSync(picture).size).toBeGreaterThan(5_000);
  }
}

describe('the Swiss receipt', () => {
  it('names the organisation, its tax exemption, the donor, the period and the total to the cent', async () => {
    const pdf = await renderReceiptPdf(swissReceipt());
    const text = flat(pdfText(pdf, []));
    for (const expected of [
      'Stiftung Bergwasser',
      'Seestrasse 12',
      'Steuerbefreiung (Referenz): KStA ZH 2019/0815',
      'Jürg Meier',
      'Bahnhofstrasse 1',
      'Spendenbestätigung 2025',
      'Nr. 2025-000042',
      'Ausgestellt am 15.01.2026',
      'im Zeitraum vom 01.01.2025 bis 31.12.2025 Spenden im Gesamtbetrag von CHF 1’234.56 erhalten haben.',
      'Anna Muster, Präsidentin',
    ]) {
      expect(text).toContain(expected);
    }
    const lines = pdfText(pdf).split('\n');
    for (const gift of [/03\.02\.2025\s+Geldspende\s+CHF 50\.00$/, /30\.06\.2025\s+Geldspende\s+CHF 184\.56$/]) {
      expect(lines.some((line) => gift.test(line.trim()))).toBe(true);
    }
    expect(lines.some((line) => /^Total\s+CHF 1’234\.56$/.test(line.trim()))).toBe(true);
    expect(pageCount(pdf)).toBe(1);
    expectA4WithEmbeddedFonts(pdf);
    expectPicturesKept('ch', pdf);
  });

  it('speaks French when the locale asks for it', async () => {
    const pdf = await renderReceiptPdf({ ...swissReceipt(), locale: 'fr-CH' });
    const text = flat(pdfText(pdf, []));
    expect(text).toContain('Attestation de dons 2025');
    expect(text).toContain('du 01.01.2025 au 31.12.2025, des dons d’un montant total de CHF 1’234.56.');
    expect(text).toContain('Exonération fiscale (référence): KStA ZH 2019/0815');
    expectPicturesKept('ch-fr', pdf);
  });
});

describe('the German collective confirmation', () => {
  it('follows the official model on one A4 page: figures, words, period, the required sentences, the notes', async () => {
    const pdf = await renderReceiptPdf(germanReceipt());
    const first = flat(pageText(pdf, 1));
    for (const expected of [
      DE_TEXT.issuerLabel,
      'Kinderhilfe Nordstadt e. V.',
      'Lindenallee 7, 10115 Berlin',
      'Sammelbestätigung über Geldzuwendungen',
      DE_TEXT.subtitle,
      'Name und Anschrift des Zuwendenden:',
      'Max Müßig',
      'Gartenweg 3, 20095 Hamburg',
      '1.234,56 €',
      'eintausendzweihundertvierunddreißig Euro sechsundfünfzig Cent',
      '01.01.2025 – 31.12.2025',
      'Wir sind wegen Förderung der Jugendhilfe nach dem Freistellungsbescheid bzw. nach der Anlage zum Körperschaftsteuerbescheid des Finanzamtes Berlin für Körperschaften I StNr. 27/640/12345 vom 14.03.2024 für den letzten Veranlagungszeitraum 2020 bis 2022',
      'Es wird bestätigt, dass die Zuwendung nur zur Förderung der Jugendhilfe verwendet wird.',
      'Ob es sich um den Verzicht auf Erstattung von Aufwendungen handelt, ist der Anlage zur Sammelbestätigung zu entnehmen.',
      'Es wird bestätigt, dass über die in der Gesamtsumme enthaltenen Zuwendungen keine weiteren Bestätigungen, weder formelle Zuwendungsbestätigungen noch Beitragsquittungen oder ähnliches ausgestellt wurden und werden.',
      'Berlin, 20.01.2026',
      '(Ort, Datum und Unterschrift des Zuwendungsempfängers)',
      'Diese Zuwendungsbestätigung wurde maschinell erstellt und ist ohne Unterschrift gültig. Die Nutzung des maschinellen Verfahrens wurde dem Finanzamt Berlin für Körperschaften I am 02.11.2023 angezeigt (R 10b.1 Abs. 4 EStR).',
      `Hinweis: ${DE_TEXT.liability}`,
      DE_TEXT.recognition,
    ]) {
      expect(first).toContain(expected);
    }
    // The words sit in the cell after the figures, unbroken (the figures' cell is left of them).
    expect(pageCount(pdf)).toBeGreaterThan(1);
    expectA4WithEmbeddedFonts(pdf);
  });

  it('lists every gift in the annex, over as many pages as it takes, with the same total', async () => {
    const doc = germanReceipt();
    const pdf = await renderReceiptPdf(doc);
    const pages = pageCount(pdf);
    expect(pages).toBeGreaterThanOrEqual(3);
    const annex = Array.from({ length: pages - 1 }, (_, index) => pageText(pdf, index + 2, true));
    expect(annex[0]).toContain('Anlage zur Sammelbestätigung vom 20.01.2026');
    for (const page of annex.slice(1))
      expect(page).toContain('Anlage zur Sammelbestätigung vom 20.01.2026 (Fortsetzung)');
    for (let page = 2; page <= pages; page += 1) {
      expect(flat(pageText(pdf, page))).toContain('Verzicht auf die Erstattung von Aufwendungen (ja/nein)');
    }
    const lines = annex
      .join('\n')
      .split('\n')
      .map((line) => line.trim());
    const giftLines = lines
      .filter((line) => /^\d{2}\.\d{2}\.\d{4}\s+Geldzuwendung/.test(line))
      .map((line) => line.replace(/\s+/g, ' '));
    // The oracle spells the euros by hand (every gift is under 1.000 €, so no grouping).
    const euros = (minor: number) => {
      const digits = String(minor).padStart(3, '0');
      return `${digits.slice(0, -2)},${digits.slice(-2)} €`;
    };
    expect(giftLines).toEqual(
      doc.gifts.map(
        (gift) =>
          `${formatIsoDate(gift.date, 'dotted')} Geldzuwendung ${gift.waiver_of_reimbursement ? 'ja' : 'nein'} ${euros(gift.amount_minor)}`,
      ),
    );
    expect(giftLines).toHaveLength(60);
    expect(lines.filter((line) => /^Gesamtsumme\s+1\.234,56 €$/.test(line))).toHaveLength(1);
    expectPicturesKept('de', pdf);
  });

  it('states a one-cent total and a million in figures and in words', async () => {
    const gift = { date: '2025-05-05', kind: 'money', waiver_of_reimbursement: true } as const;
    const cent = await renderReceiptPdf({
      ...germanReceipt(),
      total: { minor: 1, currency: 'EUR' },
      gifts: [{ ...gift, amount_minor: 1 }],
    });
    expect(flat(pageText(cent, 1))).toContain(' 0,01 € ');
    expect(flat(pageText(cent, 1))).toContain(' null Euro ein Cent ');
    const million = await renderReceiptPdf({
      ...germanReceipt(),
      total: { minor: 100_000_000, currency: 'EUR' },
      gifts: [{ ...gift, amount_minor: 100_000_000 }],
    });
    expect(flat(pageText(million, 1))).toContain(' 1.000.000,00 € ');
    expect(flat(pageText(million, 1))).toContain(' eine Million Euro ');
    expect(pageText(million, 2, true)).toMatch(/05\.05\.2025\s+Geldzuwendung\s+ja\s+1\.000\.000,00 €/);
  });
});

describe('a German organisation without an exemption notice yet', () => {
  it('prints the separate finding under § 60a AO instead', async () => {
    const doc = germanReceipt();
    if (doc.country !== 'DE') throw new Error('not German');
    const { assessment_period: _none, ...finding } = doc.germany;
    const pdf = await renderReceiptPdf({ ...doc, germany: { ...finding, basis: 'statutes_finding' } });
    const first = flat(pageText(pdf, 1));
    expect(first).toContain(
      'Die Einhaltung der satzungsmäßigen Voraussetzungen nach den §§ 51, 59, 60 und 61 AO wurde vom Finanzamt Berlin für Körperschaften I StNr. 27/640/12345 mit Bescheid vom 14.03.2024 nach § 60a AO gesondert festgestellt. Wir fördern nach unserer Satzung: Förderung der Jugendhilfe.',
    );
    expect(first).not.toContain('Freistellungsbescheid bzw.');
    await expect(renderReceiptPdf({ ...doc, germany: { ...finding, basis: 'exemption_notice' } })).rejects.toThrow(
      ValidationError,
    );
  });
});

describe('the British summary', () => {
  it('names the charity number, the donor, the period, the total and each gift', async () => {
    const pdf = await renderReceiptPdf(britishReceipt());
    const text = flat(pdfText(pdf, []));
    for (const expected of [
      'Riverside Food Bank',
      'Registered charity number: 1123456',
      'Acme Widgets Ltd',
      'Summary of donations 2025',
      'received donations from Acme Widgets Ltd totalling £10,500.01 between 01/01/2025 and 31/12/2025.',
      'It is not a Gift Aid declaration',
    ]) {
      expect(text).toContain(expected);
    }
    const lines = pdfText(pdf)
      .split('\n')
      .map((line) => line.trim());
    expect(lines.some((line) => /^06\/04\/2025\s+Donation\s+£10,000\.00$/.test(line))).toBe(true);
    expect(lines.some((line) => /^01\/09\/2025\s+Membership fee\s+£500\.01$/.test(line))).toBe(true);
    expect(lines.some((line) => /^Total\s+£10,500\.01$/.test(line))).toBe(true);
    expectA4WithEmbeddedFonts(pdf);
    expectPicturesKept('gb', pdf);
  });
});

describe('a voided receipt', () => {
  const voided = (doc: ReceiptDocument): ReceiptDocument => ({ ...doc, receipt: { ...doc.receipt, status: 'voided' } });

  it('says UNGÜLTIG on every page of a German confirmation, and why on the first', async () => {
    const pdf = await renderReceiptPdf(voided(germanReceipt()));
    const pages = pageCount(pdf);
    for (let page = 1; page <= pages; page += 1) {
      expect(pageText(pdf, page, true)).toMatch(
        new RegExp(`UNGÜLTIG · Nr\\. 2025-000007 · Seite ${page} von ${pages}`),
      );
    }
    expect(flat(pageText(pdf, 1))).toContain(
      'UNGÜLTIG – diese Bestätigung wurde storniert und ist kein Nachweis für steuerliche Zwecke.',
    );
    expectPicturesKept('de-voided', pdf);
  });

  it('says VOID on a British summary', async () => {
    const pdf = await renderReceiptPdf(voided(britishReceipt()));
    expect(flat(pdfText(pdf, []))).toContain('VOID – this receipt was cancelled and is not valid for tax purposes.');
    expect(pdfText(pdf)).toContain('VOID · No. 2025-000003 · page 1 of 1');
  });
});

describe('a replacement receipt', () => {
  it('names the receipt it replaces, in German and in the Swiss locale’s language', async () => {
    const german = germanReceipt();
    const pdf = await renderReceiptPdf({
      ...german,
      receipt: { ...german.receipt, number: '2025-000031', replaces_number: '2025-000007' },
    });
    const first = flat(pageText(pdf, 1));
    expect(first).toContain('Nr. 2025-000031');
    expect(first).toContain('ersetzt Bestätigung Nr. 2025-000007');
    expect(first).not.toContain('UNGÜLTIG');
    expectPicturesKept('de-replacement', pdf);

    const swiss = swissReceipt();
    const french = await renderReceiptPdf({
      ...swiss,
      locale: 'fr-CH',
      receipt: { ...swiss.receipt, replaces_number: '2025-000009' },
    });
    expect(flat(pdfText(french, []))).toContain('remplace l’attestation n° 2025-000009');
  });
});

describe('the input', () => {
  it('is refused when the gifts do not add up to the total, or one falls outside the period', async () => {
    const doc = germanReceipt();
    await expect(renderReceiptPdf({ ...doc, total: { ...doc.total, minor: doc.total.minor + 1 } })).rejects.toThrow(
      ValidationError,
    );
    const [first, ...rest] = doc.gifts;
    if (!first) throw new Error('no gift');
    await expect(renderReceiptPdf({ ...doc, gifts: [{ ...first, date: '2026-01-01' }, ...rest] })).rejects.toThrow(
      ValidationError,
    );
    await expect(renderReceiptPdf({ ...doc, period: { from: '2025-02-30', to: '2025-12-31' } })).rejects.toThrow(
      ValidationError,
    );
  });
});
