import { ForbiddenError, NotFoundError } from './errors';

/**
 * Who is calling, as the identity domain loads it on every request (grants are never cached
 * in tokens, so a grant added or removed applies at once to tokens already issued).
 */
export type Role = 'customer' | 'operator';
export type ClientKind = 'client' | 'partner';

export interface Grant {
  organisation_uuid: string;
  account_uuid?: string;
}

export interface Principal {
  clientId: string;
  role: Role;
  kind: ClientKind;
  grants: readonly Grant[];
}

/** An organisation-wide grant covers every account of that organisation. */
export function coversOrganisation(principal: Principal, organisationUuid: string): boolean {
  return principal.grants.some((g) => g.organisation_uuid === organisationUuid && g.account_uuid === undefined);
}

/** True when the caller may see anything of the organisation (whole or one of its accounts). */
export function touchesOrganisation(principal: Principal, organisationUuid: string): boolean {
  return principal.grants.some((g) => g.organisation_uuid === organisationUuid);
}

export function coversAccount(principal: Principal, organisationUuid: string, accountUuid: string): boolean {
  return principal.grants.some(
    (g) => g.organisation_uuid === organisationUuid && (g.account_uuid === undefined || g.account_uuid === accountUuid),
  );
}

/** Any grant on the organisation (whole or one account): enough for its basic data. */
export function assertOrganisationGrant(principal: Principal, organisationUuid: string): void {
  if (!touchesOrganisation(principal, organisationUuid)) throw new ForbiddenError();
}

/** A grant on the whole organisation: needed for its addresses, metadata and the like. */
export function assertWholeOrganisationGrant(principal: Principal, organisationUuid: string): void {
  if (!coversOrganisation(principal, organisationUuid)) throw new ForbiddenError();
}

export function assertAccountGrant(principal: Principal, organisationUuid: string, accountUuid: string): void {
  if (!coversAccount(principal, organisationUuid, accountUuid)) throw new ForbiddenError();
}

export function assertOperator(principal: Principal): void {
  if (principal.role !== 'operator') throw new ForbiddenError('Only operators may call this endpoint');
}

/** A check of a caller against an item it asked for: throws (403) when the caller may not. */
export type Authorise<T> = (caller: Principal, item: T) => void;

/** A grant on the item's account (or its whole organisation). */
export const onAccount: Authorise<{ organisation_uuid: string; account_uuid: string }> = (caller, item) =>
  assertAccountGrant(caller, item.organisation_uuid, item.account_uuid);
/** Any grant on the item's organisation. */
export const onOrganisation: Authorise<{ organisation_uuid: string }> = (caller, item) =>
  assertOrganisationGrant(caller, item.organisation_uuid);
/** A grant on the item's whole organisation. */
export const onWholeOrganisation: Authorise<{ organisation_uuid: string }> = (caller, item) =>
  assertWholeOrganisationGrant(caller, item.organisation_uuid);
/** A rule of the domain's own that says yes or no (no: 403, with `refusal` if given). */
export const allowedIf =
  <T>(allowed: (caller: Principal, item: T) => boolean, refusal?: string): Authorise<T> =>
  (caller, item) => {
    if (!allowed(caller, item)) throw new ForbiddenError(refusal);
  };

/**
 * The one way a domain reads an item for a caller: the caller's grants and the item are awaited
 * together (the item's read goes out in the grants' round trip), a missing item is a 404 with
 * `notFound`, then `authorise` decides (403). 404 before 403: a caller learns that an item exists
 * only by holding a grant that covers it.
 */
export async function readFor<T>(
  principal: Principal | Promise<Principal>,
  found: Promise<T | undefined>,
  notFound: string,
  authorise: Authorise<T>,
): Promise<T> {
  const [caller, item] = await Promise.all([principal, found]);
  if (item === undefined) throw new NotFoundError(notFound);
  authorise(caller, item);
  return item;
}
