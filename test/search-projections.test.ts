import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SEARCH_PROJECTIONS } from '@svc/api';
import { createClient } from '@svc/identity';
import { ORGANISATION_PROJECTION } from '@svc/organisations/search';
import { rebuildSearch, searchDb, unfilledProjections } from '@svc/sql';
import { SUBSCRIPTION_PROJECTION } from '@svc/subscriptions/search';
import { getItem } from '@svc/table';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, DEMO, GOOD_CARD_INFORMATION, seedDemo, tokenFor } from './support/api';

/**
 * Organisations and subscriptions in the search engine beside payments: tenant walls from the
 * grants (an account grant sees only its account in an organisation's document), writes found by
 * the next search, replayed stream records never moving a row back, and a rebuild refilling
 * every projection (or only those the engine was never filled for).
 */
let token: string;
let operator: string;
let other: string;

beforeAll(async () => {
  await seedDemo();
  [token, operator, other] = await Promise.all([
    tokenFor(DEMO.client),
    tokenFor(DEMO.operator),
    tokenFor(DEMO.otherClient),
  ]);
});

const search = async (kind: string, body: unknown, as = token) => {
  const response = await call('POST', `/search/${kind}`, { token: as, body });
  expect(response.status, response.text).toBe(200);
  return response.json;
};

async function newSubscription(marker: string) {
  const source = await call('POST', '/payment-sources', {
    token,
    body: {
      account_uuid: DEMO.account,
      payment_method: 'card',
      profile: 'card-test',
      amount: { value: '100', currency: 'CHF' },
      payment_information: GOOD_CARD_INFORMATION,
    },
  });
  const supporter = await call('POST', '/supporters', {
    token,
    body: { organisation_uuid: DEMO.org, first_name: 'Ada' },
  });
  const created = await call('POST', '/subscriptions', {
    token,
    body: {
      account_uuid: DEMO.account,
      payment_source_uuid: source.json.uuid,
      supporter_uuid: supporter.json.uuid,
      currency: 'CHF',
      amount: 1500,
      recurring_interval: 'monthly',
      status: 'active',
      custom_parameters: { case: marker },
    },
  });
  expect(created.status, created.text).toBe(201);
  return created.json as { uuid: string };
}

describe('organisations in the search engine', () => {
  it('shows a caller granted one account only that account, and matches on no other', async () => {
    const client = await createClient({ grants: [{ organisation_uuid: DEMO.org, account_uuid: DEMO.secondAccount }] });
    const narrow = await tokenFor({ id: client.client_id, secret: client.client_secret });
    const found = await search('organisations', { query: { $match: {} } }, narrow);
    expect(found.summary.hits).toBe(1);
    expect(found.hits[0].accounts).toEqual([{ uuid: DEMO.secondAccount }]);
    const single = await call('GET', `/organisations/${DEMO.org}`, { token: narrow });
    expect(found.hits[0]).toEqual(single.json);
    // The hidden account is neither matched nor counted for this caller…
    const hidden = { query: { $term: { 'accounts.uuid': DEMO.account } } };
    expect((await search('organisations', hidden, narrow)).summary.hits).toBe(0);
    const terms = await search(
      'organisations',
      { query: { $match: {} }, aggs: { accounts: { type: 'term', field: 'accounts.uuid', size: 10 } } },
      narrow,
    );
    expect(terms.aggregations.accounts).toEqual([{ key: DEMO.secondAccount, doc_count: 1 }]);
    // …while a caller granted the whole organisation sees both.
    const whole = await search('organisations', hidden);
    expect(whole.summary.hits).toBe(1);
    expect(whole.hits[0].accounts.map((a: { uuid: string }) => a.uuid).sort()).toEqual(
      [DEMO.account, DEMO.secondAccount].sort(),
    );
  });

  it('finds an approval decision in the next search, and a replayed older item never undoes it', async () => {
    const before = await getItem({ pk: `ORG#${DEMO.otherOrg}`, sk: 'ORG' });
    const declined = await call('POST', `/operator/organisations/${DEMO.otherOrg}/decline`, { token: operator });
    expect(declined.status, declined.text).toBe(200);
    const query = { query: { $term: { approval_status: 'declined' } } };
    expect((await search('organisations', query, other)).hits.map((o: { uuid: string }) => o.uuid)).toEqual([
      DEMO.otherOrg,
    ]);
    // The stream delivers the item as it was before the decision, late.
    await ORGANISATION_PROJECTION.project([before as Record<string, unknown>]);
    expect((await search('organisations', query, other)).summary.hits).toBe(1);
    const approved = await call('POST', `/operator/organisations/${DEMO.otherOrg}/approve`, { token: operator });
    expect(approved.status, approved.text).toBe(200);
    expect((await search('organisations', query, other)).summary.hits).toBe(0);
  });
});

describe('subscriptions in the search engine', () => {
  it('finds a write at once; a replayed older version never moves the row back', async () => {
    const marker = `replay-${Date.now()}`;
    const created = await newSubscription(marker);
    const first = await getItem({ pk: `SUBSCRIPTION#${created.uuid}`, sk: 'SUBSCRIPTION' });
    const cancelled = await call('POST', `/subscriptions/${created.uuid}/cancel`, { token });
    expect(cancelled.status, cancelled.text).toBe(200);
    const query = { query: { $term: { 'custom_parameters.case': marker } } };
    expect((await search('subscriptions', query)).hits[0].subscription_status).toBe('cancelled');
    await SUBSCRIPTION_PROJECTION.project([first as Record<string, unknown>]);
    const after = await search('subscriptions', query);
    expect(after.hits[0].subscription_status).toBe('cancelled');
    expect(after.hits[0]).toEqual((await call('GET', `/subscriptions/${created.uuid}`, { token })).json);
    // Another organisation's client finds nothing of it.
    expect((await search('subscriptions', query, other)).summary.hits).toBe(0);
  });
});

describe('rebuilding every projection', () => {
  it('refills emptied subscription and organisation tables, and only what was never filled on start', async () => {
    const marker = `rebuild-${Date.now()}`;
    await newSubscription(marker);
    const query = { query: { $term: { 'custom_parameters.case': marker } } };
    const orgQuery = { query: { $term: { uuid: DEMO.org } } };
    expect((await search('subscriptions', query)).summary.hits).toBe(1);
    await sql`TRUNCATE subscription_search, subscription_plan_search, organisation_search`.execute(searchDb());
    expect((await search('subscriptions', query)).summary.hits).toBe(0);
    expect((await search('organisations', orgQuery)).summary.hits).toBe(0);
    const progressFile = join(mkdtempSync(join(tmpdir(), 'svc-rebuild-')), 'progress.json');
    const summary = await rebuildSearch({ projections: SEARCH_PROJECTIONS, segments: 2, progressFile });
    expect(summary.projected).toBeGreaterThan(0);
    expect((await search('subscriptions', query)).summary.hits).toBe(1);
    expect((await search('organisations', orgQuery)).summary.hits).toBe(1);
    expect(await unfilledProjections(SEARCH_PROJECTIONS)).toEqual([]);

    // A projection the engine has no record of (one a release adds) is the only one refilled.
    await sql`DELETE FROM search_projection_state WHERE name = 'organisations'`.execute(searchDb());
    await sql`TRUNCATE organisation_search`.execute(searchDb());
    const unfilled = await unfilledProjections(SEARCH_PROJECTIONS);
    expect(unfilled.map((p) => p.name)).toEqual(['organisations']);
    const refilled = await rebuildSearch({ projections: unfilled, segments: 1, progressFile });
    const organisations = Number(
      (await sql<{ n: string }>`SELECT count(*)::text AS n FROM organisation_search`.execute(searchDb())).rows[0]?.n,
    );
    expect(refilled.projected).toBe(organisations);
    expect((await search('organisations', orgQuery)).summary.hits).toBe(1);
    expect(await unfilledProjections(SEARCH_PROJECTIONS)).toEqual([]);
  });
});
