export { onboardingEventData } from './event-data';
export { connectRoutes } from './handlers/page-routes';
export { onboardingRoutes } from './handlers/routes';
export { INTEGRATION, PARTNER_LINK } from './repository/integration-repository';
export { PROCESS, PROCESS_TOKEN } from './repository/process-repository';
export { CONNECT_TICKET, PASSWORD_GUESSES, USER, USER_EMAIL } from './repository/user-repository';
