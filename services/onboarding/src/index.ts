export { onboardingEventData } from './event-data';
export { connectRoutes } from './handlers/page-routes';
export { onboardingRoutes } from './handlers/routes';
