import { UnauthorizedError } from '@svc/core';
import { createDomainHandler } from '@svc/http';
import { createPlatformRoutes } from './platform-routes';

/**
 * Health, the API description and the fallback. Every route here is public, so no
 * authenticator is needed, and the route table (every domain's code) is loaded only when the
 * API description is first asked for: health checks and cold starts stay light.
 */
const routes = createPlatformRoutes(async () => (await import('./route-table')).allRoutes());
const noTokens = {
  verifyAccessToken: () => Promise.reject(new UnauthorizedError('No route here takes a token')),
  loadPrincipal: () => Promise.reject(new UnauthorizedError('No route here takes a token')),
};

export const handler = createDomainHandler(routes, noTokens);
