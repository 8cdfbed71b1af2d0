import {
  assertOrganisationGrant,
  ForbiddenError,
  isResumedRequest,
  NotFoundError,
  newResourceUuid,
  now,
  onOrganisation,
  type Principal,
  readFor,
  touchesOrganisation,
} from '@svc/core';
import { findOrganisation } from '@svc/organisations';
import {
  findSupporter,
  insertSupporter,
  listSupportersOfOrganisation,
  updateSupporterFields,
} from '../repository/supporter-repository';
import { createSupporterInput, fieldChanges, paymentSupporterInput, updateSupporterInput } from './input';
import { byCreation, byField, type SortOrder } from './sorting';
import type { SortableField, Supporter, SupporterFields } from './supporter';
import { parseInput } from './validation';

/** List Supporters: `size` default and maximum. */
export const DEFAULT_LIST_SIZE = 100;
export const MAX_LIST_SIZE = 1000;

type Caller = Principal | Promise<Principal>;

function newSupporter(organisationUuid: string, fields: SupporterFields): Supporter {
  return { uuid: newResourceUuid('supporter'), organisation_uuid: organisationUuid, created: now(), ...fields };
}

/**
 * A supporter belongs to an organisation: any grant on it (whole or one of its accounts) is
 * enough to read and write its supporters.
 */
export async function createSupporter(principal: Caller, input: unknown): Promise<Supporter> {
  const { organisation_uuid, ...fields } = parseInput(createSupporterInput, input);
  const [caller, organisation] = await Promise.all([principal, findOrganisation(organisation_uuid)]);
  if (!organisation) throw new NotFoundError('Organisation not found');
  assertOrganisationGrant(caller, organisation_uuid);
  const supporter = newSupporter(organisation_uuid, fieldChanges(fields).set);
  // A re-run of a request that died after storing the supporter returns that supporter.
  const earlier = isResumedRequest() ? await findSupporter(supporter.uuid) : undefined;
  if (earlier) return earlier;
  await insertSupporter(supporter);
  return supporter;
}

/**
 * Builds, but does not store, the supporter of a payment request's `supporter` object
 *; errors name `supporter.<field>`. The payments domain writes it with
 * `supporterWrite` in the payment's own transaction.
 */
export function supporterFromPaymentInput(organisationUuid: string, input: unknown): Supporter {
  // The input's `uuid` (an existing supporter, for the payments domain) is not a field: it is dropped.
  return newSupporter(organisationUuid, fieldChanges(parseInput(paymentSupporterInput, input, 'supporter')).set);
}

/** 404 before 403: the caller learns a supporter exists only if it has a grant on its organisation. */
export async function getSupporter(principal: Caller, uuid: string): Promise<Supporter> {
  return readFor(principal, findSupporter(uuid), 'Supporter not found', onOrganisation);
}

/** Writes only the fields sent; `null`, `""` and `{}` remove a field. */
export async function updateSupporter(principal: Caller, uuid: string, input: unknown): Promise<Supporter> {
  const { set, remove } = fieldChanges(parseInput(updateSupporterInput, input));
  const current = await getSupporter(principal, uuid);
  if (Object.keys(set).length === 0 && remove.length === 0) return current;
  const updated = await updateSupporterFields(current, set, remove);
  if (!updated) throw new NotFoundError('Supporter not found');
  return updated;
}

export interface ListSupportersQuery {
  from: number;
  size: number;
  organisation_uuid?: string;
  sort_by?: SortableField;
  sort_order?: SortOrder;
}

/**
 * The supporters of one organisation (403 without a grant on it) or of every organisation the
 * caller's grants touch. Creation order pages straight from the index, reading only `from + size`
 * per organisation; any other order reads the organisations' supporters whole and sorts them.
 */
export async function listSupporters(principal: Principal, query: ListSupportersQuery): Promise<Supporter[]> {
  const filter = query.organisation_uuid;
  if (filter && !touchesOrganisation(principal, filter)) {
    throw new ForbiddenError('You have no grant on this organisation');
  }
  const organisations = filter ? [filter] : [...new Set(principal.grants.map((g) => g.organisation_uuid))];
  if (query.size === 0 || organisations.length === 0) return [];
  const order = query.sort_order ?? 'asc';
  const inCreationOrder = query.sort_by === undefined || query.sort_by === 'created';
  const perOrganisation = await Promise.all(
    organisations.map((uuid) =>
      listSupportersOfOrganisation(uuid, {
        newestFirst: order === 'desc',
        ...(inCreationOrder ? { limit: query.from + query.size } : {}),
      }),
    ),
  );
  const compare = inCreationOrder || query.sort_by === undefined ? byCreation(order) : byField(query.sort_by, order);
  return perOrganisation
    .flat()
    .sort(compare)
    .slice(query.from, query.from + query.size);
}
