export { subscriptionsRoutes } from './handlers/routes';
