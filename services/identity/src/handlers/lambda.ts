import { createDomainHandler } from '@svc/http';
import { authenticator } from '../authenticator';
import { identityRoutes } from './routes';

export const handler = createDomainHandler(identityRoutes, authenticator);
