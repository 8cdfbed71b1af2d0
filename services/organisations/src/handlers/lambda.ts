import { createDomainHandler } from '@svc/http';
import { authenticator } from '@svc/identity';
import { organisationsRoutes } from './routes';

export const handler = createDomainHandler(organisationsRoutes, authenticator);
