import { assertOrganisationGrant, assertWholeOrganisationGrant, now, type Principal, readFor } from '@svc/core';
import { findOrganisation } from '@svc/organisations';
import { parseInterval } from '@svc/schedule';
import { retryOnConflict, StaleVersionError, transactWrite } from '@svc/table';
import * as z from 'zod';
import {
  PORTAL_FEATURES,
  PORTAL_SETTINGS,
  type PortalSettingsRecord,
  retentionOffers,
} from '../repository/settings-repository';

/** What an organisation's donors see before it sets anything: the portal is off until it is turned on. */
export const DEFAULT_SETTINGS: Omit<PortalSettingsRecord, 'organisation_uuid' | 'version' | 'updated'> = {
  enabled: false,
  features: Object.fromEntries(PORTAL_FEATURES.map((feature) => [feature, true])) as PortalSettingsRecord['features'],
  min_amount: null,
  max_amount: null,
  intervals: ['monthly', 'quarterly', 'semestral', 'yearly'],
  cancel_reasons: ['too_expensive', 'financial_situation', 'supporting_elsewhere', 'not_satisfied', 'other'],
  retention_offer: null,
  brand: { name: null, color: '#1f5fa8' },
  return_url: null,
};

/** At most this many intervals or cancel reasons: the choices a donor sees on one page. */
const MAX_CHOICES = 20;

/** An https URL (a donor is sent back to it). */
export const httpsUrl = z
  .string()
  .max(2_000)
  .refine((value) => {
    try {
      return new URL(value).protocol === 'https:';
    } catch {
      return false;
    }
  }, 'An https URL');

/** PUT replaces the settings whole: every field is required, as a GET returns them. */
export const portalSettingsInput = z
  .strictObject({
    enabled: z.boolean(),
    features: z.strictObject(
      Object.fromEntries(PORTAL_FEATURES.map((f) => [f, z.boolean()])) as {
        [K in (typeof PORTAL_FEATURES)[number]]: z.ZodBoolean;
      },
    ),
    min_amount: z.number().int().min(1).max(100_000_000).nullable(),
    max_amount: z.number().int().min(1).max(100_000_000).nullable(),
    intervals: z
      .array(
        z
          .string()
          .max(100)
          .refine((value) => parseInterval(value).ok, 'A recurring_interval: weekly, monthly, …, or cron fields'),
      )
      .min(1)
      .max(MAX_CHOICES),
    cancel_reasons: z
      .array(z.string().regex(/^[a-z0-9_]{1,40}$/, 'A code of lowercase letters, digits and _ (at most 40)'))
      .min(1)
      .max(MAX_CHOICES),
    retention_offer: z.enum(retentionOffers).nullable(),
    brand: z.strictObject({
      name: z.string().trim().min(1).max(100).nullable(),
      color: z.string().regex(/^#[0-9a-fA-F]{6}$/, 'A colour as #rrggbb'),
    }),
    return_url: httpsUrl.nullable(),
  })
  .superRefine((input, ctx) => {
    if (input.min_amount !== null && input.max_amount !== null && input.min_amount > input.max_amount) {
      ctx.addIssue({ code: 'custom', path: ['max_amount'], message: 'At least min_amount' });
    }
    if (new Set(input.intervals).size !== input.intervals.length) {
      ctx.addIssue({ code: 'custom', path: ['intervals'], message: 'Each interval once' });
    }
    if (new Set(input.cancel_reasons).size !== input.cancel_reasons.length) {
      ctx.addIssue({ code: 'custom', path: ['cancel_reasons'], message: 'Each reason once' });
    }
  });
export type PortalSettingsInput = z.infer<typeof portalSettingsInput>;

export type PortalSettings = Omit<PortalSettingsRecord, 'organisation_uuid' | 'version' | 'updated'>;

/** The settings as the API shows them (the defaults where the organisation set none). */
export function settingsView(record: PortalSettingsRecord | undefined): PortalSettings {
  if (!record) return structuredClone(DEFAULT_SETTINGS);
  const { organisation_uuid: _organisation, version: _version, updated: _updated, ...settings } = record;
  return settings;
}

/** The settings an organisation's portal runs with (no grant: the portal's own reads). */
export async function settingsOf(organisationUuid: string): Promise<PortalSettings> {
  return settingsView(await PORTAL_SETTINGS.find(organisationUuid));
}

/** GET: any grant on the organisation may read them. */
export async function getPortalSettings(principal: Promise<Principal>, organisationUuid: string) {
  await readFor(principal, findOrganisation(organisationUuid), 'Organisation not found', (caller, found) =>
    assertOrganisationGrant(caller, found.uuid),
  );
  return settingsOf(organisationUuid);
}

/** PUT: the whole organisation's grant, since the settings hold for every account's donors. */
export async function putPortalSettings(
  principal: Promise<Principal>,
  organisationUuid: string,
  input: PortalSettingsInput,
): Promise<PortalSettings> {
  await readFor(principal, findOrganisation(organisationUuid), 'Organisation not found', (caller, found) =>
    assertWholeOrganisationGrant(caller, found.uuid),
  );
  return retryOnConflict(async () => {
    const current = await PORTAL_SETTINGS.find(organisationUuid);
    const next: PortalSettingsRecord = {
      ...input,
      organisation_uuid: organisationUuid,
      version: (current?.version ?? 0) + 1,
      updated: now(),
    };
    // Two first PUTs at once: the one that loses the create reads again and replaces.
    await transactWrite([
      current
        ? PORTAL_SETTINGS.replace(next, current.version)
        : PORTAL_SETTINGS.create(next, () => new StaleVersionError()),
    ]);
    return settingsView(next);
  });
}
