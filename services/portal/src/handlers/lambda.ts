import { createDomainHandler } from '@svc/http';
import { authenticator } from '@svc/identity';
import { portalRoutes } from './routes';

export const handler = createDomainHandler(portalRoutes, authenticator);
