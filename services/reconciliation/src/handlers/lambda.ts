import { createDomainHandler } from '@svc/http';
import { authenticator } from '@svc/identity';
import { reconciliationRoutes } from './routes';

export const handler = createDomainHandler(reconciliationRoutes, authenticator);
