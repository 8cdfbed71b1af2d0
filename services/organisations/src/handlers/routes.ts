import { freeJsonObject, NotFoundError, SEARCH_BODY_LIMITS } from '@svc/core';
import { type AnyRoute, defineRoute, uuidParam, uuidParams } from '@svc/http';
import { searchResponseSchema } from '@svc/search';
import * as z from 'zod';
import { decideApproval } from '../domain/approval';
import {
  getAccount,
  getAccountAddresses,
  getOrganisation,
  getOrganisationAddresses,
  getOrganisationMetadata,
  listAccounts,
  listOrganisations,
  searchOrganisations,
  visibleAccountsOf,
  withOrganisations,
} from '../domain/organisations';
import {
  accountListResponse,
  accountListShape,
  accountResponse,
  accountShape,
  addressResponse,
  addressShape,
  billingDataResponse,
  billingDataShape,
  organisationListResponse,
  organisationListShape,
  organisationResponse,
  organisationShape,
} from '../domain/shapes';

const metadataOut = z.record(z.string(), z.string());

const orgParams = uuidParams('organisation_uuid');
const orgAddressParams = uuidParams('organisation_uuid', 'address_uuid');
const accountParams = uuidParams('account_uuid');
const accountAddressParams = uuidParams('account_uuid', 'address_uuid');

function pickAddress<T extends { uuid: string }>(addresses: T[], uuid: string): T {
  const found = addresses.find((a) => a.uuid === uuid);
  if (!found) throw new NotFoundError('Address not found');
  return found;
}

const approvalRoute = (decision: 'approve' | 'decline') =>
  defineRoute({
    method: 'POST',
    path: `/operator/organisations/{organisation_uuid}/${decision}`,
    auth: 'token',
    operationId: `${decision}Organisation`,
    summary: `Operators only: ${decision} an organisation (emits the ${decision === 'approve' ? 'approved' : 'declined'} event)`,
    params: orgParams,
    responses: {
      200: { description: 'Organisation (single shape)', schema: organisationResponse },
      403: { description: 'The caller is not an operator' },
      409: { description: 'The organisation is already in that state' },
    },
    handle: async ({ params, principal }) => {
      const organisation = await decideApproval(principal(), params.organisation_uuid, decision);
      return { status: 200, body: organisationShape(organisation, organisation.account_uuids) };
    },
  });

export const organisationsRoutes: AnyRoute[] = [
  approvalRoute('approve'),
  approvalRoute('decline'),
  defineRoute({
    method: 'GET',
    path: '/organisations',
    auth: 'token',
    operationId: 'listOrganisations',
    summary: 'List the organisations your grants cover (at most 500)',
    responses: { 200: { description: 'Organisations (list shape)', schema: z.array(organisationListResponse) } },
    handle: async ({ principal }) => {
      const caller = await principal();
      const organisations = await listOrganisations(caller);
      return { status: 200, body: organisations.map((o) => organisationListShape(o, visibleAccountsOf(caller, o))) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/search/organisations',
    auth: 'token',
    readOnly: true,
    operationId: 'searchOrganisations',
    summary: 'Search the organisations your grants cover with the search language',
    body: freeJsonObject(SEARCH_BODY_LIMITS),
    responses: {
      200: {
        description: 'Search response (hits in the single-organisation shape)',
        schema: searchResponseSchema(organisationResponse),
      },
    },
    handle: async ({ body, principal }) => ({ status: 200, body: await searchOrganisations(principal(), body) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/organisations/{organisation_uuid}',
    auth: 'token',
    operationId: 'getOrganisation',
    summary: 'Get an organisation',
    params: orgParams,
    responses: { 200: { description: 'Organisation (single shape)', schema: organisationResponse } },
    handle: async ({ params, principal }) => {
      const { organisation, visibleAccounts } = await getOrganisation(principal(), params.organisation_uuid);
      return { status: 200, body: organisationShape(organisation, visibleAccounts) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/organisations/{organisation_uuid}/addresses',
    auth: 'token',
    operationId: 'listOrganisationAddresses',
    summary: "List an organisation's addresses",
    params: orgParams,
    responses: { 200: { description: 'Addresses', schema: z.array(addressResponse) } },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: (await getOrganisationAddresses(principal(), params.organisation_uuid)).map(addressShape),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/organisations/{organisation_uuid}/addresses/{address_uuid}',
    auth: 'token',
    operationId: 'getOrganisationAddress',
    summary: "Get one of an organisation's addresses",
    params: orgAddressParams,
    responses: { 200: { description: 'Address', schema: addressResponse } },
    handle: async ({ params, principal }) => {
      const addresses = await getOrganisationAddresses(principal(), params.organisation_uuid);
      return { status: 200, body: addressShape(pickAddress(addresses, params.address_uuid)) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/organisations/{organisation_uuid}/metadata',
    auth: 'token',
    operationId: 'getOrganisationMetadata',
    summary: "Get an organisation's metadata",
    params: orgParams,
    responses: { 200: { description: 'Flat object of strings', schema: metadataOut } },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: await getOrganisationMetadata(principal(), params.organisation_uuid),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/accounts',
    auth: 'token',
    operationId: 'listAccounts',
    summary: 'List the accounts your grants cover',
    query: z.object({ organisation_uuid: uuidParam.optional() }),
    responses: { 200: { description: 'Accounts (list shape)', schema: z.array(accountListResponse) } },
    handle: async ({ query, principal }) => ({
      status: 200,
      body: (await withOrganisations(await listAccounts(await principal(), query.organisation_uuid))).map(
        ({ account, organisation }) => accountListShape(account, organisation),
      ),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/accounts/{account_uuid}',
    auth: 'token',
    operationId: 'getAccount',
    summary: 'Get an account',
    params: accountParams,
    responses: { 200: { description: 'Account (single shape)', schema: accountResponse } },
    handle: async ({ params, principal }) => {
      const { account, organisation } = await getAccount(principal(), params.account_uuid);
      return { status: 200, body: accountShape(account, organisation) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/accounts/{account_uuid}/billing-data',
    auth: 'token',
    operationId: 'getAccountBillingData',
    summary: "Get an account's billing data",
    params: accountParams,
    responses: { 200: { description: 'Billing data', schema: billingDataResponse } },
    handle: async ({ params, principal }) => {
      const { account, organisation } = await getAccount(principal(), params.account_uuid);
      return { status: 200, body: billingDataShape(account, organisation) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/accounts/{account_uuid}/addresses',
    auth: 'token',
    operationId: 'listAccountAddresses',
    summary: "List an account's addresses",
    params: accountParams,
    responses: { 200: { description: 'Addresses', schema: z.array(addressResponse) } },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: (await getAccountAddresses(principal(), params.account_uuid)).map(addressShape),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/accounts/{account_uuid}/addresses/{address_uuid}',
    auth: 'token',
    operationId: 'getAccountAddress',
    summary: "Get one of an account's addresses",
    params: accountAddressParams,
    responses: { 200: { description: 'Address', schema: addressResponse } },
    handle: async ({ params, principal }) => {
      const addresses = await getAccountAddresses(principal(), params.account_uuid);
      return { status: 200, body: addressShape(pickAddress(addresses, params.address_uuid)) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/accounts/{account_uuid}/metadata',
    auth: 'token',
    operationId: 'getAccountMetadata',
    summary: "Get an account's metadata",
    params: accountParams,
    responses: { 200: { description: 'Flat object of strings', schema: metadataOut } },
    handle: async ({ params, principal }) => {
      const { account } = await getAccount(principal(), params.account_uuid);
      return { status: 200, body: account.metadata };
    },
  }),
];
