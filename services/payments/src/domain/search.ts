import { coversAccount, type Principal } from '@svc/core';
import { executeSearch, parseSearchRequest } from '@svc/search';
import { paymentsOfOrganisation } from '../repository/payment-repository';
import { paymentShape } from './shapes';

/**
 * The search language over the caller's partitions: every organisation the grants touch is read
 * shard by shard, payments of accounts outside the grants are dropped, and the language is
 * evaluated in memory over the documents as GET returns them.
 */
export async function searchPayments(principal: Promise<Principal>, body: unknown) {
  const request = parseSearchRequest(body);
  const caller = await principal;
  const organisations = [...new Set(caller.grants.map((g) => g.organisation_uuid))];
  const documents: Record<string, unknown>[] = [];
  await Promise.all(
    organisations.map(async (organisation) => {
      for await (const page of paymentsOfOrganisation(organisation)) {
        for (const payment of page) {
          if (coversAccount(caller, payment.organisation_uuid, payment.account_uuid))
            documents.push(paymentShape(payment));
        }
      }
    }),
  );
  return executeSearch(request, documents);
}
