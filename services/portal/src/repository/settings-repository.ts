import { defineEntity } from '@svc/table';
import * as z from 'zod';

/** The features a donor may use in the portal, each switched on or off by the organisation. */
export const PORTAL_FEATURES = [
  'amount',
  'interval',
  'next_date',
  'skip',
  'pause',
  'payment_method',
  'cancel',
] as const;

export const retentionOffers = ['pause', 'lower_amount'] as const;

export const settingsRecordSchema = z.object({
  organisation_uuid: z.string(),
  enabled: z.boolean(),
  features: z.object(
    Object.fromEntries(PORTAL_FEATURES.map((f) => [f, z.boolean()])) as {
      [K in (typeof PORTAL_FEATURES)[number]]: z.ZodBoolean;
    },
  ),
  min_amount: z.number().int().nullable(),
  max_amount: z.number().int().nullable(),
  intervals: z.array(z.string()),
  cancel_reasons: z.array(z.string()),
  retention_offer: z.enum(retentionOffers).nullable(),
  brand: z.object({ name: z.string().nullable(), color: z.string() }),
  return_url: z.string().nullable(),
  /** Counts every change; writes are guarded by the version they read. */
  version: z.number().int(),
  updated: z.number().int(),
});
export type PortalSettingsRecord = z.infer<typeof settingsRecordSchema>;

/**
 * An organisation's portal settings: one item in a partition of its own (the portal's function
 * writes nothing of the organisation's own partition).
 */
export const PORTAL_SETTINGS = defineEntity<PortalSettingsRecord, string>({
  name: 'portal_settings',
  summary: 'What donors of an organisation may do in the portal, and how it looks.',
  prefix: 'PORTAL_SETTINGS',
  idShown: '<organisation uuid>',
  sort: 'PORTAL_SETTINGS',
  id: (settings) => settings.organisation_uuid,
  idParts: (organisationUuid) => [organisationUuid],
  byKey: 'the portal settings of an organisation',
  version: 'version',
  parse: (value) => settingsRecordSchema.parse(value),
});
