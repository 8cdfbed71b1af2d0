/**
 * The pages of the hosted connect flow: pure functions from view data to a full HTML document.
 * Every value is escaped by the `html` template; the partner logo is only ever a `data:` image.
 */

import { definedFields } from '@svc/core';
import { errorSummary, hasErrors, inputField, postForm } from './fields';
import { html, type SafeHtml, safePath } from './html';
import { renderDocument, returnLink } from './layout';
import { type PageLocale, t } from './messages';
import type { Captcha, FieldErrors, PageContext, PartnerView } from './types';

export { cspFor } from './csp';
export { escapeHtml } from './html';
export { merchantCategoryOptions } from './messages';
export { renderOnboardStep } from './render-onboard';
export * from './types';

const RECAPTCHA_LANGUAGES: Readonly<Record<PageLocale, string>> = {
  de_CH: 'de-CH',
  fr_CH: 'fr',
  it_CH: 'it',
  en_GB: 'en-GB',
};

function page(ctx: PageContext, title: string, errors: FieldErrors | undefined, main: SafeHtml, head?: SafeHtml) {
  return renderDocument({
    locale: ctx.locale,
    title,
    hasErrors: hasErrors(errors),
    partner: ctx.partner,
    selfPath: ctx.selfPath,
    main,
    ...(head ? { head } : {}),
  });
}

function captchaBlock(locale: PageLocale, captcha: Captcha, errors: FieldErrors | undefined): SafeHtml {
  const error = errors?.recaptcha_token;
  const errorText = error ? html`<p class="field-error" id="captcha-error">${error}</p>` : '';
  if (captcha.kind === 'off') {
    return html`<div class="captcha" id="captcha" tabindex="-1">
${errorText}<input type="hidden" name="recaptcha_token" value="${captcha.token}">
</div>`;
  }
  if (captcha.kind === 'test') {
    return html`<div class="captcha" id="captcha" tabindex="-1">
${errorText}<p class="note">${t(locale, 'captcha_test_note')}</p>
<input type="hidden" name="recaptcha_token" value="${captcha.token}">
</div>`;
  }
  return html`<div class="captcha" id="captcha" tabindex="-1">
<p>${t(locale, 'captcha_prompt')}</p>
${errorText}<div class="g-recaptcha" data-sitekey="${captcha.siteKey}" data-callback="connectCaptchaSolved" data-expired-callback="connectCaptchaExpired"></div>
<noscript><p class="field-error">${t(locale, 'captcha_requires_js')}</p></noscript>
<input type="hidden" name="recaptcha_token" value="">
</div>`;
}

/** Step 1: the e-mail address (POST /connect/email). */
export function renderEmailStep(
  ctx: PageContext,
  input: { email?: string; errors?: FieldErrors; captcha: Captcha },
): string {
  const { locale } = ctx;
  const { errors, captcha } = input;
  const title = t(locale, 'email_title');
  const fields = html`${inputField(locale, errors, {
    name: 'email',
    type: 'email',
    label: t(locale, 'email_label'),
    value: input.email,
    required: true,
    autocomplete: 'email',
    attributes: { spellcheck: 'false', autocapitalize: 'off' },
  })}
${captchaBlock(locale, captcha, errors)}`;
  const main = html`${errorSummary(locale, errors, [{ name: 'email' }, { name: 'recaptcha_token', id: 'captcha' }])}
<h1>${title}</h1>
<p class="lead">${t(locale, 'email_lead')}</p>
${postForm(ctx, '/connect/email', fields, t(locale, 'continue'))}`;
  const head =
    captcha.kind === 'recaptcha'
      ? html`<script src="https://www.google.com/recaptcha/api.js?hl=${RECAPTCHA_LANGUAGES[locale]}" async defer></script>`
      : undefined;
  return page(ctx, title, errors, main, head);
}

/** Step 2b, known user: sign in (POST /connect/sign-in). */
export function renderSignInStep(ctx: PageContext, input: { email: string; errors?: FieldErrors }): string {
  const { locale } = ctx;
  const { errors } = input;
  const title = t(locale, 'signin_title');
  const fields = html`${inputField(locale, errors, {
    name: 'email',
    type: 'email',
    label: t(locale, 'email_label'),
    value: input.email,
    required: true,
    autocomplete: 'username',
    attributes: { spellcheck: 'false', autocapitalize: 'off' },
  })}
${inputField(locale, errors, {
  name: 'password',
  type: 'password',
  label: t(locale, 'password_label'),
  required: true,
  autocomplete: 'current-password',
  passwordToggle: true,
  attributes: { 'data-show-label': t(locale, 'password_show'), 'data-hide-label': t(locale, 'password_hide') },
})}`;
  const main = html`${errorSummary(locale, errors, [{ name: 'email' }, { name: 'password' }])}
<h1>${title}</h1>
<p class="lead">${t(locale, 'signin_lead', { email: input.email, partner: ctx.partner.name })}</p>
${postForm(ctx, '/connect/sign-in', fields, t(locale, 'signin_submit'))}`;
  return page(ctx, title, errors, main);
}

/** Step 3b: choose the organisation to connect (POST /connect/connect). */
export function renderPickOrganisation(
  ctx: PageContext,
  input: { ticket: string; organisations: { uuid: string; name: string }[]; errors?: FieldErrors; selected?: string },
): string {
  const { locale } = ctx;
  const { organisations } = input;
  const title = t(locale, 'pick_title');
  const errors: FieldErrors =
    organisations.length === 0 && !hasErrors(input.errors)
      ? { organisation_uuid: t(locale, 'error_no_organisations') }
      : (input.errors ?? {});
  const error = errors.organisation_uuid;
  const selected = organisations.some((o) => o.uuid === input.selected) ? input.selected : organisations[0]?.uuid;
  const radios = organisations.map(
    (o, i) => html`<div class="radio">
<input type="radio" id="organisation_uuid-${i}" name="organisation_uuid" value="${o.uuid}" required${
      o.uuid === selected ? html` checked` : ''
    }${error ? html` aria-invalid="true" aria-describedby="organisation_uuid-error"` : ''}>
<label for="organisation_uuid-${i}">${o.name}</label>
</div>`,
  );
  const target = organisations.length === 0 ? [] : [{ name: 'organisation_uuid', id: 'organisation_uuid-0' }];
  const summary = errorSummary(locale, errors, target);
  if (organisations.length === 0) return page(ctx, title, errors, html`${summary}\n<h1>${title}</h1>`);
  const fields = html`<input type="hidden" name="ticket" value="${input.ticket}">
<fieldset class="field${error ? ' has-error' : ''}">
<legend>${t(locale, 'pick_legend')}</legend>
${error ? html`<p class="field-error" id="organisation_uuid-error">${error}</p>` : ''}
${radios}
</fieldset>`;
  const main = html`${summary}
<h1>${title}</h1>
<p class="lead">${t(locale, 'pick_lead', { partner: ctx.partner.name })}</p>
${postForm(ctx, '/connect/connect', fields, t(locale, 'pick_submit'))}`;
  return page(ctx, title, errors, main);
}

export type Problem = 'unknown' | 'expired' | 'used' | 'csrf' | 'failed';

/** The HTTP status to send with a problem page. */
export function problemStatus(problem: Problem): number {
  return { unknown: 404, expired: 410, used: 409, csrf: 403, failed: 500 }[problem];
}

/**
 * A problem page: what happened and what to do, a way back to the partner when known; never
 * technical details. `retryPath` (a same-origin path) adds a "Try again" link, `selfPath` the
 * language switcher.
 */
export function renderProblem(
  locale: PageLocale,
  problem: Problem,
  partner?: PartnerView,
  options: { retryPath?: string; selfPath?: string } = {},
): string {
  const title = t(locale, `problem_${problem}_title`);
  const retry = options.retryPath === undefined ? undefined : safePath(options.retryPath, '');
  const actions = [
    retry ? html`<a class="button" href="${retry}">${t(locale, 'try_again')}</a>` : html``,
    partner ? returnLink(locale, partner, retry ? undefined : 'button') : html``,
  ];
  const main = html`<h1>${title}</h1>
<p class="lead">${t(locale, `problem_${problem}_text`)}</p>
${actions.some((a) => a.value !== '') ? html`<p class="actions">${actions}</p>` : ''}`;
  return renderDocument({
    locale,
    title,
    main,
    footer: false,
    intro: false,
    ...(partner ? { partner } : {}),
    ...definedFields({ selfPath: options.selfPath }),
  });
}
