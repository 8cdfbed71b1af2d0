import { isDeepStrictEqual } from 'node:util';
import { deferred, definedFields, now, uuidSchema } from '@svc/core';
import { transactWrite } from '@svc/table';
import * as z from 'zod';
import {
  type Account,
  accountWrite,
  addressWrite,
  billingAddressSchema,
  findAccountWithAddresses,
  findOrganisationWithAddresses,
  ORGANISATION,
  type Organisation,
  paymentMethodProfileSchema,
} from '../repository/organisation-repository';

/** Every account gets these unless it lists its own. */
export const DEFAULT_PAYMENT_METHOD_PROFILES = [
  { name: 'card', payment_method: 'card', provider: 'simulated' },
  { name: 'twint', payment_method: 'twint', provider: 'simulated' },
  { name: 'sepa_dd', payment_method: 'sepa_dd', provider: 'simulated' },
] as const;

const seedAddress = z.object({
  uuid: uuidSchema,
  type: z.string().default('billing'),
  address_line1: z.string(),
  address_line2: z.string().default(''),
  postal_code: z.string(),
  city: z.string(),
  country_code: z.string().length(2),
});

export const organisationSeedSchema = deferred(() =>
  z.object({
    uuid: uuidSchema,
    name: z.string().min(1),
    locale: z.string().default('de_CH'),
    merchant_category_code: z.string().default('8398'),
    approval_status: z.enum(['approved', 'approval_pending', 'declined']).default('approved'),
    active: z.boolean().default(true),
    addresses: z.array(seedAddress).default([]),
    metadata: z.record(z.string(), z.string()).default({}),
    accounts: z
      .array(
        z.object({
          uuid: uuidSchema,
          name: z.string().min(1),
          active: z.boolean().default(true),
          addresses: z.array(seedAddress).default([]),
          metadata: z.record(z.string(), z.string()).default({}),
          billing_data: z
            .object({
              account_holder: z.string(),
              iban: z.string(),
              vat_number: z.string().default(''),
              recipient_emails: z.array(z.email()).default([]),
              address: billingAddressSchema,
            })
            .optional(),
          payment_method_profiles: z.array(paymentMethodProfileSchema).optional(),
        }),
      )
      .default([]),
  }),
);
export type OrganisationSeed = z.infer<typeof organisationSeedSchema>;

/**
 * Creates or updates an organisation with its accounts and addresses (same uuid = same record,
 * `created` kept), in transactions of up to 100 items: atomic for any organisation with fewer
 * than 100 accounts and addresses together. Records left out of a later seed are kept.
 */
export async function upsertOrganisation(seed: OrganisationSeed): Promise<void> {
  const at = now();
  const existing = await findOrganisationWithAddresses(seed.uuid);
  const createdOf = new Map(existing?.addresses.map((a) => [a.uuid, a.created]) ?? []);
  const existingAccounts = await Promise.all(seed.accounts.map((a) => findAccountWithAddresses(a.uuid)));
  for (const found of existingAccounts) for (const a of found?.addresses ?? []) createdOf.set(a.uuid, a.created);
  const accountUuids = [
    ...new Set([...(existing?.organisation.account_uuids ?? []), ...seed.accounts.map((a) => a.uuid)]),
  ];

  const organisation: Omit<Organisation, 'version'> = {
    uuid: seed.uuid,
    name: seed.name,
    created: existing?.organisation.created ?? at,
    active: seed.active,
    approval_status: seed.approval_status,
    merchant_category_code: seed.merchant_category_code,
    locale: seed.locale,
    metadata: seed.metadata,
    account_uuids: accountUuids,
    // Events counted so far (approval) keep counting after a re-seed.
    ...(existing?.organisation.event_sequence === undefined
      ? {}
      : { event_sequence: existing.organisation.event_sequence }),
  };
  // The version counts changes (the search projection keeps the newest): a seed that changes
  // nothing keeps it, so applying a file twice writes the same item.
  const { version: known, ...stored } = existing?.organisation ?? { version: undefined };
  const version = existing && isDeepStrictEqual(stored, organisation) ? known : (known ?? 0) + 1;

  const writes = [
    {
      item: {
        Put: {
          Item: ORGANISATION.item({ ...organisation, ...definedFields({ version }) }),
        },
      },
    },
    ...seed.addresses.map((a) => ({
      item: addressWrite({ kind: 'ORG', uuid: seed.uuid }, { ...a, created: createdOf.get(a.uuid) ?? at }),
    })),
  ];
  seed.accounts.forEach((a, index) => {
    const previous = existingAccounts[index]?.account;
    if (previous && previous.organisation_uuid !== seed.uuid) {
      throw new Error(`Account ${a.uuid} belongs to organisation ${previous.organisation_uuid}`);
    }
    const account: Account = {
      uuid: a.uuid,
      organisation_uuid: seed.uuid,
      name: a.name,
      created: previous?.created ?? at,
      active: a.active,
      metadata: a.metadata,
      ...(a.billing_data ? { billing_data: a.billing_data } : {}),
      payment_method_profiles: a.payment_method_profiles ?? [...DEFAULT_PAYMENT_METHOD_PROFILES],
    };
    writes.push({ item: accountWrite(account) });
    for (const address of a.addresses) {
      writes.push({
        item: addressWrite(
          { kind: 'ACCOUNT', uuid: a.uuid },
          { ...address, created: createdOf.get(address.uuid) ?? at },
        ),
      });
    }
  });
  for (let i = 0; i < writes.length; i += 100) await transactWrite(writes.slice(i, i + 100));
}
