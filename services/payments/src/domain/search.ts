import type { Principal } from '@svc/core';
import { parseSearchRequest } from '@svc/search';
import { searchPaymentRows } from '../search/payment-search';

/**
 * The search language over the caller's payments, on the search engine (see
 * search/payment-search.ts): the tenant condition comes from the caller's grants only.
 */
export async function searchPayments(principal: Promise<Principal>, body: unknown) {
  const request = parseSearchRequest(body);
  const caller = await principal;
  return searchPaymentRows(caller.grants, request);
}
