/**
 * The donor portal's message catalogue: every text its pages show, in the four portal locales
 * (the locales of its links and mails). The English catalogue defines the keys; the others are
 * typed `Messages`, so a missing or unknown key in any locale does not compile (and
 * messages.test.ts checks it at run time too).
 */
import { PORTAL_LOCALES, type PortalLocale } from '../repository/link-repository';
import { de } from './messages-de';
import { en } from './messages-en';
import { fr } from './messages-fr';
import { it } from './messages-it';

export type MessageKey = keyof typeof en;
export type Messages = { readonly [K in MessageKey]: string };

export const MESSAGES: Readonly<Record<PortalLocale, Messages>> = { de, fr, it, en };

/** Each language's name in that language, for the language switcher. */
export const LOCALE_NAMES: Readonly<Record<PortalLocale, string>> = {
  de: 'Deutsch',
  fr: 'Français',
  it: 'Italiano',
  en: 'English',
};

/** `lang` of each locale: the portal speaks Swiss German, French and Italian, British English. */
export const HTML_LANG: Readonly<Record<PortalLocale, string>> = { de: 'de-CH', fr: 'fr-CH', it: 'it-CH', en: 'en-GB' };

const PLACEHOLDER = /\{(\w+)\}/g;

/** Fills `{name}` placeholders; one without a value stays as it is. */
export function format(template: string, values: Readonly<Record<string, string | number>> = {}): string {
  return template.replace(PLACEHOLDER, (match, name: string) =>
    Object.hasOwn(values, name) ? String(values[name]) : match,
  );
}

/** The sorted placeholder names of a template. */
export function placeholders(template: string): string[] {
  return [...new Set(Array.from(template.matchAll(PLACEHOLDER), (m) => m[1] ?? ''))].sort();
}

export function t(locale: PortalLocale, key: MessageKey, values?: Readonly<Record<string, string | number>>): string {
  return format(MESSAGES[locale][key], values);
}

export function isPortalLocale(value: unknown): value is PortalLocale {
  return typeof value === 'string' && (PORTAL_LOCALES as readonly string[]).includes(value);
}

/** The page's locale: the one asked for (`?locale=`, a form's `locale`), else the known one, else English. */
export function pageLocale(asked: string | undefined, known?: PortalLocale): PortalLocale {
  const language = asked?.slice(0, 2).toLowerCase();
  if (isPortalLocale(language)) return language;
  return known ?? 'en';
}
