export { authenticator } from './authenticator';
export {
  addGrant,
  authenticateClient,
  type ClientInput,
  createClient,
  loadPrincipal,
  removeOrganisationGrants,
  upsertClient,
} from './domain/clients';
export { forgetSigningKeys, generateKeySet, keySetSchema, SIGNING_KEYS } from './domain/signing-keys';
export { issueAccessToken, TOKEN_LIFETIME_SECONDS, verifyAccessToken } from './domain/tokens';
export { identityRoutes } from './handlers/routes';
export {
  CLIENT,
  type ClientRecord,
  findClient,
  findPartnerByConfiguration,
  grantsChangeWrite,
  type PartnerProfile,
  partnerProfileSchema,
} from './repository/client-repository';
