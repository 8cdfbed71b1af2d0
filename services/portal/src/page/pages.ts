import type { Brand } from '../domain/brand';
import type { PortalLocale } from '../repository/link-repository';
import { html, type SafeHtml } from './html';
import { type RenderedPage, renderPortalPage } from './layout';
import { type MessageKey, t } from './messages';

/** What every page knows: its language, the organisation's brand, and its session's token and way back. */
export interface PageContext {
  locale: PortalLocale;
  brand: Brand;
  /** The page's GET path without `locale` (the language switcher); none for answers to a POST. */
  selfPath?: string;
  csrfToken?: string;
  returnUrl?: string;
}

function page(ctx: PageContext, title: string, main: SafeHtml, hasErrors = false): RenderedPage {
  return renderPortalPage({
    locale: ctx.locale,
    brand: ctx.brand,
    title,
    main,
    hasErrors,
    ...(ctx.selfPath !== undefined ? { selfPath: ctx.selfPath } : {}),
    ...(ctx.csrfToken ? { csrfToken: ctx.csrfToken } : {}),
    ...(ctx.returnUrl ? { returnUrl: ctx.returnUrl } : {}),
  });
}

/** `GET /portal?token=…`: the link's page. Opening it uses nothing up; the button's POST redeems it. */
export function continuePage(ctx: PageContext, form: { token: string; csrf: string }): RenderedPage {
  const title = t(ctx.locale, 'continue_title', { organisation: ctx.brand.name });
  return page(
    ctx,
    title,
    html`<h1>${title}</h1>
<p class="lead">${t(ctx.locale, 'continue_lead')}</p>
<form method="post" action="/portal">
<input type="hidden" name="token" value="${form.token}">
<input type="hidden" name="csrf" value="${form.csrf}">
<input type="hidden" name="locale" value="${ctx.locale}">
<button type="submit">${t(ctx.locale, 'continue_button')}</button>
</form>`,
  );
}

export interface LoginFormValues {
  organisationUuid: string;
  email?: string;
  /** The e-mail field's error, shown with it and in a summary above the form. */
  error?: string;
}

/** The form that asks for a fresh link by e-mail (`POST /portal/login-form`). */
export function loginForm(ctx: PageContext, values: LoginFormValues): SafeHtml {
  const error = values.error;
  return html`${
    error
      ? html`<div class="error-summary" role="alert"><h2>${t(ctx.locale, 'error_summary_heading')}</h2>
<p><a href="#email">${error}</a></p></div>\n`
      : ''
  }<form method="post" action="/portal/login-form" novalidate>
<input type="hidden" name="organisation_uuid" value="${values.organisationUuid}">
<input type="hidden" name="locale" value="${ctx.locale}">
<label for="email">${t(ctx.locale, 'login_email_label')}</label>
<p class="hint" id="email-hint">${t(ctx.locale, 'login_email_hint')}</p>
${error ? html`<p class="error" id="email-error">${error}</p>\n` : ''}<input type="email" id="email" name="email" autocomplete="email" required spellcheck="false" aria-describedby="${
    error ? 'email-hint email-error' : 'email-hint'
  }"${error ? html` aria-invalid="true"` : ''} value="${values.email ?? ''}">
<button type="submit">${t(ctx.locale, 'login_button')}</button>
</form>`;
}

/** `GET /portal?organisation_uuid=…`: the organisation's way in, and the form sent back with an error. */
export function loginPage(ctx: PageContext, values: LoginFormValues): RenderedPage {
  const title = t(ctx.locale, 'login_title');
  return page(
    ctx,
    title,
    html`<h1>${title}</h1>
<p class="lead">${t(ctx.locale, 'login_lead', { organisation: ctx.brand.name })}</p>
${loginForm(ctx, values)}`,
    values.error !== undefined,
  );
}

/** After a login request: the same page whether or not the e-mail is known. */
export function checkMailPage(ctx: PageContext, email: string): RenderedPage {
  const title = t(ctx.locale, 'check_mail_title');
  return page(
    ctx,
    title,
    html`<h1>${title}</h1>
<p class="lead">${t(ctx.locale, 'check_mail_text', { email, organisation: ctx.brand.name })}</p>
<p class="muted">${t(ctx.locale, 'check_mail_hint')}</p>`,
  );
}

export type Problem =
  | 'unknown'
  | 'used'
  | 'expired'
  | 'revoked'
  | 'disabled'
  | 'csrf'
  | 'session'
  | 'too_many'
  | 'failed';

const PROBLEM_TEXTS: Readonly<Record<Problem, readonly [MessageKey, MessageKey]>> = {
  unknown: ['problem_unknown_title', 'problem_unknown_text'],
  used: ['problem_used_title', 'problem_used_text'],
  expired: ['problem_expired_title', 'problem_expired_text'],
  revoked: ['problem_revoked_title', 'problem_revoked_text'],
  disabled: ['problem_disabled_title', 'problem_disabled_text'],
  csrf: ['problem_csrf_title', 'problem_csrf_text'],
  session: ['problem_session_title', 'problem_session_text'],
  too_many: ['problem_too_many_title', 'problem_too_many_text'],
  failed: ['problem_failed_title', 'problem_failed_text'],
};

/** The problems a fresh link solves: their page carries the form, where the organisation is known. */
const FRESH_LINK_HELPS: ReadonlySet<Problem> = new Set(['unknown', 'used', 'expired', 'revoked', 'session']);

/** The status of each problem's page. */
export const PROBLEM_STATUS: Readonly<Record<Problem, number>> = {
  unknown: 404,
  used: 409,
  expired: 410,
  revoked: 410,
  disabled: 409,
  csrf: 403,
  session: 401,
  too_many: 429,
  failed: 500,
};

/** A page that says what went wrong and, where a fresh link helps, offers the form for one. */
export function problemPage(
  ctx: PageContext,
  problem: Problem,
  options: { organisationUuid?: string; retryPath?: string; retryAfterSeconds?: number } = {},
): RenderedPage {
  const [titleKey, textKey] = PROBLEM_TEXTS[problem];
  const title = t(ctx.locale, titleKey);
  const minutes = Math.max(1, Math.ceil((options.retryAfterSeconds ?? 60) / 60));
  const text = t(ctx.locale, textKey, { organisation: ctx.brand.name, minutes });
  let next: SafeHtml | string = '';
  if (FRESH_LINK_HELPS.has(problem)) {
    next = options.organisationUuid
      ? loginForm(ctx, { organisationUuid: options.organisationUuid })
      : html`<p>${t(ctx.locale, 'problem_no_organisation')}</p>`;
  } else if (options.retryPath) {
    next = html`<p><a href="${options.retryPath}">${t(ctx.locale, 'reload')}</a></p>`;
  }
  return page(ctx, title, html`<h1>${title}</h1>\n<p class="lead">${text}</p>\n${next}`, true);
}

/**
 * `GET /portal/home`: the signed-in donor's start page. `content` is what the subscription pages
 * show there (until then, a note); the sign-out form carries the session's CSRF token.
 */
export function homePage(ctx: PageContext, donor: { name?: string }, content?: SafeHtml): RenderedPage {
  const title = t(ctx.locale, 'home_title');
  const greeting = donor.name
    ? t(ctx.locale, 'home_greeting', { name: donor.name })
    : t(ctx.locale, 'home_greeting_anonymous');
  return page(
    ctx,
    title,
    html`<h1>${greeting}</h1>
<p class="lead">${t(ctx.locale, 'home_lead', { organisation: ctx.brand.name })}</p>
<h2>${t(ctx.locale, 'home_subscriptions_heading')}</h2>
${content ?? html`<p class="muted">${t(ctx.locale, 'home_subscriptions_empty')}</p>`}
${signOutForm(ctx)}`,
  );
}

/** Sign out, as a form (a POST with the session's CSRF token), on every page of a session. */
export function signOutForm(ctx: PageContext): SafeHtml {
  return html`<form method="post" action="/portal/logout">
<input type="hidden" name="csrf_token" value="${ctx.csrfToken ?? ''}">
<input type="hidden" name="locale" value="${ctx.locale}">
<button type="submit" class="secondary">${t(ctx.locale, 'sign_out')}</button>
</form>`;
}

/** After signing out. */
export function signedOutPage(ctx: PageContext, organisationUuid: string): RenderedPage {
  const title = t(ctx.locale, 'signed_out_title');
  return page(
    ctx,
    title,
    html`<h1>${title}</h1>
<p class="lead">${t(ctx.locale, 'signed_out_text')}</p>
${loginForm(ctx, { organisationUuid })}`,
  );
}
