import {
  AppError,
  ConflictError,
  ForbiddenError,
  logger,
  parseOrThrow,
  TooManyRequestsError,
  ValidationError,
} from '@svc/core';
import { type AddressLimit, type AnyRoute, defineRoute, type HttpResult } from '@svc/http';
import { findOrganisation } from '@svc/organisations';
import * as z from 'zod';
import { CAPTCHA_OFF_TOKEN, captchaKind, TEST_CAPTCHA_TOKEN, verifyCaptcha } from '../domain/captcha';
import { connectOrganisation, executeOnboarding, guardedGuess } from '../domain/execution';
import { onboardRequestSchema } from '../domain/rules';
import { authenticateUser, issueTicket, redeemTicket } from '../domain/users';
import { ASSET_CACHE_CONTROL, findAsset } from '../page/assets';
import { fieldErrors, type Loaded, lookup, onboardBody, pageContext, prefill, startPath } from '../page/flow';
import { resolveLocale, t } from '../page/messages';
import {
  type Captcha,
  cspFor,
  type FieldErrors,
  merchantCategoryOptions,
  ONBOARD_FIELDS,
  type OnboardFormValues,
  type PageContext,
  problemStatus,
  renderEmailStep,
  renderOnboardStep,
  renderPickOrganisation,
  renderProblem,
  renderSignInStep,
} from '../page/render';
import { csrfState, csrfValid } from '../page/session';

/**
 * The hosted connect page: server-rendered
 * forms that work without JavaScript, each POST answered by the next step or a 303 to the
 * partner. The steps: the e-mail address (checked behind the captcha) → a new user reviews the
 * prefilled data, chooses a password and onboards, or a known user signs in, picks one of their
 * organisations and connects. Every form carries the CSRF token (page/session.ts).
 */
const pageQuery = z.object({
  token: z.string().max(200).optional(),
  redirect_url: z.string().max(8192).optional(),
  locale: z.string().max(10).optional(),
});
const form = z.record(z.string(), z.string());
type Form = Record<string, string>;

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  // The token is in the page's address: never send it on to another site.
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

function captcha(): Captcha {
  switch (captchaKind()) {
    case 'test':
      return { kind: 'test', token: TEST_CAPTCHA_TOKEN };
    case 'off':
      return { kind: 'off', token: CAPTCHA_OFF_TOKEN };
    case 'recaptcha':
      return { kind: 'recaptcha', siteKey: process.env.SVC_CAPTCHA_SITE_KEY ?? '' };
  }
}

interface PageRequest {
  cookies: Readonly<Record<string, string>>;
  headers: Readonly<Record<string, string | undefined>>;
  baseUrl: string;
}

function htmlPage(
  status: number,
  body: string,
  options: { ctx?: PageContext; partnerUrl?: string; setCookie?: string | undefined },
): HttpResult {
  return {
    status,
    html: body,
    headers: { ...SECURITY_HEADERS, 'content-security-policy': cspFor(options.ctx, captcha(), options.partnerUrl) },
    ...(options.setCookie ? { cookies: [options.setCookie] } : {}),
  };
}

function redirect(location: string): HttpResult {
  return { status: 303, headers: { ...SECURITY_HEADERS, location } };
}

type Step = (loaded: Loaded, ctx: PageContext, form: Form) => Promise<HttpResult>;

/**
 * One POST step: the CSRF pair is checked first, then the process; the step itself renders the
 * next page. Anything unexpected is logged and shown as the "something went wrong" page.
 */
function postStep(request: PageRequest, body: Form, step: Step): Promise<HttpResult> {
  return guard(request, body.locale, async () => {
    const found = await lookup(
      body.token,
      body.locale,
      request.headers['accept-language'],
      body.redirect_url || undefined,
    );
    if (!csrfValid(request.cookies, body.csrf)) {
      const view = found.ok ? found.loaded.view : found.view;
      return htmlPage(403, renderProblem(found.ok ? found.loaded.locale : found.locale, 'csrf', view, retry(body)), {
        partnerUrl: view?.returnUrl,
      });
    }
    if (!found.ok) return problem(found);
    const csrf = csrfState(request.cookies, request.baseUrl.startsWith('https:'));
    return step(found.loaded, pageContext(found.loaded, csrf.value), body);
  });
}

function retry(body: Form) {
  return body.token ? { retryPath: startPath(body.token, body.redirect_url || undefined) } : {};
}

function problem(found: Extract<Awaited<ReturnType<typeof lookup>>, { ok: false }>): HttpResult {
  return htmlPage(problemStatus(found.problem), renderProblem(found.locale, found.problem, found.view), {
    partnerUrl: found.view?.returnUrl,
  });
}

async function guard(
  request: PageRequest,
  requestedLocale: string | undefined,
  run: () => Promise<HttpResult>,
): Promise<HttpResult> {
  try {
    return await run();
  } catch (error) {
    logger.error('The connect page failed', { error: error as Error });
    const locale = resolveLocale(requestedLocale, request.headers['accept-language']);
    return htmlPage(500, renderProblem(locale, 'failed'), {});
  }
}

/** Execution conflicts on the page: the process went on meanwhile (used or expired). */
function executionProblem(loaded: Loaded, error: unknown): HttpResult | undefined {
  if (!(error instanceof ConflictError)) return undefined;
  const code = error.details[0]?.code;
  if (code === 'error.onboarding.expired' || code === 'error.onboarding.already_executed') {
    const kind = code === 'error.onboarding.expired' ? 'expired' : 'used';
    return htmlPage(problemStatus(kind), renderProblem(loaded.locale, kind, loaded.view), {
      partnerUrl: loaded.view.returnUrl,
    });
  }
  return undefined;
}

function submittedValues(body: Form): OnboardFormValues {
  return Object.fromEntries(
    ONBOARD_FIELDS.filter(
      (name) => name !== 'password' && name !== 'password_confirmation' && body[name] !== undefined,
    ).map((name) => [name, body[name]]),
  );
}

const emailStep: Step = async (loaded, ctx, body) => {
  const email = (body.email ?? '').trim().toLowerCase();
  const errors: FieldErrors = {};
  if (!z.email().max(254).safeParse(email).success) errors.email = t(ctx.locale, 'error_email');
  else if (!(await verifyCaptcha(body.recaptcha_token || body['g-recaptcha-response'] || '')))
    errors.recaptcha_token = t(ctx.locale, 'error_captcha');
  if (Object.keys(errors).length > 0) {
    return htmlPage(400, renderEmailStep(ctx, { email, errors, captcha: captcha() }), {
      ctx,
      partnerUrl: ctx.partner.returnUrl,
    });
  }
  const { emailExists } = await import('../repository/user-repository');
  if (await emailExists(email)) {
    return htmlPage(200, renderSignInStep(ctx, { email }), { ctx, partnerUrl: ctx.partner.returnUrl });
  }
  return onboardForm(ctx, prefill(loaded.record, email, ctx.locale), undefined, 200);
};

function onboardForm(ctx: PageContext, values: OnboardFormValues, errors: FieldErrors | undefined, status: number) {
  return htmlPage(
    status,
    renderOnboardStep(ctx, { values, ...(errors ? { errors } : {}), mccOptions: merchantCategoryOptions(ctx.locale) }),
    { ctx, partnerUrl: ctx.partner.returnUrl },
  );
}

const onboardStep: Step = async (loaded, ctx, body) => {
  const values = submittedValues(body);
  if ((body.password ?? '') !== (body.password_confirmation ?? '')) {
    return onboardForm(ctx, values, { password_confirmation: t(ctx.locale, 'error_passwords_differ') }, 400);
  }
  try {
    await executeOnboarding(loaded.record.token, parseOrThrow(onboardRequestSchema, onboardBody(body)));
  } catch (error) {
    const stale = executionProblem(loaded, error);
    if (stale) return stale;
    if (error instanceof ValidationError) return onboardForm(ctx, values, fieldErrors(error.details, ctx.locale), 400);
    if (error instanceof ConflictError) {
      return onboardForm(ctx, values, { user_email: t(ctx.locale, 'error_user_exists') }, 409);
    }
    if (error instanceof TooManyRequestsError) {
      return onboardForm(ctx, values, { user_email: t(ctx.locale, 'error_too_many_attempts') }, 429);
    }
    throw error;
  }
  return redirect(ctx.partner.returnUrl);
};

async function organisationsOf(uuids: readonly string[]) {
  const found = await Promise.all(uuids.map((uuid) => findOrganisation(uuid)));
  return found.flatMap((o) => (o ? [{ uuid: o.uuid, name: o.name }] : []));
}

const signInStep: Step = async (loaded, ctx, body) => {
  const email = (body.email ?? '').trim().toLowerCase();
  const page = (errors: FieldErrors, status: number) =>
    htmlPage(status, renderSignInStep(ctx, { email, errors }), { ctx, partnerUrl: ctx.partner.returnUrl });
  let user: Awaited<ReturnType<typeof authenticateUser>>;
  try {
    // Reserved on the process before the password is checked (execution.ts guardedGuess).
    user = await guardedGuess(
      loaded.record,
      (error) => error instanceof ForbiddenError,
      () => authenticateUser(email, body.password ?? ''),
    );
  } catch (error) {
    if (error instanceof ForbiddenError) return page({ password: t(ctx.locale, 'error_credentials') }, 403);
    if (error instanceof TooManyRequestsError) return page({ password: t(ctx.locale, 'error_too_many_attempts') }, 429);
    throw error;
  }
  const organisations = await organisationsOf(user.organisation_uuids);
  if (organisations.length === 0) return page({ form: t(ctx.locale, 'error_no_organisations') }, 409);
  const ticket = await issueTicket(user, loaded.record.uuid);
  return htmlPage(200, renderPickOrganisation(ctx, { ticket, organisations }), {
    ctx,
    partnerUrl: ctx.partner.returnUrl,
  });
};

const connectStep: Step = async (loaded, ctx, body) => {
  const user = await redeemTicket(body.ticket ?? '', loaded.record.uuid);
  if (!user) {
    return htmlPage(403, renderProblem(ctx.locale, 'csrf', ctx.partner, { retryPath: ctx.selfPath }), {
      partnerUrl: ctx.partner.returnUrl,
    });
  }
  try {
    await connectOrganisation(loaded.record, user, body.organisation_uuid ?? '');
  } catch (error) {
    const stale = executionProblem(loaded, error);
    if (stale) return stale;
    if (error instanceof AppError && (error.statusCode === 403 || error.statusCode === 409)) {
      const organisations = await organisationsOf(user.organisation_uuids);
      return htmlPage(
        error.statusCode,
        renderPickOrganisation(ctx, {
          ticket: body.ticket ?? '',
          organisations,
          errors: {
            organisation_uuid:
              error.statusCode === 409
                ? t(ctx.locale, 'error_already_connected', { partner: loaded.partner.name })
                : t(ctx.locale, 'error_not_member'),
          },
        }),
        { ctx, partnerUrl: ctx.partner.returnUrl },
      );
    }
    throw error;
  }
  return redirect(ctx.partner.returnUrl);
};

/** The steps that check a password or hash a new one take the stricter per-address limit. */
const postRoute = (path: string, operationId: string, summary: string, step: Step, limit: AddressLimit = 'address') =>
  defineRoute({
    method: 'POST',
    path,
    auth: 'none',
    limit,
    hidden: true,
    operationId,
    summary,
    body: form,
    accepts: ['form'],
    responses: { 200: { description: 'The next step (HTML)', html: true }, 303: { description: 'To the partner' } },
    handle: ({ body, cookies, headers, baseUrl }) => postStep({ cookies, headers, baseUrl }, body ?? {}, step),
  });

export const connectRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/connect',
    auth: 'none',
    limit: 'address',
    operationId: 'connectPage',
    summary: 'The hosted onboarding page (HTML): /connect?token=…[&redirect_url=<base64>][&locale=de_CH]',
    query: pageQuery,
    responses: {
      200: { description: 'HTML page', html: true },
      404: { description: 'Unknown link (HTML)', html: true },
      409: { description: 'The link was used already (HTML)', html: true },
      410: { description: 'The link has expired (HTML)', html: true },
    },
    handle: ({ query, cookies, headers, baseUrl }) =>
      guard({ cookies, headers, baseUrl }, query.locale, async () => {
        const found = await lookup(
          query.token,
          query.locale,
          headers['accept-language'],
          query.redirect_url || undefined,
        );
        if (!found.ok) return problem(found);
        const csrf = csrfState(cookies, baseUrl.startsWith('https:'));
        const ctx = pageContext(found.loaded, csrf.value);
        const email = found.loaded.record.initialisation_data.user?.email;
        return htmlPage(
          200,
          renderEmailStep(ctx, { ...(typeof email === 'string' ? { email } : {}), captcha: captcha() }),
          { ctx, partnerUrl: ctx.partner.returnUrl, setCookie: csrf.setCookie },
        );
      }),
  }),
  postRoute('/connect/email', 'connectEmailStep', 'Hosted page: e-mail step', emailStep),
  postRoute(
    '/connect/onboard',
    'connectOnboardStep',
    'Hosted page: create the organisation',
    onboardStep,
    'credentials',
  ),
  postRoute('/connect/sign-in', 'connectSignInStep', 'Hosted page: sign in', signInStep, 'credentials'),
  postRoute('/connect/connect', 'connectConnectStep', 'Hosted page: connect an organisation', connectStep),
  defineRoute({
    method: 'GET',
    path: '/connect/assets/{file}',
    auth: 'none',
    limit: 'public-read',
    hidden: true,
    operationId: 'connectPageAsset',
    summary: "The hosted page's stylesheet and script (content-hashed names, cached for a year)",
    params: z.object({ file: z.string().max(100) }),
    responses: { 200: { description: 'CSS or JavaScript' } },
    handle: async ({ params }): Promise<HttpResult> => {
      const asset = findAsset(params.file);
      if (!asset) return { status: 404, text: 'Not found', headers: { 'x-content-type-options': 'nosniff' } };
      return {
        status: 200,
        text: asset.body,
        headers: {
          'content-type': asset.contentType,
          'cache-control': ASSET_CACHE_CONTROL,
          'x-content-type-options': 'nosniff',
        },
      };
    },
  }),
];
