export { decideApproval } from './domain/approval';
export { type OnboardedAddress, type OnboardedOrganisation, onboardedOrganisationWrites } from './domain/onboarded';
export { organisationShape } from './domain/shapes';
export {
  DEFAULT_PAYMENT_METHOD_PROFILES,
  type OrganisationSeed,
  organisationSeedSchema,
  upsertOrganisation,
} from './domain/upsert';
export { organisationEventData } from './event-data';
export { organisationsRoutes } from './handlers/routes';
export {
  ACCOUNT,
  ACCOUNT_ADDRESS,
  type Account,
  feesSchema,
  findAccount,
  findAccountToPay,
  findOrganisation,
  newOrganisationWrite,
  ORGANISATION,
  ORGANISATION_ADDRESS,
  type Organisation,
  organisationSchema,
  type PaymentMethodProfile,
  type ProfileFees,
  paymentMethodProfileSchema,
  type RouteCandidate,
} from './repository/organisation-repository';
