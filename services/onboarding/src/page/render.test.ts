import { describe, it } from 'vitest';
import { PAGE_LOCALES } from './messages';
import { checkDocument, problemCases, stepCases } from './testing-pages';

describe.each(PAGE_LOCALES)('every page in %s', (locale) => {
  it.each([...stepCases(locale), ...problemCases(locale)].map((c) => [c.name, c] as const))(
    '%s: well-formed, escaped, accessible, CSP-compatible',
    (_name, c) => {
      checkDocument(locale, c);
    },
  );
});
