import { beforeAll, describe, expect, it } from 'vitest';
import { api, DEMO, ok, setClock, setup, subscription } from './test-support';

/**
 * `POST /search/subscriptions` on the search engine: each hit is what GET returns at the time of
 * the search, also for what moves with the clock without a write (a suspension's days, a planned
 * end) and with another item (the plan's name).
 */
beforeAll(setup);

const byMarker = async (marker: string, extra: Record<string, unknown>[] = []) =>
  ok('POST', '/search/subscriptions', {
    query: { $and: [{ $term: { 'custom_parameters.case': marker } }, ...extra] },
    sort: [{ field: 'created', direction: 'asc', field_type: 'numeric' }],
    size: 100,
  });

describe('searching subscriptions at the time of the search', () => {
  it('shows every hit as GET does now, as days pass without a write', async () => {
    setClock('2027-06-01T09:00');
    const marker = `clock-${Date.now()}`;
    const custom_parameters = { case: marker };
    const plain = await subscription({ custom_parameters });
    const pending = await subscription({ custom_parameters, status: undefined });
    const ending = await subscription({ custom_parameters, planned_end: '2027-06-20' });
    const pausing = await subscription({ custom_parameters });
    await ok('POST', `/subscriptions/${pausing.uuid}/suspend`, {
      suspension_start: '2027-06-10',
      suspension_end: '2027-06-25',
    });
    const stopping = await subscription({ custom_parameters });
    await ok('POST', `/subscriptions/${stopping.uuid}/suspend`, { suspension_start: '2027-06-15' });
    const cancelled = await subscription({ custom_parameters });
    await ok('POST', `/subscriptions/${cancelled.uuid}/cancel`);
    const all = [plain, pending, ending, pausing, stopping, cancelled].map((s) => s.uuid as string);

    const expected: Record<string, Record<string, string>> = {
      '2027-06-05T12:00': { [pausing.uuid]: 'active', [ending.uuid]: 'active', [stopping.uuid]: 'active' },
      '2027-06-12T12:00': { [pausing.uuid]: 'suspended', [ending.uuid]: 'active', [stopping.uuid]: 'active' },
      '2027-06-22T12:00': { [pausing.uuid]: 'suspended', [ending.uuid]: 'finished', [stopping.uuid]: 'suspended' },
      '2027-06-26T12:00': { [pausing.uuid]: 'active', [ending.uuid]: 'finished', [stopping.uuid]: 'suspended' },
    };
    for (const [time, statuses] of Object.entries(expected)) {
      setClock(time);
      const found = await byMarker(marker);
      expect(found.summary.hits).toBe(all.length);
      for (const hit of found.hits) {
        // Exactly GET's document now (key order aside), the derived fields included.
        expect(hit).toEqual(await ok('GET', `/subscriptions/${hit.uuid}`));
        if (statuses[hit.uuid]) expect(hit.subscription_status, `${time} ${hit.uuid}`).toBe(statuses[hit.uuid]);
      }
      // The derived status filters, counts and aggregates too.
      for (const status of ['active', 'suspended', 'finished']) {
        const filtered = await byMarker(marker, [{ $term: { subscription_status: status } }]);
        const want = found.hits.filter((h: { subscription_status: string }) => h.subscription_status === status);
        expect(filtered.hits.map((h: { uuid: string }) => h.uuid)).toEqual(want.map((h: { uuid: string }) => h.uuid));
      }
      const counted = await ok('POST', '/search/subscriptions', {
        query: { $term: { 'custom_parameters.case': marker } },
        size: 0,
        aggs: { by_status: { type: 'term', field: 'subscription_status', size: 10 } },
      });
      const tally = new Map<string, number>();
      for (const hit of found.hits) tally.set(hit.subscription_status, (tally.get(hit.subscription_status) ?? 0) + 1);
      expect(
        Object.fromEntries(
          counted.aggregations.by_status.map((b: { key: string; doc_count: number }) => [b.key, b.doc_count]),
        ),
      ).toEqual(Object.fromEntries(tally));
    }
    // A subscription finished by the clock has its ended_at; a live one its next due date.
    const last = await byMarker(marker);
    const hit = (uuid: string) => last.hits.find((h: { uuid: string }) => h.uuid === uuid);
    expect(hit(ending.uuid).ended_at).toBeGreaterThan(0);
    expect(hit(plain.uuid).next_due_date).toBeGreaterThan(0);
    expect(hit(pending.uuid).next_due_date).toBeUndefined();
  });

  it('shows a renamed plan under its new name at once, and finds by it', async () => {
    setClock('2027-07-01T09:00');
    const marker = `plan-${Date.now()}`;
    const plan = await ok('POST', '/subscription-plans', { organisation_uuid: DEMO.org, name: 'Monthly friends' }, 201);
    const created = await subscription({ custom_parameters: { case: marker }, subscription_plan_uuid: plan.uuid });
    expect(created.subscription_plan).toEqual({ uuid: plan.uuid, name: 'Monthly friends' });
    await ok('PATCH', `/subscription-plans/${plan.uuid}`, { name: 'Monthly patrons' });
    const found = await byMarker(marker, [{ $match: { 'subscription_plan.name': 'monthly patrons' } }]);
    expect(found.hits.map((h: { uuid: string }) => h.uuid)).toEqual([created.uuid]);
    expect(found.hits[0]).toEqual(await ok('GET', `/subscriptions/${created.uuid}`));
    expect((await byMarker(marker, [{ $match: { 'subscription_plan.name': 'monthly friends' } }])).summary.hits).toBe(
      0,
    );
  });

  it('answers 400 for a bad request and changes nothing', async () => {
    const response = await api('POST', '/search/subscriptions', { query: { $range: { amount: { gt: 'lots' } } } });
    expect(response.status).toBe(400);
  });
});
