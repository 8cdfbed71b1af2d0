/**
 * The message catalogue of the hosted connect page: every user-visible string, in the four page
 * locales. The English catalogue defines the keys; the others are typed `Messages`, so a missing or
 * unknown key in any locale does not compile. Texts are plain strings (never HTML): the templates
 * escape them like any other value.
 */
import { MERCHANT_CATEGORY_CODES, type MerchantCategoryCode } from '../domain/rules';
import { de_CH } from './messages-de';
import { en_GB } from './messages-en';
import { fr_CH } from './messages-fr';
import { it_CH } from './messages-it';

export type PageLocale = 'de_CH' | 'fr_CH' | 'it_CH' | 'en_GB';

/** The page locales, in the order of the language switcher. */
export const PAGE_LOCALES: readonly PageLocale[] = ['de_CH', 'fr_CH', 'it_CH', 'en_GB'];

/** Each language's name in that language (endonym): the same in every catalogue by design. */
export const LOCALE_NAMES: Readonly<Record<PageLocale, string>> = {
  de_CH: 'Deutsch',
  fr_CH: 'Français',
  it_CH: 'Italiano',
  en_GB: 'English',
};

export type MessageKey = keyof typeof en_GB;
export type Messages = { readonly [K in MessageKey]: string };

export const MESSAGES: Readonly<Record<PageLocale, Messages>> = { de_CH, fr_CH, it_CH, en_GB };

export type FormatValues = Readonly<Record<string, string | number>>;

const PLACEHOLDER = /\{(\w+)\}/g;

/** Fills `{name}` placeholders; a placeholder without a value stays as it is. */
export function format(template: string, values: FormatValues = {}): string {
  return template.replace(PLACEHOLDER, (match, name: string) =>
    Object.hasOwn(values, name) ? String(values[name]) : match,
  );
}

/** The sorted, de-duplicated placeholder names of a template. */
export function placeholders(template: string): string[] {
  return [...new Set(Array.from(template.matchAll(PLACEHOLDER), (m) => m[1] ?? ''))].sort();
}

/** A message of the catalogue with its placeholders filled. */
export function t(locale: PageLocale, key: MessageKey, values?: FormatValues): string {
  return format(MESSAGES[locale][key], values);
}

export function isPageLocale(value: unknown): value is PageLocale {
  return typeof value === 'string' && (PAGE_LOCALES as readonly string[]).includes(value);
}

/** `de_CH` → `de-CH` (BCP 47, for `lang` and `hreflang`). */
export function htmlLang(locale: PageLocale): string {
  return locale.replace('_', '-');
}

/**
 * The page locale: the requested one (`locale` query or form field) when valid, else the best
 * match of an `Accept-Language` header by language, else the fallback.
 */
export function resolveLocale(
  requested: string | undefined,
  acceptLanguage: string | undefined,
  fallback: PageLocale = 'de_CH',
): PageLocale {
  if (isPageLocale(requested)) return requested;
  const ranges = (acceptLanguage ?? '')
    .split(',')
    .map((part, index) => {
      const [range = '', ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const quality = q === undefined ? 1 : Number(q.slice(2));
      return { language: range.trim().toLowerCase().split('-')[0] ?? '', quality, index };
    })
    .filter((r) => r.language !== '' && Number.isFinite(r.quality) && r.quality > 0)
    .sort((a, b) => b.quality - a.quality || a.index - b.index);
  for (const range of ranges) {
    const match = PAGE_LOCALES.find((locale) => locale.startsWith(`${range.language}_`));
    if (match) return match;
  }
  return fallback;
}

/** The merchant category options of the onboarding form, labelled in the page locale. */
export function merchantCategoryOptions(locale: PageLocale): { code: MerchantCategoryCode; label: string }[] {
  return MERCHANT_CATEGORY_CODES.map(({ code }) => ({ code, label: t(locale, `mcc_${code}`) }));
}
