import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SUBSCRIPTION, subscriptionsOfSupporter } from '@svc/subscriptions';
import { findSupporterByEmail, SUPPORTER, withEmailHash } from '@svc/supporters';
import { db, tableName } from '@svc/table';
import { beforeAll, describe, expect, it } from 'vitest';
import { billingRun, DEMO, ok, setClock, setup, subscription } from '../../../services/subscriptions/src/test-support';
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

  it('gives supporters stored before the e-mail index their hash and keys', async () => {
    const email = `reindex-${Date.now()}@example.org`;
    const created = await ok('POST', '/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada', email }, 201);
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: SUPPORTER.key(created.uuid),
        UpdateExpression: 'REMOVE gsi2pk, gsi2sk, email_hash',
      }),
    );
    expect(await findSupporterByEmail(DEMO.org, email)).toBeUndefined();
    const summary = await reindexEntities([{ entity: SUPPORTER, prepare: withEmailHash }]);
    expect(summary.updated).toBeGreaterThanOrEqual(1);
    expect((await findSupporterByEmail(DEMO.org, email))?.uuid).toBe(created.uuid);
    expect((await reindexEntities([{ entity: SUPPORTER, prepare: withEmailHash }])).updated).toBe(0);
  });
});
