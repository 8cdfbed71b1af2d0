import { ORGANISATION_PROJECTION } from '@svc/organisations/search';
import { PAYMENT_PROJECTION } from '@svc/payments/search';
import type { SearchProjection } from '@svc/sql';
import { SUBSCRIPTION_PROJECTION } from '@svc/subscriptions/search';

/** Every read model in the search engine: what the stream projector feeds and a rebuild fills. */
export const SEARCH_PROJECTIONS: readonly SearchProjection[] = [
  PAYMENT_PROJECTION,
  SUBSCRIPTION_PROJECTION,
  ORGANISATION_PROJECTION,
];
