import { createDomainHandler } from '@svc/http';
import { authenticator } from '@svc/identity';
import { receiptsRoutes } from '../index';

export const handler = createDomainHandler(receiptsRoutes, authenticator);
