import {
  AppError,
  ConflictError,
  feeCoverAt,
  isUuid,
  NotFoundError,
  TooManyRequestsError,
  ValidationError,
} from '@svc/core';
import { type AnyRoute, defineRoute, type HttpResult, uuidParams } from '@svc/http';
import { findAccount } from '@svc/organisations';
import { feesOfSource, findPaymentSource, type PaymentSourceRecord } from '@svc/payments';
import type { SubscriptionShape } from '@svc/subscriptions';
import * as z from 'zod';
import { type Brand, brandOf } from '../domain/brand';
import {
  cancelDonorSubscription,
  changeDonorTerms,
  donorPayments,
  donorSubscription,
  pauseDonorSubscription,
  resumeDonorSubscription,
  skipDonorCharge,
} from '../domain/manage';
import { changePaymentMethod, sendCode } from '../domain/payment-method';
import type { PortalSettings } from '../domain/settings';
import { pageResult } from '../page/layout';
import { m } from '../page/manage-messages';
import {
  cancelPage,
  DONE_FLAGS,
  type FieldErrors,
  type FormValues,
  formatMoney,
  giftOf,
  giftsPage,
  majorValue,
  notFoundPage,
  parseMajorAmount,
  retentionOfferOf,
  retentionPage,
  returnedPage,
  subscriptionPage,
  subscriptionPath,
} from '../page/manage-pages';
import { pageLocale } from '../page/messages';
import type { PageContext } from '../page/pages';
import { checkCsrf, type PortalSession, readPortalSession } from '../session/sessions';
import { brandFor, guard, problem, sessionProblem } from './page-routes';

/**
 * The donor's own pages (contract section 12, issue 47 point 3), over the same domain as the
 * portal's JSON API: `GET /portal/subscriptions/{uuid}` (a form per change the organisation
 * allows), `…/offer` (the retention offer before cancelling), `…/cancel`, `GET /portal/gifts`,
 * and a form POST per change. Each POST needs the session and its CSRF token (`csrf_token`),
 * and answers 303 back to the subscription's page with `?done=<change>`, or the page again with
 * the errors next to the fields (400; 409 for a change not possible now or turned off). Amounts
 * on forms are in major units, converted exactly to minor units by the currency's exponent.
 */
const params = uuidParams('subscription_uuid');
const pageQuery = z.object({ locale: z.string().max(10).optional(), done: z.string().max(40).optional() });
const giftsQuery = z.object({ locale: z.string().max(10).optional(), year: z.string().max(10).optional() });
const form = z.record(z.string(), z.string());
type Form = Record<string, string>;

const HTML_PAGE = {
  200: { description: 'HTML page', html: true },
  401: { description: 'No session, or it ended (HTML)', html: true },
  404: { description: 'Not one of the donor’s subscriptions (HTML)', html: true },
} as const;

interface Signed {
  session: PortalSession;
  ctx: PageContext;
  brand: Brand & { settings: PortalSettings };
  /** The request's base URL (a payment method's return address), for the changes. */
  baseUrl?: string;
}

/** The signed-in donor's page context, or the answer for a request without an active session. */
async function signedIn(
  cookies: Readonly<Record<string, string>>,
  asked: string | undefined,
  selfPath?: string,
): Promise<Signed | HttpResult> {
  const found = await readPortalSession({ cookies });
  if (found.state !== 'active') return sessionProblem(found, asked);
  const { session } = found;
  const locale = pageLocale(asked, session.locale);
  const brand = await brandOf(session.organisation_uuid);
  if (!brand) return problem({ locale, brand: await brandFor(undefined, locale) }, 'unknown');
  const ctx: PageContext = {
    locale,
    brand: { name: brand.name, color: brand.color },
    ...(selfPath === undefined ? {} : { selfPath }),
    csrfToken: session.csrf_token,
    ...(session.return_url ? { returnUrl: session.return_url } : {}),
  };
  if (!brand.settings.enabled) return problem(ctx, 'disabled');
  return { session, ctx, brand };
}

const isSigned = (value: Signed | HttpResult): value is Signed => 'session' in value;

/** The payment methods a new source can be set up with on the subscription's account (its profile for each). */
async function methodProfiles(
  subscription: SubscriptionShape,
  source?: PaymentSourceRecord,
): Promise<{ card?: string; sepa_dd?: string }> {
  const [current, account] = await Promise.all([
    source ?? findPaymentSource(subscription.payment_source_uuid),
    findAccount(subscription.account_uuid),
  ]);
  const profileFor = (method: 'card' | 'sepa_dd') =>
    current?.payment_method === method
      ? current.profile
      : account?.payment_method_profiles.find((p) => p.payment_method === method)?.name;
  const card = profileFor('card');
  const sepa = profileFor('sepa_dd');
  return { ...(card ? { card } : {}), ...(sepa ? { sepa_dd: sepa } : {}) };
}

/** The subscription's page, with what the form sent back and its errors (or the done flag). */
async function renderSubscription(
  signed: Signed,
  uuid: string,
  status: number,
  extra: { done?: string; errors?: FieldErrors; values?: FormValues; codeSent?: boolean } = {},
): Promise<HttpResult> {
  let subscription: SubscriptionShape;
  try {
    subscription = await donorSubscription(signed.session, uuid);
  } catch (error) {
    if (error instanceof NotFoundError) return pageResult(404, notFoundPage(signed.ctx));
    throw error;
  }
  const source = await findPaymentSource(subscription.payment_source_uuid);
  const [profiles, fees] = await Promise.all([methodProfiles(subscription, source), feesShown(subscription, source)]);
  return pageResult(
    status,
    subscriptionPage(signed.ctx, {
      subscription,
      settings: signed.brand.settings,
      ...extra,
      methods: { card: profiles.card !== undefined, sepa: profiles.sepa_dd !== undefined },
      ...(fees ? { fees } : {}),
    }),
  );
}

/** The fees of the subscription's payment method, and what each charge is with them covered. */
async function feesShown(subscription: SubscriptionShape, source: PaymentSourceRecord | undefined) {
  const fees = source ? await feesOfSource(source) : undefined;
  if (!source || !fees) return undefined;
  const { total } = feeCoverAt(source.provider, subscription.currency, subscription.amount, fees);
  return { percent: fees.percent, fixed: fees.fixed, total };
}

const redirect = (location: string): HttpResult => ({
  status: 303,
  headers: { location, 'cache-control': 'no-store' },
});

/** Back to the subscription's page after a change, in the page's language, with its one-line confirmation. */
const doneAt = (uuid: string, done: string, locale: string, hash = '') =>
  redirect(`${subscriptionPath(uuid)}?done=${done}&locale=${locale}${hash}`);

/** A form's field that could not be read: shown next to the field (400), nothing changed. */
class FormError extends Error {
  constructor(readonly fields: FieldErrors) {
    super('form');
  }
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

interface ChangeSpec {
  action: string;
  summary: string;
  /** Makes the change; answers where to go (the done redirect, or a provider's page). */
  run: (signed: Signed, uuid: string, body: Form) => Promise<HttpResult>;
  /** A domain error's property as the page's field (its input's id) and localised message. */
  field?: (detail: { property: string; code: string }, signed: Signed, body: Form) => [string, string] | undefined;
  /** The form is shown again here on an error (the cancel page, after the retention offer). */
  rerender?: (
    signed: Signed,
    uuid: string,
    status: number,
    errors: FieldErrors,
    values: FormValues,
  ) => Promise<HttpResult>;
}

async function runChange(
  spec: ChangeSpec,
  uuid: string,
  body: Form,
  cookies: Readonly<Record<string, string>>,
  headers: Readonly<Record<string, string | undefined>>,
): Promise<HttpResult> {
  const signed = await signedIn(cookies, body.locale);
  if (!isSigned(signed)) return signed;
  try {
    checkCsrf({ headers, body }, signed.session);
  } catch {
    return problem(signed.ctx, 'csrf', { retryPath: subscriptionPath(uuid) });
  }
  const values = formValues(body);
  const again = (status: number, errors: FieldErrors) =>
    spec.rerender
      ? spec.rerender(signed, uuid, status, errors, values)
      : renderSubscription(signed, uuid, status, { errors, values });
  const { locale } = signed.ctx;
  try {
    return await spec.run(signed, uuid, body);
  } catch (error) {
    if (error instanceof FormError) return again(400, error.fields);
    if (error instanceof NotFoundError) return pageResult(404, notFoundPage(signed.ctx));
    if (error instanceof TooManyRequestsError) {
      return again(429, { 'send-code': m(locale, 'error_code_wait') });
    }
    if (error instanceof ValidationError || error instanceof z.ZodError) {
      const details =
        error instanceof z.ZodError
          ? error.issues.map((issue) => ({ property: issue.path.join('.'), code: issue.code }))
          : error.details;
      const errors: Record<string, string> = {};
      for (const detail of details) {
        const [fieldId, message] = spec.field?.(detail, signed, body) ?? ['', m(locale, 'error_other')];
        errors[fieldId] ??= message;
      }
      return again(400, errors);
    }
    if (error instanceof ConflictError) {
      const off = error.details.some((d) => d.code === 'error.portal.feature_disabled');
      const message = off
        ? m(locale, 'error_feature', { organisation: signed.ctx.brand.name })
        : m(locale, 'error_state');
      return again(409, { '': message });
    }
    if (error instanceof AppError && error.statusCode === 403) {
      return problem(signed.ctx, 'csrf', { retryPath: subscriptionPath(uuid) });
    }
    throw error;
  }
}

/** What a form sent, as it is shown again: never a card number, a security code or a one-time code. */
function formValues(body: Form): FormValues {
  const { csrf_token: _t, number: _n, cvc: _c, code: _code, ...rest } = body;
  return rest;
}

const dayOrError = (value: string | undefined, fieldId: string, locale: PageContext['locale']): string => {
  const day = (value ?? '').trim();
  if (!DAY.test(day)) throw new FormError({ [fieldId]: m(locale, 'error_date') });
  return day;
};

/** The amount's errors in the page's words: the organisation's minimum or maximum, or its form. */
function amountField(signed: Signed, body: Form, currency: string): [string, string] {
  const { locale } = signed.ctx;
  const { min_amount: min, max_amount: max } = signed.brand.settings;
  const parsed = parseMajorAmount(body.amount ?? '', currency);
  if (parsed.ok && min !== null && parsed.minor < min) {
    return ['amount', m(locale, 'error_amount_min', { min: formatMoney(locale, min, currency) })];
  }
  if (parsed.ok && max !== null && parsed.minor > max) {
    return ['amount', m(locale, 'error_amount_max', { max: formatMoney(locale, max, currency) })];
  }
  return ['amount', m(locale, 'error_amount', { example: majorValue(2500, currency) })];
}

const CHANGES: ChangeSpec[] = [
  {
    action: 'amount',
    summary: 'Portal page: change the amount (major units)',
    run: async (signed, uuid, body) => {
      const { locale } = signed.ctx;
      const current = await donorSubscription(signed.session, uuid);
      const parsed = parseMajorAmount(body.amount ?? '', current.currency);
      if (!parsed.ok) {
        const digits = String(Math.max(0, majorValue(1, current.currency).split('.')[1]?.length ?? 0));
        throw new FormError({
          amount:
            parsed.reason === 'fraction'
              ? m(locale, 'error_amount_fraction', { digits })
              : m(locale, 'error_amount', { example: majorValue(2500, current.currency) }),
        });
      }
      try {
        await changeDonorTerms(signed.session, uuid, { amount: parsed.minor });
      } catch (error) {
        if (error instanceof ValidationError)
          throw new FormError({ amount: amountField(signed, body, current.currency)[1] });
        throw error;
      }
      return doneAt(uuid, 'amount', locale);
    },
  },
  {
    action: 'fees',
    summary: 'Portal page: cover the payment fees of each charge, or stop covering them',
    run: async (signed, uuid, body) => {
      // An unticked checkbox sends nothing: the form's marker says it was shown, so that is "off".
      if (body.cover_fees_shown === undefined) throw new FormError({ cover_fees: m(signed.ctx.locale, 'error_other') });
      await changeDonorTerms(signed.session, uuid, { cover_fees: body.cover_fees === 'on' });
      return doneAt(uuid, 'fees', signed.ctx.locale);
    },
    field: (_d, signed) => ['cover_fees', m(signed.ctx.locale, 'fees_none')],
  },
  {
    action: 'interval',
    summary: 'Portal page: change the interval',
    run: async (signed, uuid, body) => {
      await changeDonorTerms(signed.session, uuid, { recurring_interval: body.recurring_interval ?? '' });
      return doneAt(uuid, 'interval', signed.ctx.locale);
    },
    field: (_d, signed) => ['recurring_interval', m(signed.ctx.locale, 'error_interval')],
  },
  {
    action: 'next-date',
    summary: 'Portal page: change the next charge date',
    run: async (signed, uuid, body) => {
      const day = dayOrError(body.next_due_date, 'next_due_date', signed.ctx.locale);
      await changeDonorTerms(signed.session, uuid, { next_due_date: day });
      return doneAt(uuid, 'next_date', signed.ctx.locale);
    },
    field: (_d, signed) => ['next_due_date', m(signed.ctx.locale, 'error_date')],
  },
  {
    action: 'skip',
    summary: 'Portal page: skip the next charge',
    run: async (signed, uuid, body) => {
      const day = dayOrError(body.due_date, '', signed.ctx.locale);
      await skipDonorCharge(signed.session, uuid, { due_date: day });
      return doneAt(uuid, 'skip', signed.ctx.locale);
    },
    field: (_d, signed) => ['', m(signed.ctx.locale, 'error_state')],
  },
  {
    action: 'pause',
    summary: 'Portal page: pause (until an optional date)',
    run: async (signed, uuid, body) => {
      const resume = (body.resume_on ?? '').trim();
      const input = resume ? { resume_on: dayOrError(resume, 'resume_on', signed.ctx.locale) } : {};
      await pauseDonorSubscription(signed.session, uuid, input);
      return doneAt(uuid, 'pause', signed.ctx.locale);
    },
    field: (_d, signed) => ['resume_on', m(signed.ctx.locale, 'error_date')],
  },
  {
    action: 'resume',
    summary: 'Portal page: resume',
    run: async (signed, uuid) => {
      await resumeDonorSubscription(signed.session, uuid);
      return doneAt(uuid, 'resume', signed.ctx.locale);
    },
  },
  {
    action: 'cancel',
    summary: 'Portal page: cancel with a reason',
    run: async (signed, uuid, body) => {
      const reason = (body.reason ?? '').trim();
      if (!reason) throw new FormError({ reason: m(signed.ctx.locale, 'error_reason') });
      const comment = (body.comment ?? '').slice(0, 2_000);
      await cancelDonorSubscription(signed.session, uuid, { reason, ...(comment.trim() ? { comment } : {}) });
      return doneAt(uuid, 'cancel', signed.ctx.locale);
    },
    field: (_d, signed) => ['reason', m(signed.ctx.locale, 'error_reason')],
    rerender: async (signed, uuid, status, errors, values) => {
      if (!retentionOfferOf(signed.brand.settings)) return renderSubscription(signed, uuid, status, { errors, values });
      const subscription = await donorSubscription(signed.session, uuid);
      return pageResult(status, cancelPage(signed.ctx, subscription, signed.brand.settings, errors, values));
    },
  },
  {
    action: 'code',
    summary: 'Portal page: mail a one-time code (before a new payment method)',
    run: async (signed, uuid) => {
      await donorSubscription(signed.session, uuid);
      await sendCode(signed.session, signed.ctx.locale);
      return doneAt(uuid, 'code', signed.ctx.locale, '#payment-method-heading');
    },
    rerender: (signed, uuid, status, errors, values) =>
      renderSubscription(signed, uuid, status, { errors, values, codeSent: status === 429 }),
  },
  {
    action: 'payment-method',
    summary: 'Portal page: a new payment method (card or SEPA), with the mailed code',
    run: async (signed, uuid, body) => {
      const { locale } = signed.ctx;
      const sepa = body.payment_method === 'sepa_dd';
      const prefix = sepa ? 'sepa' : 'card';
      const code = (body.code ?? '').trim();
      if (!/^\d{6}$/.test(code)) throw new FormError({ [`${prefix}-code`]: m(locale, 'error_code_format') });
      const subscription = await donorSubscription(signed.session, uuid);
      const profiles = await methodProfiles(subscription);
      const profile = sepa ? profiles.sepa_dd : profiles.card;
      if (!profile) throw new ConflictError('No profile for this payment method', 'error.state.conflict');
      const digits = (value: string | undefined) => (value ?? '').replace(/[\s-]/g, '');
      const information = sepa
        ? {
            iban: (body.iban ?? '').trim(),
            ...((body.account_holder ?? '').trim() ? { account_holder: (body.account_holder ?? '').trim() } : {}),
          }
        : {
            number: digits(body.number),
            expiry_month: Number(digits(body.expiry_month)),
            expiry_year: Number(digits(body.expiry_year)),
            cvv: digits(body.cvc),
          };
      const baseUrl = signed.baseUrl ?? '';
      // Back through a page that needs no session (the provider's redirect is cross-site: the
      // SameSite=Strict cookie comes only with the next, same-site, click).
      const returnUrl = `${baseUrl}/portal/returned?method=${uuid}&locale=${locale}`;
      const changed = await changePaymentMethod(
        signed.session,
        uuid,
        { code, payment_method: sepa ? 'sepa_dd' : 'card', payment_information: information, profile },
        baseUrl,
        returnUrl,
      );
      if (changed.status === 'pending' && changed.redirect_url) return redirect(changed.redirect_url);
      return doneAt(uuid, 'payment_method', locale);
    },
    field: (detail, signed, body) => {
      const { locale } = signed.ctx;
      const sepa = body.payment_method === 'sepa_dd';
      if (detail.property === 'code') return [sepa ? 'sepa-code' : 'card-code', m(locale, 'error_code')];
      if (detail.code === 'error.portal.payment_method_declined') return ['', m(locale, 'error_declined')];
      if (sepa) return ['iban', m(locale, 'error_iban')];
      return ['card-number', m(locale, 'error_card')];
    },
  },
];

function changeRoute(spec: ChangeSpec): AnyRoute {
  return defineRoute({
    method: 'POST',
    path: `/portal/subscriptions/{subscription_uuid}/${spec.action}`,
    auth: 'none',
    limit: 'address',
    hidden: true,
    operationId: `portalPage${spec.action.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase())}`,
    summary: spec.summary,
    params,
    body: form,
    accepts: ['form'],
    responses: {
      303: { description: 'Back to the subscription’s page (or to the provider to approve a payment method)' },
      400: { description: 'The page again, the errors next to the fields (HTML)', html: true },
      401: { description: 'No session, or it ended (HTML)', html: true },
      403: { description: 'The CSRF token is missing or wrong (HTML)', html: true },
      409: { description: 'Not possible now, or the organisation turned it off (HTML)', html: true },
    },
    handle: ({ params: p, body, cookies, headers, baseUrl }) =>
      guard(body?.locale, () =>
        runChange(
          {
            ...spec,
            run: (signed, uuid, b) => spec.run({ ...signed, baseUrl }, uuid, b),
          },
          p.subscription_uuid,
          body ?? {},
          cookies,
          headers,
        ),
      ),
  });
}

/** `GET /portal/gifts?year=`: this year's when none (or a bad one) is asked for. */
async function gifts(query: z.output<typeof giftsQuery>, cookies: Readonly<Record<string, string>>) {
  const asked = Number(query.year);
  const year = Number.isInteger(asked) && asked >= 2000 && asked <= 2199 ? asked : new Date().getUTCFullYear();
  const signed = await signedIn(cookies, query.locale, `/portal/gifts?year=${year}`);
  if (!isSigned(signed)) return signed;
  const { payments } = await donorPayments(signed.session, year);
  const list = payments.flatMap((hit) => {
    const gift = giftOf(hit as Record<string, unknown>);
    return gift ? [gift] : [];
  });
  return pageResult(200, giftsPage(signed.ctx, year, list));
}

const returnedQuery = z.object({ method: z.string().max(100).optional(), locale: z.string().max(10).optional() });

export const portalManageRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/portal/returned',
    auth: 'none',
    limit: 'address',
    hidden: true,
    operationId: 'portalReturnedPage',
    summary: 'Where a provider sends the donor back after approving a new payment method (HTML, no session)',
    query: returnedQuery,
    responses: HTML_PAGE,
    handle: ({ query }) =>
      guard(query.locale, async () => {
        const locale = pageLocale(query.locale);
        const method = query.method && isUuid(query.method) ? query.method.toLowerCase() : undefined;
        return pageResult(200, returnedPage({ locale, brand: await brandFor(undefined, locale) }, method));
      }),
  }),
  defineRoute({
    method: 'GET',
    path: '/portal/subscriptions/{subscription_uuid}',
    auth: 'none',
    limit: 'address',
    hidden: true,
    operationId: 'portalSubscriptionPage',
    summary: 'One of the donor’s subscriptions, with a form per change the organisation allows (HTML)',
    params,
    query: pageQuery,
    responses: HTML_PAGE,
    handle: ({ params: p, query, cookies }) =>
      guard(query.locale, async () => {
        const uuid = p.subscription_uuid;
        const signed = await signedIn(cookies, query.locale, subscriptionPath(uuid));
        if (!isSigned(signed)) return signed;
        const done = query.done && DONE_FLAGS.includes(query.done) ? query.done : undefined;
        return renderSubscription(signed, uuid, 200, {
          ...(done ? { done } : {}),
          ...(done === 'code' ? { codeSent: true } : {}),
        });
      }),
  }),
  defineRoute({
    method: 'GET',
    path: '/portal/subscriptions/{subscription_uuid}/offer',
    auth: 'none',
    limit: 'address',
    hidden: true,
    operationId: 'portalRetentionOfferPage',
    summary: 'Before cancelling: the organisation’s offer (pause, or a lower amount) (HTML)',
    params,
    query: pageQuery,
    responses: { ...HTML_PAGE, 303: { description: 'No offer: to the cancel form' } },
    handle: ({ params: p, query, cookies }) =>
      guard(query.locale, async () => {
        const uuid = p.subscription_uuid;
        const signed = await signedIn(cookies, query.locale, `${subscriptionPath(uuid)}/offer`);
        if (!isSigned(signed)) return signed;
        const offer = retentionOfferOf(signed.brand.settings);
        if (!offer || !signed.brand.settings.features.cancel) {
          return redirect(`${subscriptionPath(uuid)}/cancel?locale=${signed.ctx.locale}`);
        }
        try {
          const subscription = await donorSubscription(signed.session, uuid);
          return pageResult(200, retentionPage(signed.ctx, subscription, signed.brand.settings, offer));
        } catch (error) {
          if (error instanceof NotFoundError) return pageResult(404, notFoundPage(signed.ctx));
          throw error;
        }
      }),
  }),
  defineRoute({
    method: 'GET',
    path: '/portal/subscriptions/{subscription_uuid}/cancel',
    auth: 'none',
    limit: 'address',
    hidden: true,
    operationId: 'portalCancelPage',
    summary: 'The cancel form (a reason from the organisation’s list, a comment) (HTML)',
    params,
    query: pageQuery,
    responses: { ...HTML_PAGE, 303: { description: 'Cancelling is off: to the subscription’s page' } },
    handle: ({ params: p, query, cookies }) =>
      guard(query.locale, async () => {
        const uuid = p.subscription_uuid;
        const signed = await signedIn(cookies, query.locale, `${subscriptionPath(uuid)}/cancel`);
        if (!isSigned(signed)) return signed;
        if (!signed.brand.settings.features.cancel) {
          return redirect(`${subscriptionPath(uuid)}?locale=${signed.ctx.locale}`);
        }
        try {
          const subscription = await donorSubscription(signed.session, uuid);
          return pageResult(200, cancelPage(signed.ctx, subscription, signed.brand.settings));
        } catch (error) {
          if (error instanceof NotFoundError) return pageResult(404, notFoundPage(signed.ctx));
          throw error;
        }
      }),
  }),
  defineRoute({
    method: 'GET',
    path: '/portal/gifts',
    auth: 'none',
    limit: 'address',
    hidden: true,
    operationId: 'portalGiftsPage',
    summary: 'The donor’s gifts of a year, with links to the years before and after (HTML)',
    query: giftsQuery,
    responses: {
      200: { description: 'HTML page', html: true },
      401: { description: 'No session, or it ended (HTML)', html: true },
    },
    handle: ({ query, cookies }) => guard(query.locale, () => gifts(query, cookies)),
  }),
  ...CHANGES.map(changeRoute),
];
