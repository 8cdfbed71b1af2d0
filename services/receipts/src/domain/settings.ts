import { assertWholeOrganisationGrant, ConflictError, NotFoundError, now, type Principal, readFor } from '@svc/core';
import { findOrganisation } from '@svc/organisations';
import { retryOnConflict, StaleVersionError, transactWrite } from '@svc/table';
import * as z from 'zod';
import {
  COUNTRIES,
  RECEIPT_SETTINGS,
  type ReceiptCountry,
  type ReceiptSettingsRecord,
} from '../repository/receipt-repository';

/**
 * Each country's receipts: the currency they confirm and the time zone whose calendar year they
 * cover (a gift made on 31 December at 23:30 in Zurich belongs to that year, whatever UTC says).
 */
export const COUNTRY_RULES: Record<ReceiptCountry, { currency: string; zone: string }> = {
  CH: { currency: 'CHF', zone: 'Europe/Zurich' },
  DE: { currency: 'EUR', zone: 'Europe/Berlin' },
  GB: { currency: 'GBP', zone: 'Europe/London' },
};

const text = (max: number) => z.string().trim().min(1).max(max);

const isoDate = z.iso.date();

/** PUT replaces the settings whole: every field, as GET answers them. */
export const receiptSettingsInput = z
  .strictObject({
    country: z.enum(COUNTRIES),
    legal_name: text(200),
    address: z.strictObject({
      line1: text(200),
      postal_code: text(20),
      city: text(100),
      country: z.string().regex(/^[A-Z]{2}$/, 'An ISO 3166-1 alpha-2 code, upper case'),
    }),
    tax_exemption_reference: text(200).meta({
      description:
        'CH: the tax authority’s ruling; DE: tax office, tax number and date of the Freistellungsbescheid; GB: the charity number',
    }),
    signatory: text(200),
    min_total: z
      .number()
      .int()
      .min(0)
      .max(1_000_000_000)
      .meta({ description: 'Minor units of the country’s currency: a supporter gets a receipt at or above it' }),
    germany: z
      .strictObject({
        purposes: text(500).meta({
          description: 'What the gifts further, as the model’s sentence continues “Förderung …”',
        }),
        tax_office: text(200).meta({ description: 'The Finanzamt that decided' }),
        basis: z.enum(['exemption_notice', 'statutes_finding']).meta({
          description: 'exemption_notice: a Freistellungsbescheid; statutes_finding: a finding under § 60a AO',
        }),
        decision_date: isoDate,
        assessment_period: text(100).optional().meta({ description: 'The last period the exemption notice covers' }),
        machine_receipts_notified_on: isoDate.optional().meta({
          description: 'When machine-made receipts were notified to the tax office (then no signature is needed)',
        }),
      })
      .optional()
      .meta({ description: 'Required for DE: the tax office’s decision the official model prints' }),
  })
  .superRefine((input, ctx) => {
    if (input.country === 'DE' && !input.germany) {
      ctx.addIssue({ code: 'custom', path: ['germany'], message: 'Required for German receipts' });
    }
    if (input.country !== 'DE' && input.germany) {
      ctx.addIssue({ code: 'custom', path: ['germany'], message: 'Only for German receipts' });
    }
    // The model names the last assessment period an exemption notice covers (documents/german-receipt.ts).
    if (input.germany?.basis === 'exemption_notice' && !input.germany.assessment_period) {
      ctx.addIssue({
        code: 'custom',
        path: ['germany', 'assessment_period'],
        message: 'Required with an exemption notice: the last assessment period it covers',
      });
    }
  });
export type ReceiptSettingsInput = z.infer<typeof receiptSettingsInput>;

export type ReceiptSettings = Omit<ReceiptSettingsRecord, 'organisation_uuid' | 'version' | 'updated'>;

export function settingsView(record: ReceiptSettingsRecord): ReceiptSettings {
  const { organisation_uuid: _organisation, version: _version, updated: _updated, ...settings } = record;
  return settings;
}

/** The detail code of the 409 while an organisation has no receipt settings. */
export const NO_SETTINGS = 'error.receipts.no_settings';

/** The settings receipts are made with; a 409 while the organisation has none. */
export async function requireSettings(organisationUuid: string): Promise<ReceiptSettingsRecord> {
  const settings = await RECEIPT_SETTINGS.find(organisationUuid);
  if (!settings) {
    throw new ConflictError(
      'The organisation has no receipt settings yet (PUT /organisations/{uuid}/receipt-settings)',
      NO_SETTINGS,
    );
  }
  return settings;
}

/** GET: the whole organisation's grant, as every receipt route; 404 until they are set. */
export async function getReceiptSettings(principal: Promise<Principal>, organisationUuid: string) {
  await readFor(principal, findOrganisation(organisationUuid), 'Organisation not found', (caller, found) =>
    assertWholeOrganisationGrant(caller, found.uuid),
  );
  const settings = await RECEIPT_SETTINGS.find(organisationUuid);
  if (!settings) throw new NotFoundError('The organisation has no receipt settings yet');
  return settingsView(settings);
}

/** PUT: the whole organisation's grant, since receipts speak for the organisation. */
export async function putReceiptSettings(
  principal: Promise<Principal>,
  organisationUuid: string,
  input: ReceiptSettingsInput,
): Promise<ReceiptSettings> {
  await readFor(principal, findOrganisation(organisationUuid), 'Organisation not found', (caller, found) =>
    assertWholeOrganisationGrant(caller, found.uuid),
  );
  return retryOnConflict(async () => {
    const current = await RECEIPT_SETTINGS.find(organisationUuid);
    const next: ReceiptSettingsRecord = {
      ...input,
      organisation_uuid: organisationUuid,
      version: (current?.version ?? 0) + 1,
      updated: now(),
    };
    await transactWrite([
      current
        ? RECEIPT_SETTINGS.replace(next, current.version)
        : RECEIPT_SETTINGS.create(next, () => new StaleVersionError()),
    ]);
    return settingsView(next);
  });
}
