import { type Assert, type Conforms, deferred } from '@svc/core';
import * as z from 'zod';
import type { Account, Address, Organisation } from '../repository/organisation-repository';

/**
 * The response shapes of organisations, accounts and their parts, and the one schema of each
 * (`/openapi.json` publishes the schemas; the type checks below fail when a shape answers a field
 * its schema does not declare, or misses one). Stored fields never leak past these. The schemas
 * are `deferred`: only the API description builds them.
 */
export const addressResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    created: z.number().int(),
    address_line1: z.string(),
    address_line2: z.string(),
    postal_code: z.string(),
    city: z.string(),
    country_code: z.string(),
    type: z.string(),
  }),
);
/**
 * An organisation as the list shows it: the interface's list fields (`created` as a string of
 * digits, as the interface's list answers it) and every other field of the single answer.
 */
export const organisationListResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    name: z.string(),
    created: z.string(),
    approval_status: z.string(),
    active: z.boolean(),
    merchant_category_code: z.string(),
    locale: z.string(),
    accounts: z.array(z.object({ uuid: z.string() })),
  }),
);
export const organisationResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    name: z.string(),
    created: z.number().int(),
    active: z.boolean(),
    approval_status: z.string(),
    merchant_category_code: z.string(),
    locale: z.string(),
    accounts: z.array(z.object({ uuid: z.string() })),
  }),
);
export const accountResponse = deferred(() =>
  z.object({
    uuid: z.string(),
    name: z.string(),
    created: z.number().int(),
    active: z.boolean(),
    organisation: z.object({ uuid: z.string(), name: z.string(), created: z.number().int(), active: z.boolean() }),
  }),
);
/** An account as the list shows it: the single answer, and its organisation's uuid at the top (the interface's list field). */
export const accountListResponse = deferred(() => accountResponse.unwrap().extend({ organisation_uuid: z.string() }));
export const billingDataResponse = deferred(() =>
  z.object({
    organisation_name: z.string(),
    account_name: z.string(),
    account_holder: z.string(),
    iban: z.string(),
    vat_number: z.string(),
    recipient_emails: z.array(z.string()),
    address: addressResponse.unwrap().pick({
      address_line1: true,
      address_line2: true,
      postal_code: true,
      city: true,
      country_code: true,
    }),
  }),
);
type _OrganisationListed = Assert<
  Conforms<ReturnType<typeof organisationListShape>, z.output<typeof organisationListResponse>>
>;
type _Organisation = Assert<Conforms<ReturnType<typeof organisationShape>, z.output<typeof organisationResponse>>>;
type _Address = Assert<Conforms<ReturnType<typeof addressShape>, z.output<typeof addressResponse>>>;
type _AccountListed = Assert<Conforms<ReturnType<typeof accountListShape>, z.output<typeof accountListResponse>>>;
type _Account = Assert<Conforms<ReturnType<typeof accountShape>, z.output<typeof accountResponse>>>;
type _BillingData = Assert<Conforms<ReturnType<typeof billingDataShape>, z.output<typeof billingDataResponse>>>;

export function organisationListShape(o: Organisation, accountUuids: readonly string[]) {
  return { ...organisationShape(o, accountUuids), created: String(o.created) };
}

export function organisationShape(o: Organisation, accountUuids: readonly string[]) {
  return {
    uuid: o.uuid,
    name: o.name,
    created: o.created,
    active: o.active,
    approval_status: o.approval_status,
    merchant_category_code: o.merchant_category_code,
    locale: o.locale,
    accounts: accountUuids.map((uuid) => ({ uuid })),
  };
}

export function addressShape(a: Address) {
  return {
    uuid: a.uuid,
    created: a.created,
    address_line1: a.address_line1,
    address_line2: a.address_line2,
    postal_code: a.postal_code,
    city: a.city,
    country_code: a.country_code,
    type: a.type,
  };
}

export function accountListShape(a: Account, o: Organisation) {
  return { ...accountShape(a, o), organisation_uuid: a.organisation_uuid };
}

export function accountShape(a: Account, o: Organisation) {
  return {
    uuid: a.uuid,
    name: a.name,
    created: a.created,
    active: a.active,
    organisation: { uuid: o.uuid, name: o.name, created: o.created, active: o.active },
  };
}

export function billingDataShape(a: Account, o: Organisation) {
  const billing = a.billing_data;
  return {
    organisation_name: o.name,
    account_name: a.name,
    account_holder: billing?.account_holder ?? '',
    iban: billing?.iban ?? '',
    vat_number: billing?.vat_number ?? '',
    recipient_emails: billing?.recipient_emails ?? [],
    address: billing?.address ?? { address_line1: '', address_line2: '', postal_code: '', city: '', country_code: '' },
  };
}
