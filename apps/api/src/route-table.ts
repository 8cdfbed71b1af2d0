import { type AnyRoute, routeKey } from '@svc/http';
import { identityRoutes } from '@svc/identity';
import { connectRoutes, onboardingRoutes } from '@svc/onboarding';
import { organisationsRoutes } from '@svc/organisations';
import { paymentsRoutes } from '@svc/payments';
import { portalRoutes } from '@svc/portal';
import { receiptsRoutes } from '@svc/receipts';
import { reconciliationRoutes } from '@svc/reconciliation';
import { subscriptionsRoutes } from '@svc/subscriptions';
import { supportersRoutes } from '@svc/supporters';
import { webhooksRoutes } from '@svc/webhooks';
import type { DomainName } from './domains';
import { createPlatformRoutes } from './platform-routes';

/** Health, the fallback and the API description of this very table (loaded at its first request). */
export const platformRoutes = createPlatformRoutes(async () =>
  (await import('./api-description')).describeRoutes(ROUTE_TABLE),
);

export interface RouteEntry {
  domain: DomainName;
  route: AnyRoute;
  key: string;
}

/**
 * The one route table: every route, its domain Lambda and whether it needs a token. The CDK
 * builds API Gateway from it, the local gateway serves from it, `/openapi.json` describes it.
 */
export const ROUTE_TABLE: readonly RouteEntry[] = (
  [
    ['platform', platformRoutes],
    ['identity', identityRoutes],
    ['organisations', organisationsRoutes],
    ['payments', paymentsRoutes],
    ['supporters', supportersRoutes],
    ['subscriptions', subscriptionsRoutes],
    ['webhooks', webhooksRoutes],
    ['onboarding', [...onboardingRoutes, ...connectRoutes]],
    ['reconciliation', reconciliationRoutes],
    ['portal', portalRoutes],
    ['receipts', receiptsRoutes],
  ] as const
).flatMap(([domain, routes]) => routes.map((route) => ({ domain, route, key: routeKey(route) })));

export function allRoutes(): AnyRoute[] {
  return ROUTE_TABLE.map((entry) => entry.route);
}
