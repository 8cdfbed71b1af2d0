import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { newUuid } from '@svc/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { forgetRecentItems, getRecentItem } from './batch-get';
import { db } from './client';
import { tableName } from './definition';

/**
 * The memo of hot reads (getRecentItem): the calling client and the account paid into, read at
 * most once per SVC_HOT_READ_SECONDS per container, so a peak's one client is no hot read key.
 */
const put = (pk: string, value: number) =>
  db().send(new PutCommand({ TableName: tableName(), Item: { pk, sk: 'ITEM', value } }));

afterEach(() => {
  delete process.env.SVC_HOT_READ_SECONDS;
  forgetRecentItems();
  vi.useRealTimers();
});

describe('hot reads', () => {
  it('read every time when SVC_HOT_READ_SECONDS is unset (the local runtime and tests)', async () => {
    const pk = `HOT#${newUuid()}`;
    await put(pk, 1);
    expect((await getRecentItem({ pk, sk: 'ITEM' }))?.value).toBe(1);
    await put(pk, 2);
    expect((await getRecentItem({ pk, sk: 'ITEM' }))?.value).toBe(2);
  });

  it('with it set, read once for any number of concurrent and later callers until it lapses, then again', async () => {
    process.env.SVC_HOT_READ_SECONDS = '1';
    vi.useFakeTimers({ toFake: ['Date'] });
    const pk = `HOT#${newUuid()}`;
    await put(pk, 1);
    const sent = vi.spyOn(db(), 'send');
    const reads = await Promise.all(Array.from({ length: 50 }, () => getRecentItem({ pk, sk: 'ITEM' })));
    expect(reads.every((item) => item?.value === 1)).toBe(true);
    await put(pk, 2);
    vi.advanceTimersByTime(900);
    // Within the second: the remembered item, no read.
    expect((await getRecentItem({ pk, sk: 'ITEM' }))?.value).toBe(1);
    vi.advanceTimersByTime(200);
    expect((await getRecentItem({ pk, sk: 'ITEM' }))?.value).toBe(2);
    const gets = sent.mock.calls.filter(([command]) => /Get/.test(command.constructor.name));
    expect(gets).toHaveLength(2);
    sent.mockRestore();
  });

  it('remember a missing item as missing, and never a failed read', async () => {
    process.env.SVC_HOT_READ_SECONDS = '5';
    const pk = `HOT#${newUuid()}`;
    expect(await getRecentItem({ pk, sk: 'ITEM' })).toBeUndefined();
    await put(pk, 1);
    expect(await getRecentItem({ pk, sk: 'ITEM' })).toBeUndefined();
    // A key DynamoDB refuses (an empty partition key) fails, and the next call reads again.
    await expect(getRecentItem({ pk: '', sk: 'ITEM' })).rejects.toThrow();
    await expect(getRecentItem({ pk: '', sk: 'ITEM' })).rejects.toThrow();
  });
});
