import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SUBSCRIPTION, subscriptionsOfSupporter } from '@svc/subscriptions';
import { db, tableName } from '@svc/table';
import { beforeAll, describe, expect, it } from 'vitest';
import { billingRun, ok, setClock, setup, subscription } from '../../../services/subscriptions/src/test-support';
import { reindexEntities } from './reindex';

/**
 * `pnpm ops table:reindex`: a subscription stored before the supporter index existed is brought
 * into it, nothing else of the item changes, and a second run writes nothing.
 */
beforeAll(async () => {
  await setup();
});

describe('table:reindex', () => {
  it('writes the index keys an item lacks, once, and leaves the rest of the item as it was', async () => {
    setClock('2031-03-10T09:00:00');
    const created = await subscription();
    await billingRun();
    const key = SUBSCRIPTION.key(created.uuid);
    // As stored before the index: no gsi1 keys.
    await db().send(new UpdateCommand({ TableName: tableName(), Key: key, UpdateExpression: 'REMOVE gsi1pk, gsi1sk' }));
    expect(await subscriptionsOfSupporter(created.supporter_uuid)).toEqual([]);
    const before = await ok('GET', `/subscriptions/${created.uuid}`);

    const first = await reindexEntities([SUBSCRIPTION]);
    expect(first.updated).toBeGreaterThanOrEqual(1);
    const listed = await subscriptionsOfSupporter(created.supporter_uuid);
    expect(listed.map((s) => s.uuid)).toEqual([created.uuid]);
    expect(await ok('GET', `/subscriptions/${created.uuid}`)).toEqual(before);
    // Nothing is announced again: the item's events are those of its last real write.
    expect(listed[0]?.events).toEqual([]);

    const second = await reindexEntities([SUBSCRIPTION]);
    expect(second.updated).toBe(0);
    expect(second.scanned).toBe(first.scanned);
  });
});
