import { uuidSchema } from '@svc/core';
import { addGrant, partnerProfileSchema, upsertClient } from '@svc/identity';
import { organisationSeedSchema, upsertOrganisation } from '@svc/organisations';
import { saveSourceConfiguration, sourceConfigurationSchema } from '@svc/reconciliation';
import * as z from 'zod';

const grantSchema = z.object({ organisation_uuid: uuidSchema, account_uuid: uuidSchema.optional() });

/** The seed file (`SVC_SEED_FILE`, the demo seed by default). Applying it twice changes nothing the second time. */
export const seedFileSchema = z
  .object({
    organisations: z.array(organisationSeedSchema).default([]),
    clients: z
      .array(
        z.object({
          client_id: z.string().min(1),
          client_secret: z.string().min(12),
          role: z.enum(['customer', 'operator']).default('customer'),
          /** Replaces the client's grants when given; when left out, the client keeps its grants. */
          grants: z.array(grantSchema).optional(),
        }),
      )
      .default([]),
    partners: z
      .array(
        partnerProfileSchema
          .unwrap()
          .extend({
            client_id: z.string().min(1),
            client_secret: z.string().min(12),
            onboarding_configuration_uuid: uuidSchema,
            organisation_uuid: uuidSchema.optional(),
          })
          .refine((partner) => partner.allow_self_disconnect || partner.support_url !== undefined, {
            path: ['support_url'],
            message: 'A partner that does not allow self-disconnect must give a support_url',
          }),
      )
      .default([]),
    reconciliation_source_configurations: z.array(sourceConfigurationSchema).default([]),
  })
  .superRefine((seed, context) => {
    // An onboarding configuration names one partner: a process's partner is found by it.
    const seen = new Map<string, number>();
    seed.partners.forEach((partner, index) => {
      const first = seen.get(partner.onboarding_configuration_uuid);
      if (first === undefined) seen.set(partner.onboarding_configuration_uuid, index);
      else
        context.addIssue({
          code: 'custom',
          path: ['partners', index, 'onboarding_configuration_uuid'],
          message: `partners.${first} has this onboarding configuration already`,
        });
    });
  });
export type SeedFile = z.infer<typeof seedFileSchema>;

export interface SeedSummary {
  organisations: number;
  accounts: number;
  clients: number;
  partners: number;
  reconciliation_source_configurations: number;
}

export function parseSeed(json: unknown): SeedFile {
  const parsed = seedFileSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('\n  ');
    throw new Error(`The seed file is not valid:\n  ${problems}`);
  }
  return parsed.data;
}

export async function applySeed(seed: SeedFile): Promise<SeedSummary> {
  for (const organisation of seed.organisations) await upsertOrganisation(organisation);
  for (const client of seed.clients) await upsertClient(client);
  for (const { client_id, client_secret, ...partner } of seed.partners) {
    await upsertClient({ client_id, client_secret, role: 'customer', partner });
    // Its own organisation, where it subscribes to onboarding events; onboarding adds the others.
    if (partner.organisation_uuid) await addGrant(client_id, { organisation_uuid: partner.organisation_uuid });
  }
  for (const configuration of seed.reconciliation_source_configurations) await saveSourceConfiguration(configuration);
  return {
    organisations: seed.organisations.length,
    accounts: seed.organisations.reduce((n, o) => n + o.accounts.length, 0),
    clients: seed.clients.length,
    partners: seed.partners.length,
    reconciliation_source_configurations: seed.reconciliation_source_configurations.length,
  };
}
