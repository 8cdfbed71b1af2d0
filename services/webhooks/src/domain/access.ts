import {
  assertOrganisationGrant,
  coversAccount,
  coversOrganisation,
  ForbiddenError,
  NotFoundError,
  type Principal,
  ValidationError,
} from '@svc/core';
import { findAccount, findOrganisation } from '@svc/organisations';

/**
 * Who may touch webhook configuration: an item scoped to an account needs a grant covering that
 * account; an organisation-wide one needs a grant on the whole organisation (it sees every
 * account's events).
 */
export function canManage(caller: Principal, item: { organisation_uuid: string; account_uuid?: string }): boolean {
  return item.account_uuid === undefined
    ? coversOrganisation(caller, item.organisation_uuid)
    : coversAccount(caller, item.organisation_uuid, item.account_uuid);
}

export function assertCanManage(caller: Principal, item: { organisation_uuid: string; account_uuid?: string }): void {
  if (!canManage(caller, item)) throw new ForbiddenError();
}

/** The organisation exists (404) and the account, if any, belongs to it (400). */
export async function checkScope(organisationUuid: string, accountUuid: string | undefined): Promise<void> {
  const [organisation, account] = await Promise.all([
    findOrganisation(organisationUuid),
    accountUuid === undefined ? undefined : findAccount(accountUuid),
  ]);
  if (!organisation) throw new NotFoundError('Organisation not found');
  if (accountUuid !== undefined && (!account || account.organisation_uuid !== organisationUuid)) {
    throw ValidationError.field('account_uuid', 'error.validation.not_valid', 'No such account in this organisation');
  }
}

/** A list filter: organisation required (400 `not_null`), a grant on it (403). */
export function listScope(caller: Principal, organisationUuid: string | undefined, accountUuid: string | undefined) {
  if (organisationUuid === undefined) {
    throw ValidationError.field('organisation_uuid', 'error.validation.not_null', 'This value should not be null');
  }
  assertOrganisationGrant(caller, organisationUuid);
  if (accountUuid !== undefined && !coversAccount(caller, organisationUuid, accountUuid)) throw new ForbiddenError();
  return (item: { organisation_uuid: string; account_uuid?: string }) =>
    canManage(caller, item) && (accountUuid === undefined || item.account_uuid === accountUuid);
}

/** `enabled` arrives as a boolean or its text, and leaves as text (contract). */
export const booleanText = (value: boolean): 'true' | 'false' => (value ? 'true' : 'false');
