import { createDomainHandler } from '@svc/http';
import { authenticator } from '@svc/identity';
import { subscriptionsRoutes } from './routes';

export const handler = createDomainHandler(subscriptionsRoutes, authenticator);
