import { describe, expect, it } from 'vitest';
import { PORTAL_LOCALES } from '../repository/link-repository';
import { MESSAGES, type MessageKey, pageLocale, placeholders, t } from './messages';

const KEYS = Object.keys(MESSAGES.en) as MessageKey[];

describe('the portal pages’ messages', () => {
  it.each(PORTAL_LOCALES)('%s has exactly the keys of English, each non-empty and trimmed', (locale) => {
    const catalogue = MESSAGES[locale];
    expect(Object.keys(catalogue).sort()).toEqual([...KEYS].sort());
    for (const key of KEYS) {
      expect(catalogue[key].trim(), `${locale}.${key}`).not.toBe('');
      expect(catalogue[key], `${locale}.${key}`).toBe(catalogue[key].trim());
    }
  });

  it.each(KEYS)('%s has the same placeholders in every locale', (key) => {
    const expected = placeholders(MESSAGES.en[key]);
    for (const locale of PORTAL_LOCALES) expect(placeholders(MESSAGES[locale][key]), locale).toEqual(expected);
  });

  it('holds plain text (no markup), Swiss German without ß, and translations where English is not meant', () => {
    for (const locale of PORTAL_LOCALES) {
      for (const key of KEYS) expect(MESSAGES[locale][key], `${locale}.${key}`).not.toMatch(/[<>&]/);
    }
    for (const key of KEYS) expect(MESSAGES.de[key], key).not.toContain('ß');
    // Only the title's pattern is the same in every language.
    const same = (['de', 'fr', 'it'] as const).flatMap((locale) =>
      KEYS.filter((key) => key !== 'doc_title' && MESSAGES[locale][key] === MESSAGES.en[key]).map(
        (key) => `${locale}.${key}`,
      ),
    );
    expect(same).toEqual([]);
  });

  it('fills placeholders and picks the page’s language: asked, else the known one, else English', () => {
    expect(t('en', 'continue_title', { organisation: 'Acme' })).toBe('Manage your donations to Acme');
    expect(t('de', 'problem_too_many_text', { minutes: 15 })).toContain('15 Minuten');
    expect(pageLocale('fr')).toBe('fr');
    expect(pageLocale('it_CH', 'de')).toBe('it');
    expect(pageLocale(undefined, 'de')).toBe('de');
    expect(pageLocale('es', 'fr')).toBe('fr');
    expect(pageLocale(undefined)).toBe('en');
  });
});
