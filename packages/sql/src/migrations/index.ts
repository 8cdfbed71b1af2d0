import { m0001PaymentSearch } from './0001-payment-search';
import { m0002SubscriptionOrganisationSearch } from './0002-subscription-organisation-search';
import { m0003PaymentFeeCoverColumns } from './0003-payment-fee-cover-columns';

/**
 * The search engine's schema, in versions applied in order and never edited once released: a
 * change is a new version. Each is a list of single statements (the Data API runs one statement
 * per call), each safe to run again (IF NOT EXISTS, OR REPLACE).
 */
export interface Migration {
  version: number;
  name: string;
  statements: readonly string[];
}

export const MIGRATIONS: readonly Migration[] = [
  m0001PaymentSearch,
  m0002SubscriptionOrganisationSearch,
  m0003PaymentFeeCoverColumns,
];
