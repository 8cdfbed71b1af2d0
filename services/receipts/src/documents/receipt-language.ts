import type { DateStyle } from './calendar-dates';
import type { MoneyStyle } from './money-text';
import type { DonorName, ReceiptDocument } from './receipt-document';

/**
 * The language and number style of a receipt. Germany's model is German and the British summary
 * English, whatever the locale; Switzerland prints the locale's national language (French,
 * Italian) or English when asked, German otherwise.
 */
export type ReceiptLanguage = 'de' | 'fr' | 'it' | 'en';

export function languageOf(doc: ReceiptDocument): ReceiptLanguage {
  if (doc.country === 'DE') return 'de';
  if (doc.country === 'GB') return 'en';
  const language = doc.locale.toLowerCase().split(/[-_]/)[0];
  return language === 'fr' || language === 'it' || language === 'en' ? language : 'de';
}

export const MONEY_STYLE: Readonly<Record<ReceiptDocument['country'], MoneyStyle>> = {
  DE: 'de-DE',
  CH: 'de-CH',
  GB: 'en-GB',
};

export const DATE_STYLE: Readonly<Record<ReceiptDocument['country'], DateStyle>> = {
  DE: 'dotted',
  CH: 'dotted',
  GB: 'slashed',
};

export function donorDisplayName(name: DonorName): string {
  return 'organisation_name' in name ? name.organisation_name : `${name.first_name} ${name.last_name}`;
}

/** What every receipt says about its own standing: void, or the receipt it replaces. */
export const STATUS_TEXT: Readonly<
  Record<ReceiptLanguage, { void: string; voidBanner: string; replaces: (number: string) => string }>
> = {
  de: {
    void: 'UNGÜLTIG',
    voidBanner: 'UNGÜLTIG – diese Bestätigung wurde storniert und ist kein Nachweis für steuerliche Zwecke.',
    replaces: (number) => `ersetzt Bestätigung Nr. ${number}`,
  },
  fr: {
    void: 'ANNULÉ',
    voidBanner: 'ANNULÉ – cette attestation a été annulée et n’est pas valable à des fins fiscales.',
    replaces: (number) => `remplace l’attestation n° ${number}`,
  },
  it: {
    void: 'ANNULLATO',
    voidBanner: 'ANNULLATO – questa attestazione è stata annullata e non è valida a fini fiscali.',
    replaces: (number) => `sostituisce l’attestazione n. ${number}`,
  },
  en: {
    void: 'VOID',
    voidBanner: 'VOID – this receipt was cancelled and is not valid for tax purposes.',
    replaces: (number) => `replaces receipt no. ${number}`,
  },
};

/** The page furniture: "Nr. 2025-000042 · Seite 2 von 3". */
export const PAGE_TEXT: Readonly<Record<ReceiptLanguage, (number: string, page: number, pages: number) => string>> = {
  de: (number, page, pages) => `Nr. ${number} · Seite ${page} von ${pages}`,
  fr: (number, page, pages) => `N° ${number} · page ${page} sur ${pages}`,
  it: (number, page, pages) => `N. ${number} · pagina ${page} di ${pages}`,
  en: (number, page, pages) => `No. ${number} · page ${page} of ${pages}`,
};
