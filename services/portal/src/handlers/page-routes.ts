import { isUuid, logger, TooManyRequestsError } from '@svc/core';
import { type AnyRoute, defineRoute, type HttpResult } from '@svc/http';
import { findSupporter } from '@svc/supporters';
import * as z from 'zod';
import { type Brand, brandOf, NEUTRAL_BRAND } from '../domain/brand';
import { requestLoginLink } from '../domain/login';
import { pageResult, type RenderedPage } from '../page/layout';
import { pageLocale, t } from '../page/messages';
import {
  checkMailPage,
  continuePage,
  homePage,
  loginPage,
  type PageContext,
  PROBLEM_STATUS,
  type Problem,
  problemPage,
  signedOutPage,
} from '../page/pages';
import type { PortalLocale } from '../repository/link-repository';
import { formCsrf, formCsrfValid } from '../session/form-csrf';
import { lookupLink, redeemLink } from '../session/redeem';
import {
  checkCsrf,
  clearedSessionCookie,
  endPortalSession,
  readPortalSession,
  sessionCookie,
} from '../session/sessions';
import { homeContent } from './manage-home';

/**
 * The donor portal's pages (contract section 12): server-rendered, no script, in de/fr/it/en.
 * `GET /portal?token=…` shows the link's page and uses nothing up (mail scanners open links);
 * its "Continue" POSTs the token with the form's CSRF pair and starts the session; the home page
 * needs the session; a used, expired or unknown link, or an ended session, gets a page that says
 * so with the form for a fresh link by e-mail.
 */
const pageQuery = z.object({
  token: z.string().max(200).optional(),
  locale: z.string().max(10).optional(),
  organisation_uuid: z.string().max(100).optional(),
});
const homeQuery = z.object({
  locale: z.string().max(10).optional(),
  /** Back from approving a new payment method: that subscription's result is shown. */
  method: z.string().max(100).optional(),
});
const form = z.record(z.string(), z.string());
type Form = Record<string, string>;

/** An organisation's brand, or the portal's own look where none is known. */
export async function brandFor(organisationUuid: string | undefined, locale: PortalLocale): Promise<Brand> {
  const found =
    organisationUuid && isUuid(organisationUuid) ? await brandOf(organisationUuid.toLowerCase()) : undefined;
  return found ? { name: found.name, color: found.color } : NEUTRAL_BRAND(t(locale, 'portal_name'));
}

export function problem(
  ctx: PageContext,
  kind: Problem,
  options: Parameters<typeof problemPage>[2] & { cookies?: string[]; headers?: Record<string, string> } = {},
): HttpResult {
  const { cookies, headers, ...rest } = options;
  return pageResult(PROBLEM_STATUS[kind], problemPage(ctx, kind, rest), {
    ...(cookies ? { cookies } : {}),
    ...(headers ? { headers } : {}),
  });
}

/** Anything unexpected is logged and shown as the "something went wrong" page. */
export async function guard(asked: string | undefined, run: () => Promise<HttpResult>): Promise<HttpResult> {
  try {
    return await run();
  } catch (error) {
    logger.error('A portal page failed', { error: error as Error });
    const locale = pageLocale(asked);
    return problem({ locale, brand: NEUTRAL_BRAND(t(locale, 'portal_name')) }, 'failed');
  }
}

const linkPath = (token: string) => `/portal?token=${encodeURIComponent(token)}`;

/** `GET /portal`: a link's page (`?token=`), or an organisation's way in (`?organisation_uuid=`). */
async function linkPage(
  query: z.output<typeof pageQuery>,
  cookies: Readonly<Record<string, string>>,
): Promise<HttpResult> {
  if (!query.token) {
    const locale = pageLocale(query.locale);
    const organisation = query.organisation_uuid;
    const brand = organisation && isUuid(organisation) ? await brandOf(organisation.toLowerCase()) : undefined;
    if (!organisation || !brand) {
      return problem({ locale, brand: NEUTRAL_BRAND(t(locale, 'portal_name')) }, 'unknown');
    }
    const ctx = { locale, brand, selfPath: `/portal?organisation_uuid=${organisation.toLowerCase()}` };
    if (!brand.settings.enabled) return problem(ctx, 'disabled');
    return pageResult(200, loginPage(ctx, { organisationUuid: organisation.toLowerCase() }));
  }
  const found = await lookupLink(query.token);
  const locale = pageLocale(query.locale, found.link?.locale);
  const { organisationUuid } = knownOrganisation(found.link?.organisation_uuid ?? query.organisation_uuid);
  const branded = organisationUuid ? await brandOf(organisationUuid) : undefined;
  const ctx: PageContext = {
    locale,
    brand: branded ?? NEUTRAL_BRAND(t(locale, 'portal_name')),
    selfPath: linkPath(query.token),
  };
  if (!found.ok) return problem(ctx, found.problem, branded && organisationUuid ? { organisationUuid } : {});
  if (!branded?.settings.enabled) return problem(ctx, 'disabled');
  const csrf = formCsrf(cookies);
  return pageResult(200, continuePage(ctx, { token: query.token, csrf: csrf.value }), {
    ...(csrf.setCookie ? { cookies: [csrf.setCookie] } : {}),
  });
}

function knownOrganisation(uuid: string | undefined): { organisationUuid?: string } {
  return uuid && isUuid(uuid) ? { organisationUuid: uuid.toLowerCase() } : {};
}

/** `POST /portal`: the "Continue" button. Redeems the link and starts the session, then home. */
async function continueToPortal(body: Form, cookies: Readonly<Record<string, string>>): Promise<HttpResult> {
  const token = body.token ?? '';
  if (!formCsrfValid(cookies, body.csrf)) {
    const found = await lookupLink(token);
    const locale = pageLocale(body.locale, found.link?.locale);
    const ctx = { locale, brand: await brandFor(found.link?.organisation_uuid, locale) };
    return problem(ctx, 'csrf', token ? { retryPath: linkPath(token) } : {});
  }
  const redeemed = await redeemLink(token);
  if (!redeemed.ok) {
    const locale = pageLocale(body.locale, redeemed.link?.locale);
    const organisationUuid = redeemed.link?.organisation_uuid;
    const ctx = { locale, brand: await brandFor(organisationUuid, locale) };
    return problem(ctx, redeemed.problem, knownOrganisation(organisationUuid));
  }
  return {
    status: 303,
    headers: { location: '/portal/home', 'cache-control': 'no-store' },
    cookies: [sessionCookie(redeemed.sessionId)],
  };
}

/** The donor's name as the home page greets them, if the record has one. */
function nameOf(supporter: Awaited<ReturnType<typeof findSupporter>>): string | undefined {
  if (!supporter) return undefined;
  const name = [supporter.first_name, supporter.last_name].filter((part) => part?.trim()).join(' ');
  return name || supporter.raw_name || undefined;
}

/** The page for a request without an active session: ended (its organisation's form) or none. */
export async function sessionProblem(
  found: Exclude<Awaited<ReturnType<typeof readPortalSession>>, { state: 'active' }>,
  asked: string | undefined,
): Promise<HttpResult> {
  const known = found.state === 'ended' ? found : undefined;
  const locale = pageLocale(asked, known?.locale);
  const ctx = { locale, brand: await brandFor(known?.organisation_uuid, locale) };
  return problem(ctx, 'session', {
    ...knownOrganisation(known?.organisation_uuid),
    cookies: [clearedSessionCookie()],
  });
}

/** `GET /portal/home`: the signed-in donor's start page. */
async function home(query: z.output<typeof homeQuery>, cookies: Readonly<Record<string, string>>) {
  const found = await readPortalSession({ cookies });
  if (found.state !== 'active') return sessionProblem(found, query.locale);
  const { session } = found;
  const locale = pageLocale(query.locale, session.locale);
  const [brand, supporter] = await Promise.all([
    brandFor(session.organisation_uuid, locale),
    findSupporter(session.supporter_uuid),
  ]);
  const ctx: PageContext = {
    locale,
    brand,
    selfPath: '/portal/home',
    csrfToken: session.csrf_token,
    ...(session.return_url ? { returnUrl: session.return_url } : {}),
  };
  const name = nameOf(supporter);
  const content = await homeContent(session, ctx, query.method);
  return pageResult(200, homePage(ctx, name ? { name } : {}, content));
}

/** `POST /portal/login-form`: the pages' form for a fresh link; answers as the JSON route does, as pages. */
async function loginForm(body: Form, sourceIp: string, baseUrl: string): Promise<HttpResult> {
  const locale = pageLocale(body.locale);
  const organisationUuid = (body.organisation_uuid ?? '').trim().toLowerCase();
  const brand = isUuid(organisationUuid) ? await brandOf(organisationUuid) : undefined;
  if (!brand) return problem({ locale, brand: NEUTRAL_BRAND(t(locale, 'portal_name')) }, 'unknown');
  const ctx = { locale, brand };
  const email = (body.email ?? '').trim();
  if (!z.email().max(254).safeParse(email).success) {
    const page: RenderedPage = loginPage(ctx, {
      organisationUuid,
      email,
      error: t(locale, 'login_error_email'),
    });
    return pageResult(400, page);
  }
  try {
    await requestLoginLink({ organisation_uuid: organisationUuid, email }, sourceIp, baseUrl);
  } catch (error) {
    if (!(error instanceof TooManyRequestsError)) throw error;
    return problem(ctx, 'too_many', {
      retryAfterSeconds: error.retryAfterSeconds,
      headers: { 'retry-after': String(error.retryAfterSeconds) },
    });
  }
  return pageResult(200, checkMailPage(ctx, email));
}

/** `POST /portal/logout`: ends the session (its CSRF token required), then the signed-out page. */
async function logout(
  body: Form,
  cookies: Readonly<Record<string, string>>,
  headers: Record<string, string | undefined>,
) {
  const found = await readPortalSession({ cookies });
  if (found.state !== 'active') return sessionProblem(found, body.locale);
  const { session } = found;
  const locale = pageLocale(body.locale, session.locale);
  const brand = await brandFor(session.organisation_uuid, locale);
  try {
    checkCsrf({ headers, body }, session);
  } catch {
    return problem({ locale, brand }, 'csrf', { retryPath: '/portal/home' });
  }
  await endPortalSession({ cookies });
  return pageResult(200, signedOutPage({ locale, brand }, session.organisation_uuid), {
    cookies: [clearedSessionCookie()],
  });
}

const HTML_PROBLEMS = {
  404: { description: 'Unknown link or organisation (HTML)', html: true },
  409: { description: 'The link was used already, or the portal is off (HTML)', html: true },
  410: { description: 'The link has expired, or its e-mail address changed (HTML)', html: true },
} as const;

/** A form POST of the pages: hidden from the API description, as the hosted onboarding page's are. */
const formRoute = (
  path: string,
  operationId: string,
  summary: string,
  handle: (request: {
    body: Form;
    cookies: Readonly<Record<string, string>>;
    headers: Readonly<Record<string, string | undefined>>;
    sourceIp: string;
    baseUrl: string;
  }) => Promise<HttpResult>,
) =>
  defineRoute({
    method: 'POST',
    path,
    auth: 'none',
    limit: 'address',
    hidden: true,
    operationId,
    summary,
    body: form,
    accepts: ['form'],
    responses: { 200: { description: 'The next page (HTML)', html: true }, 303: { description: 'To the portal' } },
    handle: ({ body, cookies, headers, sourceIp, baseUrl }) =>
      guard(body?.locale, () => handle({ body: body ?? {}, cookies, headers, sourceIp, baseUrl })),
  });

export const portalPageRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/portal',
    auth: 'none',
    limit: 'address',
    operationId: 'portalPage',
    summary: 'The donor portal’s way in (HTML): /portal?token=… (a link’s page) or /portal?organisation_uuid=…',
    description:
      'Opening a link uses nothing up; its "Continue" button redeems it and starts a session. Without a token, the organisation’s page asks for a link by e-mail.',
    query: pageQuery,
    responses: { 200: { description: 'HTML page', html: true }, ...HTML_PROBLEMS },
    handle: ({ query, cookies }) => guard(query.locale, () => linkPage(query, cookies)),
  }),
  formRoute('/portal', 'portalContinue', 'Portal: redeem a link and start a session', ({ body, cookies }) =>
    continueToPortal(body, cookies),
  ),
  defineRoute({
    method: 'GET',
    path: '/portal/home',
    auth: 'none',
    limit: 'address',
    hidden: true,
    operationId: 'portalHome',
    summary: 'The signed-in donor’s start page (HTML; the session cookie)',
    query: homeQuery,
    responses: {
      200: { description: 'HTML page', html: true },
      401: { description: 'No session, or it ended (HTML)', html: true },
    },
    handle: ({ query, cookies }) => guard(query.locale, () => home(query, cookies)),
  }),
  formRoute('/portal/login-form', 'portalLoginForm', 'Portal: ask for a link by e-mail (the pages’ form)', (r) =>
    loginForm(r.body, r.sourceIp, r.baseUrl),
  ),
  formRoute('/portal/logout', 'portalLogout', 'Portal: sign out', ({ body, cookies, headers }) =>
    logout(body, cookies, headers),
  ),
];
