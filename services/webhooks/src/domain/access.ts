import {
  assertOrganisationGrant,
  type ConflictError,
  coversAccount,
  coversOrganisation,
  ForbiddenError,
  NotFoundError,
  type Principal,
  readFor,
  ValidationError,
} from '@svc/core';
import { findAccount, findOrganisation } from '@svc/organisations';
import { retryOnConflict } from '@svc/table';

type Scoped = { organisation_uuid: string; account_uuid?: string };

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

/** Reads a webhooks object for a caller who manages it: 404 when it does not exist, else 403. */
export function managedReader<T extends Scoped>(find: (uuid: string) => Promise<T | undefined>, notFound: string) {
  return (principal: Promise<Principal>, uuid: string): Promise<T> =>
    readFor(principal, find(uuid), notFound, assertCanManage);
}

/** Lists the webhooks objects of an organisation its caller manages (see listScope). */
export function managedLister<T extends Scoped>(itemsOf: (organisationUuid: string) => Promise<T[]>) {
  return async (
    principal: Promise<Principal>,
    organisationUuid: string | undefined,
    accountUuid: string | undefined,
  ) => {
    const visible = listScope(await principal, organisationUuid, accountUuid);
    return (await itemsOf(organisationUuid as string)).filter(visible);
  };
}

/**
 * A change to a webhooks object its caller manages, written under the version it read: the
 * object is read (404/403), a move to another organisation is refused (`refuseMove`, 409), then
 * `change` writes; a concurrent write makes it read and change again (409 after several tries).
 */
export async function changeManaged<T extends Scoped, R>(
  principal: Promise<Principal>,
  read: (principal: Promise<Principal>) => Promise<T>,
  move: { organisationUuid?: string | undefined; refuseMove?: () => ConflictError },
  change: (read: T, caller: Principal) => Promise<R>,
): Promise<R> {
  const caller = await principal;
  return retryOnConflict(async () => {
    const current = await read(Promise.resolve(caller));
    const { organisationUuid, refuseMove } = move;
    if (refuseMove && organisationUuid !== undefined && organisationUuid !== current.organisation_uuid) {
      throw refuseMove();
    }
    return change(current, caller);
  });
}

/** `enabled` arrives as a boolean or its text, and leaves as text (contract). */
export const booleanText = (value: boolean): 'true' | 'false' => (value ? 'true' : 'false');
