/** Test support: hostile fixtures for every page and the checks every page must pass. */
import { expect } from 'vitest';
import { assetPath } from './assets';
import { htmlLang, merchantCategoryOptions, PAGE_LOCALES, type PageLocale, t } from './messages';
import {
  type FieldErrors,
  ONBOARD_FIELDS,
  type OnboardFormValues,
  type PageContext,
  type PartnerView,
  renderEmailStep,
  renderOnboardStep,
  renderPickOrganisation,
  renderProblem,
  renderSignInStep,
} from './render';
import { byId, byTag, type Element, parseDocument, textOf, within } from './testing-html';

/** Breaks out of text, of double- and single-quoted attributes and of templates if not escaped. */
export const HOSTILE = `"><script>alert('x')</script><img src=x onerror=alert(1)>\`{partner}&amp;'`;
export const LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" width="130" height="48"><script>alert(1)</script><text>LOGO-MARKER</text></svg>';

export const partner: PartnerView = {
  name: `${HOSTILE} name`,
  description: `${HOSTILE} description`,
  logoSvg: LOGO,
  returnLabel: `${HOSTILE} label`,
  returnUrl: 'https://partner.example/return?a=1&b=2',
};

export function context(locale: PageLocale, redirect = true): PageContext {
  return {
    locale,
    partner,
    token: `${HOSTILE} token`,
    csrf: `${HOSTILE} csrf`,
    selfPath: '/connect?token=abc&x=%3C',
    ...(redirect ? { redirectParam: `${HOSTILE} redirect` } : {}),
  };
}

export const allValues = Object.fromEntries(ONBOARD_FIELDS.map((f) => [f, `${HOSTILE} ${f}`])) as OnboardFormValues;
export const allErrors = (names: readonly string[]): FieldErrors =>
  Object.fromEntries(names.map((n) => [n, `${HOSTILE} error ${n}`]));
export const orgs = [
  { uuid: `${HOSTILE} uuid 1`, name: `${HOSTILE} org 1` },
  { uuid: 'uuid-2', name: 'Second organisation' },
];

export interface Case {
  name: string;
  doc: string;
  ctx?: PageContext;
  errors?: FieldErrors;
  action?: string;
}

export function stepCases(locale: PageLocale): Case[] {
  const ctx = context(locale);
  const mccOptions = merchantCategoryOptions(locale);
  const emailErrors = allErrors(['email', 'recaptcha_token']);
  const onboardErrors = allErrors([...ONBOARD_FIELDS, 'general']);
  const pickErrors = allErrors(['organisation_uuid']);
  const signInErrors = allErrors(['email', 'password']);
  const testCaptcha = { kind: 'test', token: `${HOSTILE} captcha` } as const;
  return [
    {
      name: 'email',
      ctx,
      action: '/connect/email',
      doc: renderEmailStep(ctx, { email: HOSTILE, captcha: testCaptcha }),
    },
    {
      name: 'email without redirect',
      ctx: context(locale, false),
      action: '/connect/email',
      doc: renderEmailStep(context(locale, false), { captcha: testCaptcha }),
    },
    {
      name: 'email, recaptcha, errors',
      ctx,
      errors: emailErrors,
      action: '/connect/email',
      doc: renderEmailStep(ctx, { errors: emailErrors, captcha: { kind: 'recaptcha', siteKey: HOSTILE } }),
    },
    {
      name: 'onboard',
      ctx,
      action: '/connect/onboard',
      doc: renderOnboardStep(ctx, { values: allValues, mccOptions }),
    },
    {
      name: 'onboard, errors',
      ctx,
      errors: onboardErrors,
      action: '/connect/onboard',
      doc: renderOnboardStep(ctx, { values: {}, errors: onboardErrors, mccOptions }),
    },
    { name: 'sign-in', ctx, action: '/connect/sign-in', doc: renderSignInStep(ctx, { email: HOSTILE }) },
    {
      name: 'sign-in, errors',
      ctx,
      errors: signInErrors,
      action: '/connect/sign-in',
      doc: renderSignInStep(ctx, { email: HOSTILE, errors: signInErrors }),
    },
    {
      name: 'pick',
      ctx,
      action: '/connect/connect',
      doc: renderPickOrganisation(ctx, { ticket: HOSTILE, organisations: orgs }),
    },
    {
      name: 'pick, errors',
      ctx,
      errors: pickErrors,
      action: '/connect/connect',
      doc: renderPickOrganisation(ctx, { ticket: HOSTILE, organisations: orgs, errors: pickErrors }),
    },
    {
      name: 'pick, no organisations',
      ctx,
      errors: { organisation_uuid: t(locale, 'error_no_organisations') },
      doc: renderPickOrganisation(ctx, { ticket: HOSTILE, organisations: [] }),
    },
  ];
}

export const PROBLEMS = ['unknown', 'expired', 'used', 'csrf', 'failed'] as const;

export function problemCases(locale: PageLocale): Case[] {
  return PROBLEMS.flatMap((problem) => [
    { name: `problem ${problem}`, doc: renderProblem(locale, problem, partner) },
    { name: `problem ${problem} without partner`, doc: renderProblem(locale, problem) },
  ]);
}

const attr = (e: Element | undefined, name: string) => e?.attrs.get(name);
const controls = (elements: Element[]) =>
  elements.filter(
    (e) => (e.tag === 'input' && attr(e, 'type') !== 'hidden') || e.tag === 'select' || e.tag === 'textarea',
  );

export function checkDocument(locale: PageLocale, c: Case): Element[] {
  const { doc } = c;
  expect(doc.startsWith(`<!doctype html>\n<html lang="${htmlLang(locale)}">`)).toBe(true);
  const elements = parseDocument(doc); // throws on anything a value could have broken
  const one = (tag: string) => {
    expect(byTag(elements, tag), tag).toHaveLength(1);
    return byTag(elements, tag)[0] as Element;
  };
  const h1 = textOf(doc, one('h1'));
  const title = textOf(doc, one('title'));
  expect(h1).not.toBe('');
  expect(title).toContain(h1);
  one('main');

  // CSP-compatible: external scripts and styles only, no handlers, no style attributes.
  expect(byTag(elements, 'style')).toHaveLength(0);
  for (const e of elements) {
    for (const name of e.attrs.keys())
      expect(name === 'style' || name.startsWith('on'), `${e.tag} ${name}`).toBe(false);
  }
  const scripts = byTag(elements, 'script').map((s) => attr(s, 'src'));
  expect(scripts[0]).toBe(assetPath('connect.js'));
  for (const src of scripts.slice(1)) expect(src).toMatch(/^https:\/\/www\.google\.com\/recaptcha\/api\.js\?hl=/);
  expect(byTag(elements, 'link').map((l) => attr(l, 'href'))).toEqual([assetPath('connect.css')]);

  // The logo: a data: image only, never the SVG itself.
  expect(doc).not.toContain('LOGO-MARKER');
  expect(doc).not.toMatch(/<svg/i);
  for (const img of byTag(elements, 'img')) {
    const src = attr(img, 'src') ?? '';
    expect(src.startsWith('data:image/svg+xml;base64,')).toBe(true);
    expect(Buffer.from(src.slice(26), 'base64').toString('utf8')).toBe(LOGO);
    expect(attr(img, 'alt')).toBe(partner.name);
  }

  // ids unique; labels; descriptions; invalid fields; autocomplete.
  const ids = elements.flatMap((e) => (e.attrs.has('id') ? [attr(e, 'id')] : []));
  expect(new Set(ids).size).toBe(ids.length);
  const labels = byTag(elements, 'label');
  for (const control of controls(elements)) {
    const id = attr(control, 'id');
    expect(id, control.tag).toBeTruthy();
    expect(
      labels.filter((l) => attr(l, 'for') === id),
      `label for ${id}`,
    ).toHaveLength(1);
    if (control.attrs.has('required') && attr(control, 'type') !== 'radio') {
      expect(attr(control, 'autocomplete'), `autocomplete of ${id}`).toBeTruthy();
    }
  }
  for (const label of labels) expect(ids).toContain(attr(label, 'for'));
  for (const e of elements.filter((x) => x.attrs.has('aria-describedby'))) {
    for (const id of (attr(e, 'aria-describedby') ?? '').split(' ')) expect(ids, `described by ${id}`).toContain(id);
  }
  for (const e of elements.filter((x) => attr(x, 'aria-invalid') === 'true')) {
    const described = (attr(e, 'aria-describedby') ?? '').split(' ').map((id) => byId(elements, id));
    const error = described.find((d) => attr(d, 'class') === 'field-error');
    expect(error, `error text of ${attr(e, 'id')}`).toBeDefined();
    expect(textOf(doc, error as Element)).not.toBe('');
  }

  // Forms: POST, browser validation on, hidden fields, one submit button.
  const forms = byTag(elements, 'form');
  expect(forms).toHaveLength(c.action ? 1 : 0);
  for (const form of forms) {
    expect(attr(form, 'method')).toBe('post');
    expect(attr(form, 'action')).toBe(c.action);
    expect(form.attrs.has('novalidate')).toBe(false);
    const inner = within(doc, elements, form);
    const hidden = (name: string) =>
      inner.filter((e) => e.tag === 'input' && attr(e, 'type') === 'hidden' && attr(e, 'name') === name);
    const ctx = c.ctx as PageContext;
    expect(hidden('csrf').map((e) => attr(e, 'value'))).toEqual([ctx.csrf]);
    expect(hidden('token').map((e) => attr(e, 'value'))).toEqual([ctx.token]);
    expect(hidden('locale').map((e) => attr(e, 'value'))).toEqual([locale]);
    expect(hidden('redirect_url').map((e) => attr(e, 'value'))).toEqual(
      ctx.redirectParam === undefined ? [] : [ctx.redirectParam],
    );
    const buttons = byTag(inner, 'button');
    expect(buttons.map((b) => attr(b, 'type'))).toEqual(['submit']);
    expect(inner.some((e) => e.tag === 'input' && attr(e, 'type') === 'submit')).toBe(false);
  }
  for (const fieldset of byTag(elements, 'fieldset')) {
    expect(within(doc, elements, fieldset)[0]?.tag, 'first child of fieldset').toBe('legend');
  }

  // Error summary at the top of main, linking to the fields.
  const summary = byId(elements, 'error-summary');
  const hasErrors = Object.keys(c.errors ?? {}).length > 0;
  expect(summary !== undefined).toBe(hasErrors);
  const errorPrefix = t(locale, 'doc_title_error', { title: '' }).replace(/\s+/g, ' ').trim();
  expect(title.startsWith(errorPrefix)).toBe(hasErrors);
  if (summary) {
    expect(attr(summary, 'role')).toBe('alert');
    expect(attr(summary, 'tabindex')).toBe('-1');
    expect(within(doc, elements, byTag(elements, 'main')[0] as Element)[0]).toBe(summary);
    const links = byTag(within(doc, elements, summary), 'a');
    for (const link of links) expect(ids).toContain(attr(link, 'href')?.slice(1));
    expect(doc.slice(summary.end)).toContain(t(locale, 'error_summary_heading'));
  }

  // Language switcher and return link for the steps.
  if (c.ctx) {
    const nav = byTag(elements, 'nav')[0] as Element;
    expect(attr(nav, 'aria-label')).toBe(t(locale, 'language_switcher'));
    const links = byTag(within(doc, elements, nav), 'a');
    expect(links.map((a) => attr(a, 'href'))).toEqual(PAGE_LOCALES.map((l) => `${c.ctx?.selfPath}&locale=${l}`));
    expect(links.filter((a) => attr(a, 'aria-current') === 'true').map((a) => attr(a, 'hreflang'))).toEqual([
      htmlLang(locale),
    ]);
    const back = byTag(within(doc, elements, byTag(elements, 'footer')[0] as Element), 'a')[0];
    expect(attr(back, 'href')).toBe(partner.returnUrl);
    expect(textOf(doc, back as Element)).toBe(t(locale, 'return_to', { label: partner.returnLabel }));
  }
  return elements;
}
