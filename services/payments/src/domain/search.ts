import { coversAccount, type Principal } from '@svc/core';
import { executeSearch, parseSearchRequest } from '@svc/search';
import { searchEntries } from './search-snapshot';

/**
 * The search language over the caller's partitions: every organisation the grants touch (kept
 * current in this container, see search-snapshot), payments of accounts outside the grants
 * dropped, the language evaluated in memory over the documents as GET returns them.
 */
export async function searchPayments(principal: Promise<Principal>, body: unknown) {
  const request = parseSearchRequest(body);
  const caller = await principal;
  const organisations = [...new Set(caller.grants.map((g) => g.organisation_uuid))];
  const documents: Record<string, unknown>[] = [];
  for (const organisation of organisations) {
    for (const entry of await searchEntries(organisation)) {
      if (coversAccount(caller, organisation, entry.accountUuid)) documents.push(entry.document);
    }
  }
  return executeSearch(request, documents);
}
