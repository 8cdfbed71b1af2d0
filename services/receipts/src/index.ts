import type { AnyRoute } from '@svc/http';

/** The receipts domain's routes (contract section 13): receipt settings, batches, receipts, Gift Aid. */
export const receiptsRoutes: AnyRoute[] = [];
