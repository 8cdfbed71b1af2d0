import { now, type Principal } from '@svc/core';
import { parseSearchRequest } from '@svc/search';

/**
 * The search language over the caller's subscriptions in the search engine: every organisation
 * the grants touch, accounts outside the grants left out, each document as GET returns it at the
 * time of the search (so `subscription_status` is the status now).
 */
export async function searchSubscriptions(principal: Promise<Principal>, body: unknown) {
  const request = parseSearchRequest(body);
  const { searchSubscriptionRows } = await import('../search/subscription-search');
  return searchSubscriptionRows(await principal, request, now());
}
