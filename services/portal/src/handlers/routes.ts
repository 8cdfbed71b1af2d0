import { deferred } from '@svc/core';
import { type AnyRoute, defineRoute, uuidParams } from '@svc/http';
import * as z from 'zod';
import { createPortalLink, portalLinkInput } from '../domain/links';
import { LOGIN_LIMITS, loginInput, requestLoginLink } from '../domain/login';
import { getPortalSettings, portalSettingsInput, putPortalSettings } from '../domain/settings';
import { settingsRecordSchema } from '../repository/settings-repository';
import { portalApiRoutes } from './api-routes';
import { portalManageRoutes } from './manage-routes';
import { portalPageRoutes } from './page-routes';

/** The settings as GET answers them and PUT takes them: the stored record without its bookkeeping. */
const portalSettingsResponse = deferred(() =>
  settingsRecordSchema.omit({ organisation_uuid: true, version: true, updated: true }),
);

const portalLinkResponse = z.object({
  url: z.string().meta({ description: 'The donor’s link: …/portal?token=…, shown once' }),
  expires_at: z.number().int().meta({ description: 'Unix seconds: 24 hours after it was made' }),
});

/** One answer for every login request: it never tells whether the e-mail is a donor's. */
export const LOGIN_ACCEPTED = {
  message:
    'If a supporter of this organisation has this e-mail address and its donor portal is on, a link to the portal is on its way to it',
} as const;

const loginResponse = z.object({ message: z.string() });

const organisationParams = uuidParams('organisation_uuid');
const INVALID = { description: 'Invalid input; the details name each offending property' };

export const portalRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/organisations/{organisation_uuid}/portal-settings',
    auth: 'token',
    operationId: 'getPortalSettings',
    summary: 'What the organisation’s donors may do in the portal (the defaults until it is set)',
    params: organisationParams,
    responses: {
      200: { description: 'Portal settings', schema: portalSettingsResponse },
      403: { description: 'No grant on the organisation' },
      404: { description: 'Unknown organisation' },
    },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: await getPortalSettings(principal(), params.organisation_uuid),
    }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/organisations/{organisation_uuid}/portal-settings',
    auth: 'token',
    operationId: 'putPortalSettings',
    summary: 'Replace the organisation’s portal settings (every field, as GET shows them)',
    description:
      'Needs a grant on the whole organisation. Amounts are in minor units; intervals are recurring_interval values.',
    params: organisationParams,
    body: portalSettingsInput,
    responses: {
      200: { description: 'Portal settings', schema: portalSettingsResponse },
      400: INVALID,
      403: { description: 'No grant on the whole organisation' },
      404: { description: 'Unknown organisation' },
    },
    handle: async ({ params, body, principal }) => ({
      status: 200,
      body: await putPortalSettings(principal(), params.organisation_uuid, body),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/supporters/{supporter_uuid}/portal-links',
    auth: 'token',
    operationId: 'createPortalLink',
    summary: 'A link for the supporter into the donor portal: valid 24 hours, redeemed once',
    params: uuidParams('supporter_uuid'),
    body: portalLinkInput,
    responses: {
      201: { description: 'The link (its token is shown only here)', schema: portalLinkResponse },
      400: {
        description:
          'Invalid input; a supporter without an e-mail (error.portal.no_email) or one mail cannot be sent to with send_email (error.portal.email_not_sendable)',
      },
      403: { description: 'No grant on the supporter’s organisation' },
      404: { description: 'Unknown supporter' },
      409: { description: 'The organisation’s portal is not enabled' },
    },
    handle: async ({ params, body, principal, baseUrl }) => {
      const { url, expires_at } = await createPortalLink(principal(), params.supporter_uuid, body, baseUrl);
      return { status: 201, headers: { 'cache-control': 'no-store' }, body: { url, expires_at } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/portal/login',
    auth: 'none',
    limit: 'address',
    operationId: 'portalLogin',
    summary: 'A donor asks for a link into the portal by e-mail (no token): always 202, the same answer',
    description: `Mails a fresh \`manage\` link to the organisation's newest supporter with this e-mail (any case), if there is one and the portal is on; the answer is the same either way. At most ${LOGIN_LIMITS.email.max} requests per e-mail per ${LOGIN_LIMITS.email.windowSeconds / 60} minutes and ${LOGIN_LIMITS.address.max} per caller address per minute (clock-aligned windows; an IPv6 address counts by its /64), then 429 with Retry-After.`,
    body: loginInput,
    responses: {
      202: { description: 'Accepted (whether or not the e-mail is known)', schema: loginResponse },
      400: INVALID,
      429: { description: 'Over a login limit (per e-mail, per address); nothing was done' },
    },
    handle: async ({ body, sourceIp, baseUrl }) => {
      await requestLoginLink(body, sourceIp, baseUrl);
      return { status: 202, headers: { 'cache-control': 'no-store' }, body: LOGIN_ACCEPTED };
    },
  }),
  ...portalPageRoutes,
  ...portalApiRoutes,
  ...portalManageRoutes,
];
