import type { Principal } from '@svc/core';
import { parseSearchRequest } from '@svc/search';

/**
 * The search language over the caller's payments, on the search engine (see
 * search/payment-search.ts): the tenant condition comes from the caller's grants only.
 */
export async function searchPayments(principal: Promise<Principal>, body: unknown) {
  const request = parseSearchRequest(body);
  const caller = await principal;
  // The engine's client and query builder load at the first search (or write), not at cold start.
  const { searchPaymentRows } = await import('../search/payment-search');
  return searchPaymentRows(caller.grants, request);
}
