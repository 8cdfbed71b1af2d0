import { isoExponent } from '@svc/core';
import type { SubscriptionShape } from '@svc/subscriptions';
import type { PortalSettings } from '../domain/settings';
import type { PortalLocale } from '../repository/link-repository';
import { html, type SafeHtml } from './html';
import { type RenderedPage, renderPortalPage } from './layout';
import { type ManageKey, m, maybe } from './manage-messages';
import { HTML_LANG } from './messages';
import { type PageContext, signOutForm } from './pages';

/**
 * The donor's own pages (contract section 12, issue 47 point 3): the subscriptions on the home
 * page, one subscription with a form per change the organisation allows, the retention offer,
 * the cancel form and the gifts of a year. Server-rendered, no script: every change is a form
 * POST with the session's CSRF token, answered by a redirect back with a `done` flag, or by the
 * page again with the errors next to the fields.
 */

// ---------------------------------------------------------------------------------------------
// Money and dates

/** Digits after the decimal point of a currency (ISO 4217; 2 where unknown). */
export function exponentOf(currency: string): number {
  return isoExponent(currency) ?? 2;
}

/** Minor units as the locale writes the currency: `CHF 25.00`, `25,00 CHF`… */
export function formatMoney(locale: PortalLocale, minor: number, currency: string): string {
  const digits = exponentOf(currency);
  const major = minor / 10 ** digits;
  try {
    return new Intl.NumberFormat(HTML_LANG[locale], {
      style: 'currency',
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }).format(major);
  } catch {
    return `${currency} ${major.toFixed(digits)}`;
  }
}

/** A form's amount in major units (`25`, `25.5`, `25,50`) as exact minor units; no float arithmetic. */
export type ParsedAmount = { ok: true; minor: number } | { ok: false; reason: 'format' | 'fraction' };

export function parseMajorAmount(text: string, currency: string): ParsedAmount {
  const digits = exponentOf(currency);
  const match = /^(\d{1,12})(?:[.,](\d+))?$/.exec(text.trim().replace(/['’\s]/g, ''));
  if (!match) return { ok: false, reason: 'format' };
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  if (fraction.replace(/0+$/, '').length > digits) return { ok: false, reason: 'fraction' };
  const minor = Number(whole + fraction.padEnd(digits, '0').slice(0, digits));
  if (!Number.isSafeInteger(minor) || minor <= 0) return { ok: false, reason: 'format' };
  return { ok: true, minor };
}

/** Minor units as the amount field shows them: `25.00` (a plain number input value). */
export function majorValue(minor: number, currency: string): string {
  const digits = exponentOf(currency);
  if (digits === 0) return String(minor);
  const text = String(minor).padStart(digits + 1, '0');
  return `${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/** A day (unix seconds of its local midnight) as the locale writes it, in the subscription's zone. */
export function formatDay(locale: PortalLocale, seconds: number, timeZone = 'UTC'): string {
  try {
    return new Intl.DateTimeFormat(HTML_LANG[locale], { dateStyle: 'long', timeZone }).format(seconds * 1000);
  } catch {
    return new Intl.DateTimeFormat(HTML_LANG[locale], { dateStyle: 'long', timeZone: 'UTC' }).format(seconds * 1000);
  }
}

/** A day as `YYYY-MM-DD` in the zone (a date input's value). */
export function isoDay(seconds: number, timeZone = 'UTC'): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(seconds * 1000);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}

export function intervalText(locale: PortalLocale, interval: string): string {
  return maybe(locale, `interval_${interval}`) ?? interval;
}

export function reasonText(locale: PortalLocale, reason: string): string {
  return maybe(locale, `reason_${reason}`) ?? reason.replaceAll('_', ' ');
}

const statusText = (locale: PortalLocale, status: string) => maybe(locale, `status_${status}`) ?? status;
const methodText = (locale: PortalLocale, method: string) => maybe(locale, `method_${method}`) ?? method;

// ---------------------------------------------------------------------------------------------
// Shared parts

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

/** Per field (its input's id): the message shown next to it; `''` for the whole page. */
export type FieldErrors = Readonly<Record<string, string>>;

/** What a form sent back with errors shows again (never card numbers or codes). */
export type FormValues = Readonly<Record<string, string>>;

export const subscriptionPath = (uuid: string) => `/portal/subscriptions/${uuid}`;

/**
 * A link within the portal in the page's language: the language chosen with the switcher stays
 * as the donor moves on (the session keeps the locale of its link).
 */
export function href(ctx: Pick<PageContext, 'locale'>, path: string): string {
  const [rest = '', hash] = path.split('#', 2);
  const withLocale = `${rest}${rest.includes('?') ? '&' : '?'}locale=${ctx.locale}`;
  return hash === undefined ? withLocale : `${withLocale}#${hash}`;
}

function hidden(ctx: PageContext): SafeHtml {
  return html`<input type="hidden" name="csrf_token" value="${ctx.csrfToken ?? ''}">
<input type="hidden" name="locale" value="${ctx.locale}">`;
}

function errorSummary(ctx: PageContext, errors: FieldErrors): SafeHtml | '' {
  const entries = Object.entries(errors);
  if (entries.length === 0) return '';
  const items = entries.map(([field, message]) =>
    field ? html`<li><a href="#${field}">${message}</a></li>` : html`<li>${message}</li>`,
  );
  return html`<div class="error-summary" role="alert"><h2>${m(ctx.locale, 'error_summary')}</h2>
<ul>${items}</ul></div>\n`;
}

/** A labelled input with its hint and error tied to it. */
function field(spec: {
  id: string;
  name: string;
  label: string;
  type: string;
  value?: string;
  hint?: string;
  error?: string;
  attributes?: SafeHtml;
}): SafeHtml {
  const described = [spec.hint ? `${spec.id}-hint` : '', spec.error ? `${spec.id}-error` : '']
    .filter(Boolean)
    .join(' ');
  return html`<label for="${spec.id}">${spec.label}</label>
${spec.hint ? html`<p class="hint" id="${spec.id}-hint">${spec.hint}</p>\n` : ''}${
  spec.error ? html`<p class="error" id="${spec.id}-error">${spec.error}</p>\n` : ''
}<input type="${spec.type}" id="${spec.id}" name="${spec.name}"${
    spec.value !== undefined ? html` value="${spec.value}"` : ''
  }${described ? html` aria-describedby="${described}"` : ''}${spec.error ? html` aria-invalid="true"` : ''}${
    spec.attributes ?? ''
  }>\n`;
}

function section(id: string, heading: string, body: SafeHtml): SafeHtml {
  return html`<section class="change" aria-labelledby="${id}-heading">
<h2 id="${id}-heading">${heading}</h2>
${body}
</section>\n`;
}

// ---------------------------------------------------------------------------------------------
// Home

export interface HomeExtras {
  /** The session's flow points at one subscription's form. */
  flow?: { kind: 'payment_method' | 'cancel'; href: string };
  /** After the return from approving a new payment method. */
  methodResult?: 'active' | 'pending' | 'failed';
  /** The year the gifts link opens. */
  year: number;
  /** The donor's yearly receipts, newest year first (voided ones marked). */
  receipts?: ReadonlyArray<{
    uuid: string;
    number: string;
    year: number;
    total: number;
    currency: string;
    voided: boolean;
  }>;
}

/** The home page's content: the flow's shortcut, the subscriptions (each linking to its page), gifts. */
export function subscriptionList(
  ctx: PageContext,
  subscriptions: readonly SubscriptionShape[],
  extras: HomeExtras,
): SafeHtml {
  const { locale } = ctx;
  const result = extras.methodResult
    ? html`<p class="notice" role="status">${m(locale, `method_result_${extras.methodResult}`)}</p>\n`
    : '';
  const flow = extras.flow
    ? html`<p class="flow"><a class="button" href="${href(ctx, extras.flow.href)}">${m(locale, `flow_${extras.flow.kind}`)}</a></p>\n`
    : '';
  const items = subscriptions.map(
    (s) => html`<li>
<h3><a href="${href(ctx, subscriptionPath(s.uuid))}">${formatMoney(locale, s.amount, s.currency)} – ${intervalText(
      locale,
      s.recurring_interval,
    )}</a></h3>
<dl class="facts">
<dt>${m(locale, 'sub_next')}</dt><dd>${
      s.next_due_date === undefined || s.subscription_status === 'cancelled' || s.subscription_status === 'finished'
        ? m(locale, 'sub_none_next')
        : formatDay(locale, s.next_due_date, s.timezone)
    }</dd>
<dt>${m(locale, 'sub_status')}</dt><dd>${statusText(locale, s.subscription_status)}</dd>
</dl>
</li>\n`,
  );
  const list =
    subscriptions.length === 0
      ? html`<p class="muted">${m(locale, 'subs_none')}</p>\n`
      : html`<ul class="subscriptions">\n${items}</ul>\n`;
  const receipts = extras.receipts?.length
    ? html`<h2>${m(locale, 'receipts_heading')}</h2>
<ul class="receipts">
${extras.receipts.map(
  (r) =>
    html`<li><a href="${href(ctx, `/portal/receipts/${r.uuid}/pdf`)}">${m(locale, 'receipt_label')} ${r.year} (${r.number})</a>: ${formatMoney(
      locale,
      r.total,
      r.currency,
    )}${r.voided ? html` – ${m(locale, 'receipt_voided')}` : ''}</li>
`,
)}</ul>
`
    : '';
  return html`${result}${flow}${list}<p><a href="${href(ctx, `/portal/gifts?year=${extras.year}`)}">${m(locale, 'gifts_link')}</a></p>
${receipts}`;
}

// ---------------------------------------------------------------------------------------------
// One subscription

export interface SubscriptionPageInput {
  subscription: SubscriptionShape;
  settings: PortalSettings;
  /** The change just made (`?done=`): one line, as a status message. */
  done?: string;
  errors?: FieldErrors;
  values?: FormValues;
  /** A code was sent: the payment method forms are shown. */
  codeSent?: boolean;
  /** The payment methods the account offers for a new source (card, SEPA). */
  methods?: { card: boolean; sepa: boolean };
  /**
   * The fees of the subscription's payment method (its profile's), and what each charge is with
   * them covered: the fee-cover form is shown where there are fees, or where the donor covers them
   * (to turn it off). Absent: no fees to cover.
   */
  fees?: { percent: string; fixed: string; total: number };
}

const DONE_KEYS: Readonly<Record<string, ManageKey>> = {
  amount: 'done_amount',
  fees: 'done_fees',
  interval: 'done_interval',
  next_date: 'done_next_date',
  skip: 'done_skip',
  pause: 'done_pause',
  resume: 'done_resume',
  cancel: 'done_cancel',
  code: 'done_code',
  payment_method: 'done_payment_method',
};

export const DONE_FLAGS = Object.keys(DONE_KEYS);

function amountHint(ctx: PageContext, settings: PortalSettings, currency: string): string | undefined {
  const { min_amount: min, max_amount: max } = settings;
  const money = (n: number) => formatMoney(ctx.locale, n, currency);
  if (min !== null && max !== null) return m(ctx.locale, 'amount_hint_range', { min: money(min), max: money(max) });
  if (min !== null) return m(ctx.locale, 'amount_hint_min', { min: money(min) });
  if (max !== null) return m(ctx.locale, 'amount_hint_max', { max: money(max) });
  return undefined;
}

/** The amount form: a number in major units (the step is the currency's smallest unit). */
export function amountForm(
  ctx: PageContext,
  subscription: SubscriptionShape,
  settings: PortalSettings,
  errors: FieldErrors = {},
  values: FormValues = {},
): SafeHtml {
  const digits = exponentOf(subscription.currency);
  const hint = amountHint(ctx, settings, subscription.currency);
  return html`<form method="post" action="${subscriptionPath(subscription.uuid)}/amount" novalidate>
${hidden(ctx)}
${field({
  id: 'amount',
  name: 'amount',
  type: 'number',
  label: m(ctx.locale, 'amount_label', { currency: subscription.currency }),
  value: values.amount ?? majorValue(subscription.amount, subscription.currency),
  ...(hint ? { hint } : {}),
  ...(errors.amount ? { error: errors.amount } : {}),
  attributes: html` inputmode="decimal" min="0" step="${digits === 0 ? '1' : `0.${'1'.padStart(digits, '0')}`}" required`,
})}<button type="submit">${m(ctx.locale, 'amount_button')}</button>
</form>`;
}

/** A percentage as the locale writes it (`2.9 %`, `2,9 %`): display only, the arithmetic is elsewhere. */
function formatPercent(locale: PortalLocale, percent: string): string {
  return new Intl.NumberFormat(HTML_LANG[locale], { style: 'percent', maximumFractionDigits: 4 }).format(
    Number(percent) / 100,
  );
}

/**
 * The donor's choice to cover the payment fees: a checkbox, sent with a marker field so that an
 * unticked box (which a form does not send) reads as "off". Never ticked in advance: the choice is
 * the donor's (docs/API.md "Fee cover").
 */
export function feesForm(
  ctx: PageContext,
  subscription: SubscriptionShape,
  fees: SubscriptionPageInput['fees'],
  error?: string,
): SafeHtml {
  const { locale } = ctx;
  const hint = fees
    ? m(locale, 'fees_hint', {
        fees: `${formatPercent(locale, fees.percent)} + ${formatMoney(locale, Number(fees.fixed), subscription.currency)}`,
        total: formatMoney(locale, fees.total, subscription.currency),
      })
    : m(locale, 'fees_none');
  return html`<form method="post" action="${subscriptionPath(subscription.uuid)}/fees" novalidate>
${hidden(ctx)}
<input type="hidden" name="cover_fees_shown" value="1">
<p class="hint" id="cover_fees-hint">${hint}</p>
${
  error
    ? html`<p class="error" id="cover_fees-error">${error}</p>
`
    : ''
}<p class="checkbox"><input type="checkbox" id="cover_fees" name="cover_fees" value="on"${
    subscription.cover_fees ? html` checked` : ''
  } aria-describedby="cover_fees-hint${error ? ' cover_fees-error' : ''}"${error ? html` aria-invalid="true"` : ''}>
<label for="cover_fees">${m(locale, 'fees_label')}</label></p>
<button type="submit">${m(locale, 'fees_button')}</button>
</form>`;
}

function pauseForm(ctx: PageContext, uuid: string, errors: FieldErrors, values: FormValues): SafeHtml {
  return html`<form method="post" action="${subscriptionPath(uuid)}/pause" novalidate>
${hidden(ctx)}
${field({
  id: 'resume_on',
  name: 'resume_on',
  type: 'date',
  label: m(ctx.locale, 'pause_label'),
  value: values.resume_on ?? '',
  hint: m(ctx.locale, 'pause_hint'),
  ...(errors.resume_on ? { error: errors.resume_on } : {}),
})}<button type="submit">${m(ctx.locale, 'pause_button')}</button>
</form>`;
}

function facts(ctx: PageContext, s: SubscriptionShape): SafeHtml {
  const { locale } = ctx;
  const open = s.subscription_status === 'active' || s.subscription_status === 'pending';
  return html`<dl class="facts">
<dt>${m(locale, 'sub_amount')}</dt><dd>${formatMoney(locale, s.amount, s.currency)}</dd>
<dt>${m(locale, 'sub_interval')}</dt><dd>${intervalText(locale, s.recurring_interval)}</dd>
<dt>${m(locale, 'sub_next')}</dt><dd>${
    open && s.next_due_date !== undefined ? formatDay(locale, s.next_due_date, s.timezone) : m(locale, 'sub_none_next')
  }</dd>
<dt>${m(locale, 'sub_status')}</dt><dd>${statusText(locale, s.subscription_status)}</dd>
<dt>${m(locale, 'sub_method')}</dt><dd>${methodText(locale, s.payment_method)}</dd>
</dl>\n`;
}

function codeInput(ctx: PageContext, id: string, errors: FieldErrors): SafeHtml {
  return field({
    id,
    name: 'code',
    type: 'text',
    label: m(ctx.locale, 'method_code_label'),
    ...(errors[id] ? { error: errors[id] } : {}),
    attributes: html` inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required`,
  });
}

function paymentMethodSection(ctx: PageContext, input: SubscriptionPageInput): SafeHtml {
  const { locale } = ctx;
  const { subscription: s } = input;
  const errors = input.errors ?? {};
  const values = input.values ?? {};
  const base = subscriptionPath(s.uuid);
  const methods = input.methods ?? { card: true, sepa: false };
  const showForms = input.codeSent || Object.keys(errors).some((k) => /^(card|sepa|iban|account_holder)/.test(k));
  const card = methods.card
    ? html`<form method="post" action="${base}/payment-method" novalidate>
${hidden(ctx)}
<input type="hidden" name="payment_method" value="card">
<fieldset>
<legend>${m(locale, 'method_card_legend')}</legend>
${codeInput(ctx, 'card-code', errors)}${field({
  id: 'card-number',
  name: 'number',
  type: 'text',
  label: m(locale, 'method_card_number'),
  ...(errors['card-number'] ? { error: errors['card-number'] } : {}),
  attributes: html` inputmode="numeric" autocomplete="cc-number" maxlength="23" required`,
})}<fieldset class="inline">
<legend>${m(locale, 'method_card_expiry')}</legend>
${field({
  id: 'card-month',
  name: 'expiry_month',
  type: 'text',
  label: m(locale, 'method_card_month'),
  value: values.expiry_month ?? '',
  attributes: html` inputmode="numeric" autocomplete="cc-exp-month" maxlength="2" size="2" required`,
})}${field({
  id: 'card-year',
  name: 'expiry_year',
  type: 'text',
  label: m(locale, 'method_card_year'),
  value: values.expiry_year ?? '',
  attributes: html` inputmode="numeric" autocomplete="cc-exp-year" maxlength="4" size="4" required`,
})}</fieldset>
${field({
  id: 'card-cvc',
  name: 'cvc',
  type: 'text',
  label: m(locale, 'method_card_cvc'),
  attributes: html` inputmode="numeric" autocomplete="cc-csc" maxlength="4" size="4" required`,
})}</fieldset>
<button type="submit">${m(locale, 'method_card_button')}</button>
</form>\n`
    : '';
  const sepa = methods.sepa
    ? html`<form method="post" action="${base}/payment-method" novalidate>
${hidden(ctx)}
<input type="hidden" name="payment_method" value="sepa_dd">
<fieldset>
<legend>${m(locale, 'method_sepa_legend')}</legend>
${codeInput(ctx, 'sepa-code', errors)}${field({
  id: 'iban',
  name: 'iban',
  type: 'text',
  label: m(locale, 'method_sepa_iban'),
  value: values.iban ?? '',
  ...(errors.iban ? { error: errors.iban } : {}),
  attributes: html` autocomplete="off" spellcheck="false" maxlength="42" required`,
})}${field({
  id: 'account_holder',
  name: 'account_holder',
  type: 'text',
  label: m(locale, 'method_sepa_holder'),
  value: values.account_holder ?? '',
  attributes: html` autocomplete="name" maxlength="200"`,
})}</fieldset>
<button type="submit">${m(locale, 'method_sepa_button')}</button>
</form>\n`
    : '';
  return section(
    'payment-method',
    m(locale, 'method_heading'),
    html`<p>${m(locale, 'method_current', { method: methodText(locale, s.payment_method) })}</p>
<p class="hint">${m(locale, 'method_code_text')}</p>
${errors['send-code'] ? html`<p class="error" id="send-code-error">${errors['send-code']}</p>\n` : ''}<form method="post" action="${base}/code">
${hidden(ctx)}
<button type="submit" id="send-code" class="secondary">${m(locale, 'method_code_button')}</button>
</form>
${showForms ? html`${input.codeSent ? html`<p>${m(locale, 'method_code_sent')}</p>\n` : ''}${card}${sepa}` : ''}`,
  );
}

/** The cancel part of the subscription page: the form itself, or (a retention offer first) a button to the offer. */
function cancelSection(ctx: PageContext, input: SubscriptionPageInput): SafeHtml {
  const base = subscriptionPath(input.subscription.uuid);
  const offer = retentionOfferOf(input.settings);
  const body = offer
    ? html`<form method="get" action="${base}/offer">
<input type="hidden" name="locale" value="${ctx.locale}">
<button type="submit" class="secondary">${m(ctx.locale, 'cancel_open')}</button>
</form>`
    : cancelForm(ctx, input.subscription, input.settings, input.errors ?? {}, input.values ?? {});
  return section('cancel', m(ctx.locale, 'cancel_heading'), body);
}

/** The retention offer the page shows before cancelling, if the organisation set one and allows its change. */
export function retentionOfferOf(settings: PortalSettings): 'pause' | 'lower_amount' | undefined {
  const offer = settings.retention_offer;
  if (offer === 'pause' && settings.features.pause) return 'pause';
  if (offer === 'lower_amount' && settings.features.amount) return 'lower_amount';
  return undefined;
}

export function cancelForm(
  ctx: PageContext,
  subscription: SubscriptionShape,
  settings: PortalSettings,
  errors: FieldErrors = {},
  values: FormValues = {},
): SafeHtml {
  const { locale } = ctx;
  const options = settings.cancel_reasons.map(
    (reason) =>
      html`<option value="${reason}"${values.reason === reason ? html` selected` : ''}>${reasonText(locale, reason)}</option>`,
  );
  return html`<form method="post" action="${subscriptionPath(subscription.uuid)}/cancel" novalidate>
${hidden(ctx)}
<label for="reason">${m(locale, 'cancel_reason')}</label>
${errors.reason ? html`<p class="error" id="reason-error">${errors.reason}</p>\n` : ''}<select id="reason" name="reason" required${
    errors.reason ? html` aria-invalid="true" aria-describedby="reason-error"` : ''
  }>
<option value=""></option>
${options}
</select>
<label for="comment">${m(locale, 'cancel_comment')}</label>
<textarea id="comment" name="comment" rows="3" maxlength="2000">${values.comment ?? ''}</textarea>
<button type="submit" class="danger">${m(locale, 'cancel_button')}</button>
</form>`;
}

/** `GET /portal/subscriptions/{uuid}`: the subscription, and a form per change the organisation allows. */
export function subscriptionPage(ctx: PageContext, input: SubscriptionPageInput): RenderedPage {
  const { locale } = ctx;
  const { subscription: s, settings } = input;
  const errors = input.errors ?? {};
  const values = input.values ?? {};
  const features = settings.features;
  const base = subscriptionPath(s.uuid);
  const status = s.subscription_status;
  const open = status === 'active' || status === 'pending';
  const changeable = open || status === 'suspended';
  const parts: SafeHtml[] = [];
  if (changeable && features.amount) {
    parts.push(section('amount', m(locale, 'amount_heading'), amountForm(ctx, s, settings, errors, values)));
  }
  // The donor's own choice, whatever the features: on where there are fees, off whenever it is on.
  if (changeable && (input.fees !== undefined || s.cover_fees || errors.cover_fees !== undefined)) {
    parts.push(section('fees', m(locale, 'fees_heading'), feesForm(ctx, s, input.fees, errors.cover_fees)));
  }
  if (changeable && features.interval) {
    const options = settings.intervals.map(
      (interval) =>
        html`<option value="${interval}"${
          (values.recurring_interval ?? s.recurring_interval) === interval ? html` selected` : ''
        }>${intervalText(locale, interval)}</option>`,
    );
    parts.push(
      section(
        'interval',
        m(locale, 'interval_heading'),
        html`<form method="post" action="${base}/interval" novalidate>
${hidden(ctx)}
<label for="recurring_interval">${m(locale, 'interval_label')}</label>
${
  errors.recurring_interval
    ? html`<p class="error" id="recurring_interval-error">${errors.recurring_interval}</p>\n`
    : ''
}<select id="recurring_interval" name="recurring_interval"${
          errors.recurring_interval ? html` aria-invalid="true" aria-describedby="recurring_interval-error"` : ''
        }>
${options}
</select>
<button type="submit">${m(locale, 'interval_button')}</button>
</form>`,
      ),
    );
  }
  if (open && features.next_date) {
    parts.push(
      section(
        'next-date',
        m(locale, 'next_heading'),
        html`<form method="post" action="${base}/next-date" novalidate>
${hidden(ctx)}
${field({
  id: 'next_due_date',
  name: 'next_due_date',
  type: 'date',
  label: m(locale, 'next_label'),
  value: values.next_due_date ?? (s.next_due_date === undefined ? '' : isoDay(s.next_due_date, s.timezone)),
  ...(errors.next_due_date ? { error: errors.next_due_date } : {}),
  attributes: html` required`,
})}<button type="submit">${m(locale, 'next_button')}</button>
</form>`,
      ),
    );
  }
  if (open && features.skip && s.next_due_date !== undefined) {
    const date = formatDay(locale, s.next_due_date, s.timezone);
    parts.push(
      section(
        'skip',
        m(locale, 'skip_heading'),
        html`<p>${m(locale, 'skip_text', { date })}</p>
<form method="post" action="${base}/skip">
${hidden(ctx)}
<input type="hidden" name="due_date" value="${isoDay(s.next_due_date, s.timezone)}">
<button type="submit">${m(locale, 'skip_button', { date })}</button>
</form>`,
      ),
    );
  }
  if (features.pause && open) {
    parts.push(section('pause', m(locale, 'pause_heading'), pauseForm(ctx, s.uuid, errors, values)));
  }
  if (features.pause && status === 'suspended') {
    const until =
      s.suspension_end === undefined
        ? m(locale, 'resume_text')
        : m(locale, 'resume_until', { date: formatDay(locale, s.suspension_end, s.timezone) });
    parts.push(
      section(
        'resume',
        m(locale, 'resume_heading'),
        html`<p>${until}</p>
<form method="post" action="${base}/resume">
${hidden(ctx)}
<button type="submit">${m(locale, 'resume_button')}</button>
</form>`,
      ),
    );
  }
  if (changeable && features.payment_method) parts.push(paymentMethodSection(ctx, input));
  if (changeable && features.cancel) parts.push(cancelSection(ctx, input));
  const doneKey = input.done ? DONE_KEYS[input.done] : undefined;
  const title = m(locale, 'sub_title');
  return page(
    ctx,
    title,
    html`<h1>${title}</h1>
${doneKey ? html`<p class="notice" role="status">${m(locale, doneKey)}</p>\n` : ''}${errorSummary(ctx, errors)}${facts(
  ctx,
  s,
)}${parts}<p><a href="${href(ctx, '/portal/home')}">${m(locale, 'back_home')}</a></p>
${signOutForm(ctx)}`,
    Object.keys(errors).length > 0,
  );
}

/** `GET /portal/subscriptions/{uuid}/offer`: before cancelling, the organisation's offer (pause or a lower amount). */
export function retentionPage(
  ctx: PageContext,
  subscription: SubscriptionShape,
  settings: PortalSettings,
  offer: 'pause' | 'lower_amount',
): RenderedPage {
  const { locale } = ctx;
  const base = subscriptionPath(subscription.uuid);
  const title = m(locale, 'offer_title');
  const body =
    offer === 'pause'
      ? html`<p class="lead">${m(locale, 'offer_pause_text')}</p>
${pauseForm(ctx, subscription.uuid, {}, {})}`
      : html`<p class="lead">${m(locale, 'offer_lower_text')}</p>
${amountForm(ctx, subscription, settings)}`;
  return page(
    ctx,
    title,
    html`<h1>${title}</h1>
${body}
<p><a href="${href(ctx, `${base}/cancel`)}">${m(locale, 'offer_no_thanks')}</a></p>
<p><a href="${href(ctx, base)}">${m(locale, 'cancel_keep')}</a></p>
${signOutForm(ctx)}`,
  );
}

/** `GET /portal/subscriptions/{uuid}/cancel`: the cancel form on its own page (after the offer). */
export function cancelPage(
  ctx: PageContext,
  subscription: SubscriptionShape,
  settings: PortalSettings,
  errors: FieldErrors = {},
  values: FormValues = {},
): RenderedPage {
  const { locale } = ctx;
  const title = m(locale, 'cancel_title');
  return page(
    ctx,
    title,
    html`<h1>${title}</h1>
${errorSummary(ctx, errors)}${facts(ctx, subscription)}${cancelForm(ctx, subscription, settings, errors, values)}
<p><a href="${href(ctx, subscriptionPath(subscription.uuid))}">${m(locale, 'cancel_keep')}</a></p>
${signOutForm(ctx)}`,
    Object.keys(errors).length > 0,
  );
}

/** A page saying the subscription is not the donor's (404). */
export function notFoundPage(ctx: PageContext): RenderedPage {
  const title = m(ctx.locale, 'not_found_title');
  return page(
    ctx,
    title,
    html`<h1>${title}</h1>
<p class="lead">${m(ctx.locale, 'not_found_text')}</p>
<p><a href="${href(ctx, '/portal/home')}">${m(ctx.locale, 'back_home')}</a></p>`,
    true,
  );
}

/**
 * Where a provider sends the donor back after approving a new payment method (3-D Secure, a
 * bank). That navigation comes from another site, so the browser does not send the portal's
 * SameSite=Strict session cookie with it: this page needs no session and only links on, and the
 * click on it (same-site) carries the cookie to the home page, which shows the outcome.
 */
export function returnedPage(ctx: PageContext, subscriptionUuid: string | undefined): RenderedPage {
  const title = m(ctx.locale, 'returned_title');
  const next = subscriptionUuid ? `/portal/home?method=${subscriptionUuid}` : '/portal/home';
  return page(
    ctx,
    title,
    html`<h1>${title}</h1>
<p class="lead">${m(ctx.locale, 'returned_text')}</p>
<p><a class="button" href="${href(ctx, next)}">${m(ctx.locale, 'returned_continue')}</a></p>`,
  );
}

/** A page-level refusal (409: not possible now, or the feature is off): the page again with the message on top. */
export function withPageError(message: string): FieldErrors {
  return { '': message };
}

// ---------------------------------------------------------------------------------------------
// Gifts

export interface Gift {
  created: number;
  amount: { value: string; currency: string };
  status: string;
}

/** A payment as the search shows it, read defensively: undefined where it is not a gift. */
export function giftOf(hit: Record<string, unknown>): Gift | undefined {
  const amount = hit.amount as { value?: unknown; currency?: unknown } | undefined;
  if (typeof hit.created !== 'number' || !amount || typeof amount.currency !== 'string') return undefined;
  return {
    created: hit.created,
    amount: { value: String(amount.value ?? '0'), currency: amount.currency },
    status: typeof hit.status === 'string' ? hit.status : '',
  };
}

/** `GET /portal/gifts?year=`: the year's gifts (date, amount, status), and the years before and after. */
export function giftsPage(ctx: PageContext, year: number, gifts: readonly Gift[]): RenderedPage {
  const { locale } = ctx;
  const title = m(locale, 'gifts_title', { year });
  const rows = gifts.map(
    (g) =>
      html`<tr><td>${formatDay(locale, g.created)}</td><td class="number">${formatMoney(
        locale,
        Number(g.amount.value),
        g.amount.currency,
      )}</td><td>${maybe(locale, `pay_${g.status}`) ?? g.status}</td></tr>\n`,
  );
  const table =
    gifts.length === 0
      ? html`<p class="muted">${m(locale, 'gifts_none', { year })}</p>`
      : html`<table>
<caption class="visually-hidden">${title}</caption>
<thead><tr><th scope="col">${m(locale, 'gifts_date')}</th><th scope="col" class="number">${m(
          locale,
          'gifts_amount',
        )}</th><th scope="col">${m(locale, 'gifts_status')}</th></tr></thead>
<tbody>
${rows}</tbody>
</table>`;
  return page(
    ctx,
    title,
    html`<h1>${title}</h1>
${table}
<nav class="years" aria-label="${m(locale, 'gifts_years')}"><ul>
<li><a href="${href(ctx, `/portal/gifts?year=${year - 1}`)}" rel="prev">${m(locale, 'gifts_previous', { year: year - 1 })}</a></li>
<li><a href="${href(ctx, `/portal/gifts?year=${year + 1}`)}" rel="next">${m(locale, 'gifts_next', { year: year + 1 })}</a></li>
</ul></nav>
<p><a href="${href(ctx, '/portal/home')}">${m(locale, 'back_home')}</a></p>
${signOutForm(ctx)}`,
  );
}
