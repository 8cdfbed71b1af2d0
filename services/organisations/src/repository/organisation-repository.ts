import { deferred, FEE_FIXED_PATTERN, FEE_PERCENT_PATTERN } from '@svc/core';
import { EVENTS_ATTRIBUTE, type StoredEvent } from '@svc/events';
import { byUuid, defineEntity, key, queryAll, type TransactItem } from '@svc/table';
import * as z from 'zod';

/**
 * Organisations, accounts and their addresses, described by `ORGANISATION`, `ACCOUNT`,
 * `ORGANISATION_ADDRESS` and `ACCOUNT_ADDRESS` below (docs/access-patterns.md). An address lives
 * in its owner's partition, so an organisation or an account with its addresses is one Query of
 * the whole partition.
 *
 * The organisation item keeps its account uuids, so its single shape is one read.
 */
export const addressSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    created: z.number(),
    type: z.string(),
    address_line1: z.string(),
    address_line2: z.string(),
    postal_code: z.string(),
    city: z.string(),
    country_code: z.string(),
  }),
);
export type Address = z.infer<typeof addressSchema>;

export const organisationSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    name: z.string(),
    created: z.number(),
    active: z.boolean(),
    approval_status: z.enum(['approved', 'approval_pending', 'declined']),
    merchant_category_code: z.string(),
    locale: z.string(),
    metadata: z.record(z.string(), z.string()),
    account_uuids: z.array(z.string()),
    /** Counts the organisation's events (approval); absent until its first. */
    event_sequence: z.number().int().optional(),
    /** Counts the item's writes (the search projection keeps the newest); absent on items from before it. */
    version: z.number().int().optional(),
  }),
);
export type Organisation = z.infer<typeof organisationSchema>;

export const billingAddressSchema = deferred(() =>
  z.object({
    address_line1: z.string(),
    address_line2: z.string(),
    postal_code: z.string(),
    city: z.string(),
    country_code: z.string(),
  }),
);

export const billingDataSchema = deferred(() =>
  z.object({
    account_holder: z.string(),
    iban: z.string(),
    vat_number: z.string(),
    recipient_emails: z.array(z.string()),
    address: billingAddressSchema,
  }),
);

/**
 * The provider's fees on a charge, which a donor may choose to cover (`cover_fees`, contract
 * section 13; @svc/core fee-cover.ts): a percentage of the amount charged as a decimal string
 * (0 ≤ percent < 100, at most four decimals) and a fixed part in minor units.
 */
export const feesSchema = deferred(() =>
  z
    .object({
      percent: z
        .string()
        .regex(FEE_PERCENT_PATTERN, 'A percentage 0 ≤ p < 100 as a decimal string, at most four decimals ("2.9")'),
      fixed: z.string().regex(FEE_FIXED_PATTERN, 'A whole number of minor units as a string ("30")'),
    })
    .strict(),
);
export type ProfileFees = z.infer<typeof feesSchema>;

/** The settings a provider takes from a profile or a route's candidate. */
const providerSettings = () => ({
  stripe_account: z
    .string()
    .regex(/^acct_[A-Za-z0-9]{1,64}$/, 'A Stripe account id (acct_…)')
    .optional(),
  /**
   * The Adyen merchant account the payment is made on (one per organisation, as `stripe_account`
   * is for Stripe). Adyen's merchant account names are letters, digits and underscores.
   */
  merchant_account: z
    .string()
    .regex(/^[A-Za-z0-9_]{3,80}$/, 'An Adyen merchant account name (letters, digits, _)')
    .optional(),
  raw_card_data: z.boolean().optional(),
  fees: feesSchema.optional(),
});

/** A decimal amount in minor units, as the API's amounts are written ("2500"). */
const minorAmount = z.string().regex(/^(0|[1-9][0-9]{0,11})$/, 'An amount in minor units ("2500")');

/**
 * One candidate of a routed profile: a provider with its own settings, the payments it takes
 * (`when`: currencies, an amount range in minor units, test or live) and its share of new
 * payments (`weight`, relative to the other weighted candidates that match). Its `fees`, when
 * given, replace the profile's for payments it charges.
 */
export const routeCandidateSchema = deferred(() =>
  z
    .object({
      provider: z.string().min(1),
      ...providerSettings(),
      when: z
        .object({
          currency: z
            .array(z.string().regex(/^[A-Z]{3}$/, 'An ISO 4217 currency code'))
            .min(1)
            .optional(),
          min_amount: minorAmount.optional(),
          max_amount: minorAmount.optional(),
          test_mode: z.boolean().optional(),
        })
        .strict()
        .refine(
          (when) =>
            when.min_amount === undefined ||
            when.max_amount === undefined ||
            BigInt(when.min_amount) <= BigInt(when.max_amount),
          {
            message: 'min_amount is above max_amount',
            path: ['min_amount'],
          },
        )
        .optional(),
      weight: z.number().int().min(0).max(1_000).optional(),
    })
    .strict()
    .superRefine(accountsMatchProvider),
);

/** A Stripe account only on a Stripe candidate, an Adyen merchant account only on an Adyen one. */
function accountsMatchProvider(
  value: { provider?: string | undefined; stripe_account?: string | undefined; merchant_account?: string | undefined },
  context: z.RefinementCtx,
): void {
  if (value.stripe_account !== undefined && value.provider !== undefined && value.provider !== 'stripe')
    context.addIssue({
      code: 'custom',
      path: ['stripe_account'],
      message: 'A Stripe account is for the stripe provider',
    });
  if (value.merchant_account !== undefined && value.provider !== undefined && value.provider !== 'adyen')
    context.addIssue({
      code: 'custom',
      path: ['merchant_account'],
      message: 'A merchant account is for the adyen provider',
    });
}
export type RouteCandidate = z.infer<typeof routeCandidateSchema>;

/**
 * A payment method profile: which provider takes the account's payments of a method, or (`route`)
 * an ordered list of candidate providers, tried in order (weighted candidates first share the
 * new payments) with fail-over while one is down. Real providers take their own settings here:
 * `stripe_account` (a Stripe Connect account the charge is made on, with the platform's key),
 * `merchant_account` (Adyen's) and `raw_card_data` (the contract's raw card fields may be
 * forwarded to the provider; without it a card payment takes a provider payment method id or
 * the provider's encrypted card fields). `fees` are the provider's fees a donor may cover; a
 * route's candidate with its own `fees` charges by those instead.
 */
export const paymentMethodProfileSchema = deferred(() =>
  z
    .object({
      name: z.string(),
      payment_method: z.string(),
      provider: z.string().optional(),
      ...providerSettings(),
      route: z.array(routeCandidateSchema).min(1).max(8).optional(),
      /**
       * A platform fee taken from each charge on the connected account (Stripe's
       * `application_fee_amount`): basis points of the amount plus a fixed part in minor units.
       */
      platform_fee_basis_points: z.number().int().min(0).max(10_000).optional(),
      platform_fee_fixed: z.number().int().min(0).optional(),
      /**
       * The organisation's suffix of the card statement descriptor (Stripe: at most 22 characters,
       * none of < > \\ ' " *, https://docs.stripe.com/get-started/account/statement-descriptors).
       */
      statement_descriptor_suffix: z
        .string()
        .min(1)
        .max(22)
        .regex(/^[^<>\\'"*]+$/, 'None of < > \\ \' " *')
        .optional(),
    })
    .superRefine(accountsMatchProvider)
    .refine((profile) => (profile.provider === undefined) !== (profile.route === undefined), {
      message: 'A profile names either one provider or a route of candidates',
      path: ['provider'],
    })
    .refine(
      (profile) =>
        profile.stripe_account !== undefined ||
        profile.route?.some((candidate) => candidate.stripe_account !== undefined) === true ||
        (profile.platform_fee_basis_points === undefined && profile.platform_fee_fixed === undefined),
      {
        message: 'A platform fee is taken on a connected account: set stripe_account',
        path: ['platform_fee_basis_points'],
      },
    ),
);
export type PaymentMethodProfile = z.infer<typeof paymentMethodProfileSchema>;

export const accountSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    name: z.string(),
    created: z.number(),
    active: z.boolean(),
    metadata: z.record(z.string(), z.string()),
    billing_data: billingDataSchema.optional(),
    payment_method_profiles: z.array(paymentMethodProfileSchema),
  }),
);
export type Account = z.infer<typeof accountSchema>;

export const ORGANISATION = defineEntity<Organisation, string>({
  name: 'organisation',
  summary: 'An organisation (a charity), with the uuids of its accounts.',
  prefix: 'ORG',
  ...byUuid(),
  sort: 'ORG',
  byKey: 'organisation by uuid; with its addresses, the whole partition',
  parse: (item) => organisationSchema.parse(item),
});

export const ACCOUNT = defineEntity<Account, string>({
  name: 'account',
  summary: 'An account of an organisation: its payment method profiles and billing data.',
  prefix: 'ACCOUNT',
  ...byUuid(),
  sort: 'ACCOUNT',
  byKey: 'account by uuid; with its addresses, the whole partition',
  indexes: [
    {
      index: 'gsi1',
      pattern: 'accounts of an organisation',
      shown: 'gsi1pk = ORG#<organisation uuid>, gsi1sk = ACCOUNT#<uuid>',
      keys: (account) => ({ partition: key('ORG', account.organisation_uuid), sort: key('ACCOUNT', account.uuid) }),
    },
  ],
  parse: (item) => accountSchema.parse(item),
});

const addressSk = (uuid: string) => key('ADDRESS', uuid);

export function findOrganisation(uuid: string): Promise<Organisation | undefined> {
  return ORGANISATION.find(uuid);
}

export function findAccount(uuid: string): Promise<Account | undefined> {
  return ACCOUNT.find(uuid);
}

/**
 * The account a new payment goes to: through the container's memo of hot reads (getRecentItem in
 * @svc/table; off unless SVC_HOT_READ_SECONDS is set), so a telethon's one account is no hot read
 * key. A profile or activation changed takes effect for new payments within that time.
 */
export function findAccountToPay(uuid: string): Promise<Account | undefined> {
  return ACCOUNT.findRecent(uuid);
}

function queryPartition(pk: string): Promise<Record<string, unknown>[]> {
  return queryAll({ partition: pk, consistent: true });
}

function splitOwnerAndAddresses(items: Record<string, unknown>[], ownerSk: string) {
  const owner = items.find((item) => item.sk === ownerSk);
  const addresses = items
    .filter((item) => String(item.sk).startsWith('ADDRESS#'))
    .map((item) => addressSchema.parse(item))
    .sort((a, b) => a.created - b.created || a.uuid.localeCompare(b.uuid));
  return { owner, addresses };
}

export async function findOrganisationWithAddresses(uuid: string) {
  const { owner, addresses } = splitOwnerAndAddresses(await queryPartition(key('ORG', uuid)), 'ORG');
  return owner ? { organisation: organisationSchema.parse(owner), addresses } : undefined;
}

export async function findAccountWithAddresses(uuid: string) {
  const { owner, addresses } = splitOwnerAndAddresses(await queryPartition(key('ACCOUNT', uuid)), 'ACCOUNT');
  return owner ? { account: accountSchema.parse(owner), addresses } : undefined;
}

export async function listAccountsOfOrganisation(organisationUuid: string): Promise<Account[]> {
  const items = await queryAll({ index: 'gsi1', partition: key('ORG', organisationUuid), sortBeginsWith: 'ACCOUNT#' });
  return items.map((item) => accountSchema.parse(item));
}

/**
 * Moves the approval status, guarded by the status, event count and version it was decided on.
 * The whole item is written (not updated), so whoever follows writes (the search projection)
 * sees it.
 */
export function organisationApprovalWrite(
  organisation: Organisation,
  status: Organisation['approval_status'],
  event: StoredEvent,
): TransactItem {
  const version = organisation.version ?? 0;
  return {
    Put: {
      Item: {
        ...ORGANISATION.item({
          ...organisation,
          approval_status: status,
          event_sequence: event.sequence,
          version: version + 1,
        }),
        [EVENTS_ATTRIBUTE]: [event],
      },
      ConditionExpression:
        'approval_status = :was AND (event_sequence = :previous OR (attribute_not_exists(event_sequence) AND :previous = :zero)) AND (version = :version OR (attribute_not_exists(version) AND :version = :zero))',
      ExpressionAttributeValues: {
        ':was': organisation.approval_status,
        ':previous': organisation.event_sequence ?? 0,
        ':version': version,
        ':zero': 0,
      },
    },
  };
}

/** A new organisation that must not exist yet (onboarding), with the events of its creation. */
export function newOrganisationWrite(organisation: Organisation, events: StoredEvent[]): TransactItem {
  return {
    Put: {
      Item: { ...ORGANISATION.item({ ...organisation, version: 1 }), [EVENTS_ATTRIBUTE]: events },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

export function accountWrite(account: Account): TransactItem {
  return { Put: { Item: ACCOUNT.item(account) } };
}

type OwnedAddress = Address & { owner_uuid: string };
const ownedAddressSchema = deferred(() => addressSchema.unwrap().extend({ owner_uuid: z.string() }));

/** An address in its owner's partition: one description per kind of owner (the key's prefix). */
function addressEntity(prefix: 'ORG' | 'ACCOUNT', owner: string) {
  return defineEntity<OwnedAddress, readonly [string, string]>({
    name: 'address',
    summary: `An address of ${owner}, in its partition (read with it in one Query).`,
    prefix,
    idShown: `<${owner} uuid>`,
    sort: ([, uuid]) => addressSk(uuid),
    sortShown: 'ADDRESS#<uuid>',
    id: (address) => [address.owner_uuid, address.uuid] as const,
    idParts: ([ownerUuid]) => [ownerUuid],
    byKey: `addresses of ${owner} (sk begins with ADDRESS#), one address`,
    parse: (item) => ownedAddressSchema.parse(item),
  });
}

export const ORGANISATION_ADDRESS = addressEntity('ORG', 'an organisation');
export const ACCOUNT_ADDRESS = addressEntity('ACCOUNT', 'an account');

export function addressWrite(owner: { kind: 'ORG' | 'ACCOUNT'; uuid: string }, address: Address): TransactItem {
  const entity = owner.kind === 'ORG' ? ORGANISATION_ADDRESS : ACCOUNT_ADDRESS;
  return { Put: { Item: entity.item({ ...address, owner_uuid: owner.uuid }) } };
}
