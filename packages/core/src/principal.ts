import { ForbiddenError } from './errors';

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
