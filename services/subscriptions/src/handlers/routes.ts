import type { AnyRoute } from '@svc/http';

export const subscriptionsRoutes: AnyRoute[] = [];
