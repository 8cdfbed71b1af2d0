import { describe, expect, it } from 'vitest';
import { merchantCategoryOptions, PAGE_LOCALES, t } from './messages';
import {
  cspFor,
  ONBOARD_FIELDS,
  PASSWORD_MIN_LENGTH,
  problemStatus,
  renderEmailStep,
  renderOnboardStep,
  renderPickOrganisation,
  renderProblem,
  renderSignInStep,
} from './render';
import { byId, byTag, type Element, parseDocument, textOf, within } from './testing-html';
import { allErrors, allValues, checkDocument, context, HOSTILE, partner } from './testing-pages';

const attr = (e: Element | undefined, name: string) => e?.attrs.get(name);
const ctx = context('en_GB');
const mccOptions = merchantCategoryOptions('en_GB');
const field = (elements: Element[], name: string) => elements.find((e) => attr(e, 'name') === name);

describe('e-mail step', () => {
  it('with the test captcha: the token in a hidden field and a visible note, no Google script', () => {
    const doc = renderEmailStep(ctx, { email: HOSTILE, captcha: { kind: 'test', token: 'test-captcha-ok' } });
    const elements = parseDocument(doc);
    expect(attr(field(elements, 'recaptcha_token'), 'value')).toBe('test-captcha-ok');
    expect(attr(field(elements, 'recaptcha_token'), 'type')).toBe('hidden');
    expect(doc).toContain(t('en_GB', 'captcha_test_note'));
    expect(doc).not.toContain('g-recaptcha');
    expect(doc).not.toContain('google.com');
    const email = field(elements, 'email');
    expect([attr(email, 'type'), attr(email, 'value'), attr(email, 'autocomplete')]).toEqual([
      'email',
      HOSTILE,
      'email',
    ]);
    expect(email?.attrs.has('required')).toBe(true);
  });

  it('with the captcha off: only the hidden token, no note, no widget, no Google script', () => {
    const doc = renderEmailStep(ctx, { captcha: { kind: 'off', token: 'captcha-off' } });
    const elements = parseDocument(doc);
    expect(attr(field(elements, 'recaptcha_token'), 'value')).toBe('captcha-off');
    expect(attr(field(elements, 'recaptcha_token'), 'type')).toBe('hidden');
    expect(doc).not.toContain(t('en_GB', 'captcha_test_note'));
    expect(doc).not.toContain(t('en_GB', 'captcha_prompt'));
    expect(doc).not.toContain('g-recaptcha');
    expect(doc).not.toContain('google.com');
  });

  it('with reCAPTCHA: the widget, its script in the page language and an empty token field', () => {
    const doc = renderEmailStep(context('it_CH'), { captcha: { kind: 'recaptcha', siteKey: HOSTILE } });
    const elements = parseDocument(doc);
    const widget = elements.find((e) => attr(e, 'class') === 'g-recaptcha');
    expect(attr(widget, 'data-sitekey')).toBe(HOSTILE);
    expect(attr(widget, 'data-callback')).toBe('connectCaptchaSolved');
    expect(byTag(elements, 'script').map((s) => attr(s, 'src'))).toContain(
      'https://www.google.com/recaptcha/api.js?hl=it',
    );
    expect(attr(field(elements, 'recaptcha_token'), 'value')).toBe('');
  });

  it('shows field errors next to the field and in the summary, with "Error:" in the title', () => {
    const doc = renderEmailStep(ctx, { errors: { email: 'Bad address' }, captcha: { kind: 'test', token: 'x' } });
    const elements = parseDocument(doc);
    const email = field(elements, 'email');
    expect(attr(email, 'aria-invalid')).toBe('true');
    expect(textOf(doc, byId(elements, attr(email, 'aria-describedby') ?? '') as Element)).toBe('Bad address');
    expect(textOf(doc, byTag(elements, 'title')[0] as Element)).toMatch(/^Error: /);
    const summaryLinks = byTag(within(doc, elements, byId(elements, 'error-summary') as Element), 'a');
    expect(summaryLinks.map((a) => [attr(a, 'href'), textOf(doc, a)])).toEqual([['#email', 'Bad address']]);
  });
});

describe('onboarding step', () => {
  const autocomplete: Record<string, string> = {
    user_email: 'email',
    user_first_name: 'given-name',
    user_last_name: 'family-name',
    password: 'new-password',
    password_confirmation: 'new-password',
    organisation_name: 'organization',
    main_address_line1: 'address-line1',
    main_address_line2: 'address-line2',
    main_postal_code: 'postal-code',
    main_city: 'address-level2',
    main_country: 'country',
  };

  it('has every field with the exact name, prefilled (escaped) except the passwords', () => {
    const doc = renderOnboardStep(ctx, { values: allValues, mccOptions });
    const elements = parseDocument(doc);
    for (const name of ONBOARD_FIELDS) {
      const control = field(elements, name);
      expect(control, name).toBeDefined();
      if (autocomplete[name]) expect(attr(control, 'autocomplete'), name).toBe(autocomplete[name]);
      if (control?.tag === 'input' && attr(control, 'type') !== 'password') {
        expect(attr(control, 'value'), name).toBe(allValues[name]);
      }
      expect(control?.attrs.has('required'), name).toBe(name !== 'main_address_line2' && name !== 'bank_name');
    }
    expect(doc).not.toContain('password_confirmation" value');
    expect(field(elements, 'password')?.attrs.has('value')).toBe(false);
    expect(field(elements, 'password_confirmation')?.attrs.has('value')).toBe(false);
    expect(field(elements, 'user_email')?.attrs.has('readonly')).toBe(true);
    expect(attr(field(elements, 'password'), 'minlength')).toBe(String(PASSWORD_MIN_LENGTH));
    expect(doc).toContain(t('en_GB', 'password_hint', { min: 10 }));
    expect(attr(field(elements, 'password_confirmation'), 'data-match')).toBe('password');
  });

  it('groups the fields in fieldsets with the four section legends', () => {
    const doc = renderOnboardStep(context('de_CH'), { values: {}, mccOptions: merchantCategoryOptions('de_CH') });
    const legends = byTag(parseDocument(doc), 'legend').map((l) => textOf(doc, l));
    expect(legends).toEqual(['Ihre Angaben', 'Organisation', 'Adresse', 'Bankkonto']);
  });

  it('selects the page locale and the placeholder by default, the given values otherwise', () => {
    const selected = (doc: string, name: string) => {
      const elements = parseDocument(doc);
      const select = field(elements, name) as Element;
      return within(doc, elements, select)
        .filter((o) => o.attrs.has('selected'))
        .map((o) => attr(o, 'value'));
    };
    const empty = renderOnboardStep(context('fr_CH'), { values: {}, mccOptions });
    expect(selected(empty, 'user_locale')).toEqual(['fr_CH']);
    expect(selected(empty, 'merchant_category_code')).toEqual(['']);
    expect(attr(field(parseDocument(empty), 'main_country'), 'value')).toBe('CH');
    const filled = renderOnboardStep(ctx, {
      values: { user_locale: 'it_CH', merchant_category_code: '8398' },
      mccOptions,
    });
    expect(selected(filled, 'user_locale')).toEqual(['it_CH']);
    expect(selected(filled, 'merchant_category_code')).toEqual(['8398']);
  });

  it('lists the errors in form order in the summary; errors of unknown fields without a link', () => {
    const errors = { general: 'Something else', iban: 'Bad IBAN', user_first_name: 'Required' };
    const doc = renderOnboardStep(ctx, { values: {}, errors, mccOptions });
    const elements = parseDocument(doc);
    const items = byTag(within(doc, elements, byId(elements, 'error-summary') as Element), 'li');
    expect(items.map((li) => textOf(doc, li))).toEqual(['Required', 'Bad IBAN', 'Something else']);
    const links = byTag(within(doc, elements, byId(elements, 'error-summary') as Element), 'a');
    expect(links.map((a) => attr(a, 'href'))).toEqual(['#user_first_name', '#iban']);
    expect(attr(field(elements, 'iban'), 'aria-describedby')).toBe('iban-hint iban-error');
    expect(attr(field(elements, 'user_last_name'), 'aria-invalid')).toBeUndefined();
  });
});

describe('sign-in step', () => {
  it('asks for e-mail (username) and current password', () => {
    const doc = renderSignInStep(ctx, { email: 'ann@example.ch' });
    const elements = parseDocument(doc);
    expect(attr(field(elements, 'email'), 'autocomplete')).toBe('username');
    expect(attr(field(elements, 'email'), 'value')).toBe('ann@example.ch');
    expect(attr(field(elements, 'password'), 'autocomplete')).toBe('current-password');
    expect(attr(field(elements, 'password'), 'type')).toBe('password');
    expect(doc).toContain('There is already an account for ann@example.ch.');
    expect(textOf(doc, byTag(elements, 'button')[0] as Element)).toBe('Sign in');
  });
});

describe('organisation picker', () => {
  it('is a radio group in a fieldset with legend, first option checked, and carries the ticket', () => {
    const organisations = [
      { uuid: 'u1', name: 'Alpha' },
      { uuid: 'u2', name: 'Beta' },
    ];
    const doc = renderPickOrganisation(ctx, { ticket: 'T-1', organisations });
    const elements = parseDocument(doc);
    const radios = elements.filter((e) => attr(e, 'type') === 'radio');
    expect(radios.map((r) => [attr(r, 'name'), attr(r, 'value'), r.attrs.has('checked')])).toEqual([
      ['organisation_uuid', 'u1', true],
      ['organisation_uuid', 'u2', false],
    ]);
    expect(attr(field(elements, 'ticket'), 'value')).toBe('T-1');
    expect(textOf(doc, byTag(elements, 'legend')[0] as Element)).toBe('Your organisations');
    const checked = renderPickOrganisation(ctx, { ticket: 'T-1', organisations, selected: 'u2' });
    expect(
      parseDocument(checked)
        .filter((e) => e.attrs.has('checked'))
        .map((e) => attr(e, 'value')),
    ).toEqual(['u2']);
  });

  it('without organisations: the message and no form', () => {
    const doc = renderPickOrganisation(ctx, { ticket: 'T-1', organisations: [] });
    expect(byTag(parseDocument(doc), 'form')).toHaveLength(0);
    expect(doc).toContain(t('en_GB', 'error_no_organisations'));
  });
});

describe('problem pages', () => {
  it.each(['unknown', 'expired', 'used', 'csrf', 'failed'] as const)('%s: title, text, return link', (problem) => {
    for (const locale of PAGE_LOCALES) {
      const doc = renderProblem(locale, problem, partner);
      const elements = parseDocument(doc);
      expect(textOf(doc, byTag(elements, 'h1')[0] as Element)).toBe(t(locale, `problem_${problem}_title`));
      const lead = elements.find((e) => attr(e, 'class') === 'lead') as Element;
      expect(textOf(doc, lead)).toBe(t(locale, `problem_${problem}_text`));
      const links = byTag(elements, 'a').filter((a) => attr(a, 'href') === partner.returnUrl);
      expect(links.map((a) => textOf(doc, a))).toEqual([t(locale, 'return_to', { label: partner.returnLabel })]);
      expect(byTag(elements, 'form')).toHaveLength(0);
      expect(byTag(parseDocument(renderProblem(locale, problem)), 'a').map((a) => attr(a, 'href'))).toEqual(['#main']);
    }
    expect(problemStatus(problem)).toBeGreaterThanOrEqual(400);
  });

  it('offers "Try again" only for a same-origin path', () => {
    const retry = (retryPath: string) =>
      byTag(parseDocument(renderProblem('en_GB', 'csrf', undefined, { retryPath })), 'a')
        .map((a) => attr(a, 'href'))
        .filter((href) => href !== '#main');
    expect(retry('/connect?token=abc')).toEqual(['/connect?token=abc']);
    for (const bad of ['//evil.example/x', '/\\evil.example', 'https://evil.example', 'javascript:alert(1)', '/a b']) {
      expect(retry(bad), bad).toEqual([]);
    }
  });
});

describe('links and URLs', () => {
  it('does not link a return URL that is not http(s)', () => {
    const evil = { ...partner, returnUrl: 'javascript:alert(1)' };
    for (const doc of [
      renderSignInStep({ ...ctx, partner: evil }, { email: 'a@b.ch' }),
      renderProblem('en_GB', 'failed', evil),
    ]) {
      expect(doc).not.toContain('javascript:');
      const hrefs = byTag(parseDocument(doc), 'a').map((a) => attr(a, 'href') ?? '');
      expect(hrefs.every((href) => href.startsWith('/') || href.startsWith('#'))).toBe(true);
    }
  });

  it('falls back to /connect for a language link when selfPath is not a local path', () => {
    const doc = renderSignInStep({ ...ctx, selfPath: '//evil.example/connect' }, { email: 'a@b.ch' });
    const hrefs = byTag(parseDocument(doc), 'a').map((a) => attr(a, 'href'));
    expect(hrefs).toContain('/connect?locale=de_CH');
    expect(hrefs.some((h) => h?.includes('evil'))).toBe(false);
  });

  it('keeps a page with a redirect parameter and hostile values well-formed in every locale', () => {
    for (const locale of PAGE_LOCALES) {
      const c = context(locale);
      checkDocument(locale, {
        name: 'onboard',
        ctx: c,
        action: '/connect/onboard',
        errors: allErrors(['iban']),
        doc: renderOnboardStep(c, { values: allValues, errors: allErrors(['iban']), mccOptions }),
      });
    }
  });
});

describe('cspFor', () => {
  it('is the strict policy with the partner origin in form-action', () => {
    expect(cspFor(ctx, { kind: 'test', token: 'x' }, 'https://partner.example/some/path?q=1')).toBe(
      "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; " +
        "form-action 'self' https://partner.example; frame-ancestors 'none'; base-uri 'none'",
    );
  });

  it('allows Google for scripts and frames only with reCAPTCHA', () => {
    const csp = cspFor(ctx, { kind: 'recaptcha', siteKey: 'k' }, 'https://partner.example');
    const directives = Object.fromEntries(csp.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    expect(directives['script-src']).toEqual(["'self'", 'https://www.google.com', 'https://www.gstatic.com']);
    expect(directives['frame-src']).toEqual(['https://www.google.com', 'https://www.gstatic.com']);
    expect(directives['style-src']).toEqual(["'self'"]);
    expect(cspFor(ctx, { kind: 'test', token: 'x' }, undefined)).not.toContain('google');
    expect(cspFor(ctx, { kind: 'off', token: 'captcha-off' }, undefined)).not.toContain('google');
  });

  it('never allows inline code and keeps odd partner values out of the header', () => {
    for (const captcha of [{ kind: 'test', token: 'x' } as const, { kind: 'recaptcha', siteKey: 'k' } as const]) {
      const csp = cspFor(ctx, captcha, ['https://a.example', 'x; script-src *', "'unsafe-inline'", 'javascript:x']);
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(csp).not.toContain('*');
      expect(csp).toContain("form-action 'self' https://a.example;");
      expect(csp).not.toMatch(/[\r\n]/);
    }
  });
});
