import { createDomainHandler } from '@svc/http';
import { authenticator } from '@svc/identity';
import { supportersRoutes } from './routes';

export const handler = createDomainHandler(supportersRoutes, authenticator);
