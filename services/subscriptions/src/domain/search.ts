import { coversAccount, now, type Principal } from '@svc/core';
import { executeSearch, parseSearchRequest } from '@svc/search';
import { subscriptionsOfOrganisation } from '../repository/items';
import type { SubscriptionRecord } from '../repository/records';
import { planRefs, subscriptionShape } from './shapes';

/**
 * The search language over the caller's subscriptions: every organisation the grants touch,
 * subscriptions of accounts outside the grants dropped, evaluated over the documents as GET
 * returns them (so `subscription_status` is the status at the time of the search).
 */
export async function searchSubscriptions(principal: Promise<Principal>, body: unknown) {
  const request = parseSearchRequest(body);
  const caller = await principal;
  const organisations = [...new Set(caller.grants.map((g) => g.organisation_uuid))];
  const found: SubscriptionRecord[] = [];
  await Promise.all(
    organisations.map(async (organisation) => {
      for await (const page of subscriptionsOfOrganisation(organisation)) {
        for (const subscription of page) {
          if (coversAccount(caller, organisation, subscription.account_uuid)) found.push(subscription);
        }
      }
    }),
  );
  const plans = await planRefs(found);
  const at = now();
  return executeSearch(
    request,
    found.map((subscription) => subscriptionShape(subscription, plans.get(subscription.plan_uuid), at)),
  );
}
