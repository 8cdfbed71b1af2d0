import { deferred } from '@svc/core';
import { type AnyRoute, defineRoute, uuidParams } from '@svc/http';
import * as z from 'zod';
import { createPortalLink, portalLinkInput } from '../domain/links';
import { getPortalSettings, portalSettingsInput, putPortalSettings } from '../domain/settings';
import { settingsRecordSchema } from '../repository/settings-repository';

/** The settings as GET answers them and PUT takes them: the stored record without its bookkeeping. */
const portalSettingsResponse = deferred(() =>
  settingsRecordSchema.omit({ organisation_uuid: true, version: true, updated: true }),
);

const portalLinkResponse = z.object({
  url: z.string().meta({ description: 'The donor’s link: …/portal?token=…, shown once' }),
  expires_at: z.number().int().meta({ description: 'Unix seconds: 24 hours after it was made' }),
});

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
      400: INVALID,
      403: { description: 'No grant on the supporter’s organisation' },
      404: { description: 'Unknown supporter' },
      409: { description: 'The organisation’s portal is not enabled' },
    },
    handle: async ({ params, body, principal, baseUrl }) => {
      const { url, expires_at } = await createPortalLink(principal(), params.supporter_uuid, body, baseUrl);
      return { status: 201, headers: { 'cache-control': 'no-store' }, body: { url, expires_at } };
    },
  }),
];
