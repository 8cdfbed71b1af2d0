import { describe, expect, it } from 'vitest';
import { MERCHANT_CATEGORY_CODES } from '../domain/rules';
import {
  format,
  htmlLang,
  isPageLocale,
  LOCALE_NAMES,
  MESSAGES,
  type MessageKey,
  merchantCategoryOptions,
  PAGE_LOCALES,
  placeholders,
  resolveLocale,
  t,
} from './messages';

const KEYS = Object.keys(MESSAGES.en_GB) as MessageKey[];

describe('catalogue', () => {
  it.each(PAGE_LOCALES)('%s has exactly the keys of en_GB, each non-empty and trimmed', (locale) => {
    const catalogue = MESSAGES[locale];
    expect(Object.keys(catalogue).sort()).toEqual([...KEYS].sort());
    for (const key of KEYS) {
      expect(catalogue[key].trim(), `${locale}.${key}`).not.toBe('');
      expect(catalogue[key], `${locale}.${key}`).toBe(catalogue[key].trim());
    }
  });

  it.each(KEYS)('%s has the same placeholders in every locale', (key) => {
    const expected = placeholders(MESSAGES.en_GB[key]);
    for (const locale of PAGE_LOCALES) expect(placeholders(MESSAGES[locale][key]), locale).toEqual(expected);
  });

  it('holds plain text, never markup or stray braces', () => {
    for (const locale of PAGE_LOCALES) {
      for (const key of KEYS) {
        const text = MESSAGES[locale][key];
        expect(text, `${locale}.${key}`).not.toMatch(/[<>&]/);
        expect(text.replace(/\{\w+\}/g, ''), `${locale}.${key}`).not.toMatch(/[{}]/);
      }
    }
  });

  it('writes Swiss German without ß', () => {
    for (const key of KEYS) expect(MESSAGES.de_CH[key], key).not.toContain('ß');
  });

  it('has the texts the page needs, e.g. the buttons and headings in English', () => {
    expect(t('en_GB', 'continue')).toBe('Continue');
    expect(t('en_GB', 'onboard_submit')).toBe('Create organisation and connect');
    expect(t('en_GB', 'signin_submit')).toBe('Sign in');
    expect(t('en_GB', 'pick_submit')).toBe('Connect');
    expect(t('en_GB', 'error_summary_heading')).toBe('Please correct the following');
    expect(t('en_GB', 'return_to', { label: 'Fundraiser' })).toBe('Return to Fundraiser');
    expect(t('de_CH', 'intro', { partner: 'Acme' })).toBe('Acme möchte sich mit Ihrer Organisation verbinden.');
    expect(t('fr_CH', 'password_hint', { min: 10 })).toBe('Au moins 10 caractères.');
    expect(t('it_CH', 'section_bank')).toBe('Conto bancario');
  });

  it('differs from English where a translation is expected', () => {
    for (const locale of ['de_CH', 'fr_CH', 'it_CH'] as const) {
      for (const key of ['intro', 'continue', 'email_lead', 'error_required', 'problem_failed_text'] as const) {
        expect(MESSAGES[locale][key], `${locale}.${key}`).not.toBe(MESSAGES.en_GB[key]);
      }
    }
  });
});

describe('format', () => {
  it('fills placeholders and leaves unknown ones', () => {
    expect(format('{a} and {b}, {a}', { a: 'x', b: 2 })).toBe('x and 2, x');
    expect(format('{a} {missing}', { a: 'x' })).toBe('x {missing}');
    expect(format('no placeholders')).toBe('no placeholders');
  });

  it('does not interpolate inside values or from the prototype', () => {
    expect(format('{a}', { a: '{b}', b: 'no' })).toBe('{b}');
    expect(format('{toString} {constructor}', {})).toBe('{toString} {constructor}');
    expect(format('{a}', { a: '$& $1 $$' })).toBe('$& $1 $$');
  });

  it('lists placeholders', () => {
    expect(placeholders('{b} {a} {b}')).toEqual(['a', 'b']);
  });
});

describe('locales', () => {
  it('knows the four page locales with their own names', () => {
    expect([...PAGE_LOCALES].sort()).toEqual(['de_CH', 'en_GB', 'fr_CH', 'it_CH']);
    expect(LOCALE_NAMES).toEqual({ de_CH: 'Deutsch', fr_CH: 'Français', it_CH: 'Italiano', en_GB: 'English' });
    expect(htmlLang('de_CH')).toBe('de-CH');
    expect(isPageLocale('it_CH')).toBe(true);
    expect(isPageLocale('de_DE')).toBe(false);
    expect(isPageLocale('toString')).toBe(false);
  });

  it('resolves the requested locale, then Accept-Language, then the fallback', () => {
    expect(resolveLocale('fr_CH', 'en')).toBe('fr_CH');
    expect(resolveLocale('xx', 'it-CH,it;q=0.9,en;q=0.5')).toBe('it_CH');
    expect(resolveLocale(undefined, 'en-US;q=0.4, fr;q=0.8')).toBe('fr_CH');
    expect(resolveLocale(undefined, 'es, ja')).toBe('de_CH');
    expect(resolveLocale(undefined, 'fr;q=0, en')).toBe('en_GB');
    expect(resolveLocale(undefined, undefined, 'en_GB')).toBe('en_GB');
  });

  it('labels every merchant category code in every locale', () => {
    const codes = MERCHANT_CATEGORY_CODES.map((entry) => entry.code);
    expect(codes).toEqual(['8699', '7997', '8398', '8641', '8651', '8661', '0000']);
    for (const locale of PAGE_LOCALES) {
      const options = merchantCategoryOptions(locale);
      expect(options.map((o) => o.code)).toEqual(codes);
      expect(new Set(options.map((o) => o.label)).size).toBe(options.length);
    }
  });
});
