import { createDomainHandler } from '@svc/http';
import { authenticator } from '@svc/identity';
import { webhooksRoutes } from './routes';

export const handler = createDomainHandler(webhooksRoutes, authenticator);
