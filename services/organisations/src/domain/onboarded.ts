import { now } from '@svc/core';
import type { TransactItem } from '@svc/table';
import {
  type Account,
  type Address,
  accountWrite,
  addressWrite,
  newOrganisationWrite,
  type Organisation,
} from '../repository/organisation-repository';
import { organisationEvent } from './approval';
import { DEFAULT_PAYMENT_METHOD_PROFILES } from './upsert';

export interface OnboardedAddress {
  address_line1: string;
  address_line2: string;
  postal_code: string;
  city: string;
  country: string;
}

export interface OnboardedOrganisation {
  uuid: string;
  account_uuid: string;
  main_address_uuid: string;
  billing_address_uuid: string;
  name: string;
  merchant_category_code: string;
  locale: string;
  main_address: OnboardedAddress;
  billing_address: OnboardedAddress;
  billing: { iban: string; account_holder: string; bank_name?: string; recipient_email: string };
  /** Onboarding's own reference, kept in the organisation's metadata. */
  metadata: Record<string, string>;
}

function address(uuid: string, type: string, a: OnboardedAddress, created: number): Address {
  return {
    uuid,
    created,
    type,
    address_line1: a.address_line1,
    address_line2: a.address_line2,
    postal_code: a.postal_code,
    city: a.city,
    country_code: a.country,
  };
}

/**
 * The writes that create an onboarded organisation (contract: "onboard"): the organisation,
 * `approval_pending` and carrying its `approval_requested` event, its main and billing addresses,
 * and one account with the billing data and the default payment method profiles. The caller
 * writes them in its own transaction; the organisation's put fails if the uuid exists.
 */
export function onboardedOrganisationWrites(input: OnboardedOrganisation): TransactItem[] {
  const at = now();
  const organisation: Organisation = {
    uuid: input.uuid,
    name: input.name,
    created: at,
    active: true,
    approval_status: 'approval_pending',
    merchant_category_code: input.merchant_category_code,
    locale: input.locale,
    metadata: input.metadata,
    account_uuids: [input.account_uuid],
  };
  const requested = organisationEvent(organisation, 'svc.organisations.organisation.approval_requested');
  organisation.event_sequence = requested.sequence;
  const account: Account = {
    uuid: input.account_uuid,
    organisation_uuid: input.uuid,
    name: input.name,
    created: at,
    active: true,
    metadata: input.billing.bank_name ? { bank_name: input.billing.bank_name } : {},
    billing_data: {
      account_holder: input.billing.account_holder,
      iban: input.billing.iban,
      vat_number: '',
      recipient_emails: [input.billing.recipient_email],
      address: {
        address_line1: input.billing_address.address_line1,
        address_line2: input.billing_address.address_line2,
        postal_code: input.billing_address.postal_code,
        city: input.billing_address.city,
        country_code: input.billing_address.country,
      },
    },
    payment_method_profiles: [...DEFAULT_PAYMENT_METHOD_PROFILES],
  };
  return [
    newOrganisationWrite(organisation, [requested]),
    addressWrite({ kind: 'ORG', uuid: input.uuid }, address(input.main_address_uuid, 'main', input.main_address, at)),
    addressWrite(
      { kind: 'ORG', uuid: input.uuid },
      address(input.billing_address_uuid, 'billing', input.billing_address, at),
    ),
    accountWrite(account),
  ];
}
