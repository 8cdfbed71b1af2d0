import { createDomainHandler } from '@svc/http';
import { authenticator } from '@svc/identity';
import { paymentsRoutes } from './routes';

export const handler = createDomainHandler(paymentsRoutes, authenticator);
