import {
  assertAccountGrant,
  assertOrganisationGrant,
  assertWholeOrganisationGrant,
  coversAccount,
  coversOrganisation,
  ForbiddenError,
  NotFoundError,
  type Principal,
  readFor,
} from '@svc/core';
import { parseSearchRequest } from '@svc/search';
import {
  type Account,
  type Address,
  findAccount,
  findAccountWithAddresses,
  findOrganisation,
  findOrganisationWithAddresses,
  listAccountsOfOrganisation,
  type Organisation,
} from '../repository/organisation-repository';

/** List Organisations returns at most this many. */
export const ORGANISATION_LIST_LIMIT = 500;

/** The caller's grants are awaited with the first read, which goes out in the same round trip. */
export async function getOrganisation(principal: Promise<Principal>, uuid: string) {
  const organisation = await readFor(principal, findOrganisation(uuid), 'Organisation not found', (caller, found) =>
    assertOrganisationGrant(caller, found.uuid),
  );
  return { organisation, visibleAccounts: visibleAccountsOf(await principal, organisation) };
}

/** The accounts of an organisation the caller's grants cover. */
export function visibleAccountsOf(caller: Principal, organisation: Organisation): string[] {
  return coversOrganisation(caller, organisation.uuid)
    ? organisation.account_uuids
    : organisation.account_uuids.filter((accountUuid) => coversAccount(caller, organisation.uuid, accountUuid));
}

/** Each account with its organisation (a list shows both, as the single answer does). */
export async function withOrganisations(
  accounts: readonly Account[],
): Promise<Array<{ account: Account; organisation: Organisation }>> {
  const uuids = [...new Set(accounts.map((a) => a.organisation_uuid))];
  const organisations = new Map(
    (await Promise.all(uuids.map((uuid) => findOrganisation(uuid)))).flatMap((o) => (o ? [[o.uuid, o] as const] : [])),
  );
  return accounts.flatMap((account) => {
    const organisation = organisations.get(account.organisation_uuid);
    return organisation ? [{ account, organisation }] : [];
  });
}

/** Addresses and metadata belong to the whole organisation: an account grant is not enough. */
export async function getOrganisationAddresses(principal: Promise<Principal>, uuid: string): Promise<Address[]> {
  const found = await readFor(principal, findOrganisationWithAddresses(uuid), 'Organisation not found', (caller) =>
    assertWholeOrganisationGrant(caller, uuid),
  );
  return found.addresses;
}

export async function getOrganisationMetadata(principal: Promise<Principal>, uuid: string) {
  const organisation = await readFor(principal, findOrganisation(uuid), 'Organisation not found', (caller) =>
    assertWholeOrganisationGrant(caller, uuid),
  );
  return organisation.metadata;
}

export async function listOrganisations(
  principal: Principal,
  limit = ORGANISATION_LIST_LIMIT,
): Promise<Organisation[]> {
  const uuids = [...new Set(principal.grants.map((g) => g.organisation_uuid))].slice(0, limit);
  const found = await Promise.all(uuids.map((uuid) => findOrganisation(uuid)));
  return found
    .filter((o): o is Organisation => o !== undefined)
    .sort((a, b) => a.created - b.created || a.uuid.localeCompare(b.uuid));
}

export async function getAccount(principal: Promise<Principal>, uuid: string) {
  const account = await readFor(principal, findAccount(uuid), 'Account not found', (caller, found) =>
    assertAccountGrant(caller, found.organisation_uuid, found.uuid),
  );
  const organisation = await findOrganisation(account.organisation_uuid);
  if (!organisation) throw new NotFoundError('Account not found');
  return { account, organisation };
}

export async function getAccountAddresses(principal: Promise<Principal>, uuid: string): Promise<Address[]> {
  const found = await readFor(principal, findAccountWithAddresses(uuid), 'Account not found', (caller, item) =>
    assertAccountGrant(caller, item.account.organisation_uuid, item.account.uuid),
  );
  return found.addresses;
}

/** Accounts the caller's grants cover, optionally of one organisation (403 without a grant on it). */
export async function listAccounts(principal: Principal, organisationUuid?: string): Promise<Account[]> {
  const grants = organisationUuid
    ? principal.grants.filter((g) => g.organisation_uuid === organisationUuid)
    : principal.grants;
  if (organisationUuid && grants.length === 0) {
    throw new ForbiddenError('You have no grant on this organisation');
  }
  const wholeOrganisations = [...new Set(grants.filter((g) => !g.account_uuid).map((g) => g.organisation_uuid))];
  const singleAccounts = grants
    .filter((g) => g.account_uuid && !wholeOrganisations.includes(g.organisation_uuid))
    .map((g) => g.account_uuid as string);
  const [byOrganisation, single] = await Promise.all([
    Promise.all(wholeOrganisations.map((uuid) => listAccountsOfOrganisation(uuid))),
    Promise.all(singleAccounts.map((uuid) => findAccount(uuid))),
  ]);
  const accounts = new Map<string, Account>();
  for (const account of [...byOrganisation.flat(), ...single]) {
    if (account && coversAccount(principal, account.organisation_uuid, account.uuid))
      accounts.set(account.uuid, account);
  }
  return [...accounts.values()].sort((a, b) => a.created - b.created || a.uuid.localeCompare(b.uuid));
}

/**
 * The search language over every organisation the grants touch (no 500 limit here), in the
 * search engine; a caller granted single accounts sees only those in `accounts`.
 */
export async function searchOrganisations(principal: Promise<Principal>, body: unknown) {
  const request = parseSearchRequest(body);
  const { searchOrganisationRows } = await import('../search/organisation-search');
  return searchOrganisationRows(await principal, request);
}
