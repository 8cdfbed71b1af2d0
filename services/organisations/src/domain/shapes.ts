import type { Account, Address, Organisation } from '../repository/organisation-repository';

/** The response shapes of organisations, accounts and their parts; stored fields never leak past these. */
export function organisationListShape(o: Organisation) {
  return {
    uuid: o.uuid,
    name: o.name,
    created: String(o.created),
    approval_status: o.approval_status,
    active: o.active,
  };
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

export function accountListShape(a: Account) {
  return { uuid: a.uuid, name: a.name, created: a.created, active: a.active, organisation_uuid: a.organisation_uuid };
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
