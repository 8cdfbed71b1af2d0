import { createDomainHandler } from '@svc/http';
import { authenticator } from '@svc/identity';
import { platformRoutes } from './route-table';

export const handler = createDomainHandler(platformRoutes, authenticator);
