import { createDomainHandler } from '@svc/http';
import { authenticator } from '@svc/identity';
import { connectRoutes } from './page-routes';
import { onboardingRoutes } from './routes';

export const handler = createDomainHandler([...onboardingRoutes, ...connectRoutes], authenticator);
