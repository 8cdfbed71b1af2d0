export {
  DEFAULT_PAYMENT_METHOD_PROFILES,
  type OrganisationSeed,
  organisationSeedSchema,
  upsertOrganisation,
} from './domain/upsert';
export { organisationsRoutes } from './handlers/routes';
export { type Account, findAccount, findOrganisation, type Organisation } from './repository/organisation-repository';
