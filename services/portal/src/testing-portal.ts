/** Test support for the portal's tests: an organisation with its portal on, its supporters, links, pages and mail. */
import { newUuid } from '@svc/core';
import { expect } from 'vitest';
import { type ApiResponse, call, tokenFor } from '../../../test/support/api';
import { createClient } from '../../identity/src/index';
import { organisationSeedSchema, upsertOrganisation } from '../../organisations/src/index';

export const PORTAL_SETTINGS_ON = {
  enabled: true,
  features: {
    amount: true,
    interval: true,
    next_date: true,
    skip: true,
    pause: true,
    payment_method: true,
    cancel: true,
  },
  min_amount: null,
  max_amount: null,
  intervals: ['monthly', 'yearly'],
  cancel_reasons: ['too_expensive', 'other'],
  retention_offer: null,
  brand: { name: 'Verein Sonnenschein', color: '#0a3d62' },
  return_url: 'https://verein.example.org/danke',
};

export interface PortalOrganisation {
  organisation: string;
  token: string;
  client: { id: string; secret: string };
}

/** A fresh token for the organisation's client (a test that moved the clock past the last one's hour). */
export async function refreshToken(org: PortalOrganisation): Promise<void> {
  org.token = await tokenFor(org.client);
}

/** A new organisation (its own client) with the portal on, or with the settings given. */
export async function portalOrganisation(settings: Record<string, unknown> = {}): Promise<PortalOrganisation> {
  const organisation = newUuid();
  await upsertOrganisation(
    organisationSeedSchema.parse({ uuid: organisation, name: `Stiftung ${organisation.slice(0, 4)}` }),
  );
  const created = await createClient({ grants: [{ organisation_uuid: organisation }] });
  const client = { id: created.client_id, secret: created.client_secret };
  const token = await tokenFor(client);
  const put = await call('PUT', `/organisations/${organisation}/portal-settings`, {
    token,
    body: { ...PORTAL_SETTINGS_ON, ...settings },
  });
  expect(put.status, put.text).toBe(200);
  return { organisation, token, client };
}

let n = 0;
/** An address no other test uses (the local mail lists by recipient). */
export const uniqueEmail = (name = 'donor') => `${name}-${Date.now()}-${n++}@example.org`;

/** A supporter of the organisation (201), with the fields given over a first name and locale. */
export async function supporterOf(org: PortalOrganisation, fields: Record<string, unknown>): Promise<string> {
  const response = await call('POST', '/supporters', {
    token: org.token,
    body: { organisation_uuid: org.organisation, first_name: 'Anna', last_name: 'Muster', locale: 'de_CH', ...fields },
  });
  expect(response.status, response.text).toBe(201);
  return response.json.uuid as string;
}

/** A link for the supporter through the API; its path (`/portal?token=…`) and token. */
export async function linkFor(
  org: PortalOrganisation,
  supporter: string,
  body: Record<string, unknown> = { flow: 'manage' },
): Promise<{ path: string; token: string; response: ApiResponse }> {
  const response = await call('POST', `/supporters/${supporter}/portal-links`, { token: org.token, body });
  expect(response.status, response.text).toBe(201);
  const url = new URL(response.json.url);
  return { path: `${url.pathname}${url.search}`, token: url.searchParams.get('token') ?? '', response };
}

/** `name=value` of a Set-Cookie header, and the header itself. */
export function cookieNamed(response: ApiResponse, name: string): { pair: string; header: string } | undefined {
  const header = response.cookies.find((cookie) => cookie.startsWith(`${name}=`));
  return header ? { pair: header.split(';')[0] ?? '', header } : undefined;
}

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' } as const;

/** A form POST with the cookies given. */
export function postForm(path: string, fields: Record<string, string>, cookies: string[] = [], sourceIp?: string) {
  return call('POST', path, {
    rawBody: new URLSearchParams(fields).toString(),
    headers: { ...FORM, ...(cookies.length > 0 ? { cookie: cookies.join('; ') } : {}) },
    ...(sourceIp ? { sourceIp } : {}),
  });
}

/** The hidden field `name` of a page's form. */
export function hiddenField(page: string, name: string): string | undefined {
  return new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page)?.[1];
}

/** Opens a link's page and presses "Continue": the answer, and the session cookie it set (if any). */
export async function redeem(path: string): Promise<{ response: ApiResponse; session?: string }> {
  const page = await call('GET', path);
  expect(page.status, page.text).toBe(200);
  const csrf = cookieNamed(page, 'svc_portal_csrf');
  const response = await postForm(
    '/portal',
    { token: hiddenField(page.text, 'token') ?? '', csrf: hiddenField(page.text, 'csrf') ?? '' },
    csrf ? [csrf.pair] : [],
  );
  const session = cookieNamed(response, 'svc_portal_session');
  return { response, ...(session ? { session: session.pair } : {}) };
}

/** Runs background work (the mail worker among it) until nothing is left. */
export async function settle(): Promise<void> {
  const answer = await call('POST', '/_local/settle');
  expect(answer.status, answer.text).toBe(200);
}

export interface ListedMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  links: string[];
}

/** The mail the local SES stand-in took for an address, newest first. */
export async function mailTo(to: string): Promise<ListedMail[]> {
  const listed = await call('GET', `/_local/mail?to=${encodeURIComponent(to)}`);
  expect(listed.status).toBe(200);
  return listed.json as ListedMail[];
}

/** Every page of the portal carries the same security headers as the hosted onboarding page. */
export function expectPageHeaders(response: ApiResponse): void {
  expect(response.headers['content-type']).toMatch(/^text\/html/);
  expect(response.headers['x-frame-options']).toBe('DENY');
  expect(response.headers['x-content-type-options']).toBe('nosniff');
  expect(response.headers['referrer-policy']).toBe('no-referrer');
  expect(response.headers['cache-control']).toBe('no-store');
  const policy = response.headers['content-security-policy'] ?? '';
  expect(policy).toContain("frame-ancestors 'none'");
  expect(policy).toContain("default-src 'none'");
  expect(policy).not.toContain('unsafe-inline');
}
