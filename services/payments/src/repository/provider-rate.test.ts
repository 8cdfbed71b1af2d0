import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { freezeClock, now } from '@svc/core';
import { db, tableName } from '@svc/table';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { forgetProviderSlots, PROVIDER_RATE, takeProviderSlot } from './provider-rate-repository';

/** The shared limiter of requests to a provider (its counts live in the table). */
const limitTo = (limit: number) => {
  process.env.SVC_PROVIDER_RATE_LIMITS = JSON.stringify({ adyen: { live: limit } });
};

async function counted(scope: string, second: number, shards: number): Promise<number> {
  return (await perShard(scope, second, shards)).reduce((sum, count) => sum + count, 0);
}

async function perShard(scope: string, second: number, shards: number): Promise<number[]> {
  const counts: number[] = [];
  for (let shard = 0; shard < shards; shard++) {
    const key = PROVIDER_RATE.key([scope, second, shard]);
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': key.pk },
      }),
    );
    counts.push(Number(out.Items?.[0]?.count ?? 0));
  }
  return counts;
}

beforeAll(() => {
  freezeClock(1_900_000_000);
});
const configured = process.env.SVC_PROVIDER_RATE_LIMITS;
afterEach(() => {
  if (configured === undefined) delete process.env.SVC_PROVIDER_RATE_LIMITS;
  else process.env.SVC_PROVIDER_RATE_LIMITS = configured;
  forgetProviderSlots();
});

describe('the provider limiter', () => {
  it('grants no more than the limit in a second, across containers racing, and all of it when asked enough', async () => {
    limitTo(120);
    const second = now();
    let granted = 0;
    // Three containers, each with 80 requests at once.
    for (let container = 0; container < 3; container++) {
      forgetProviderSlots();
      const answers = await Promise.all(
        Array.from({ length: 80 }, () => takeProviderSlot('adyen', 'CharityECOM', false, second)),
      );
      granted += answers.filter(Boolean).length;
    }
    expect(granted).toBeLessThanOrEqual(120);
    // Blocks a container took and did not use are lost, never lent twice: at most a block per shard and container.
    expect(granted).toBeGreaterThanOrEqual(120 - 3 * 12 * 3);
    expect(await counted('adyen#CharityECOM#live', second, 12)).toBeLessThanOrEqual(120);
  });

  it('takes slots in blocks: a busy container writes a few times, not once per request', async () => {
    limitTo(400);
    const second = now() + 10;
    let answers = 0;
    for (let i = 0; i < 40; i++) if (await takeProviderSlot('adyen', 'CharityTwo', false, second)) answers += 1;
    expect(answers).toBe(40);
    // 10 shards of 40, blocks of 10: four writes took forty slots.
    const counts = await perShard('adyen#CharityTwo#live', second, 10);
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(40);
    // Each write took a block of ten (forty writes of one would have touched nearly every shard).
    expect(counts.filter((count) => count > 0).length).toBeLessThanOrEqual(4);
    expect(counts.every((count) => count % 10 === 0)).toBe(true);
  });

  it('refuses once the second is used up and grants again in the next', async () => {
    limitTo(3);
    const second = now() + 20;
    const first = [];
    for (let i = 0; i < 5; i++) first.push(await takeProviderSlot('adyen', undefined, false, second));
    expect(first).toEqual([true, true, true, false, false]);
    expect(await takeProviderSlot('adyen', undefined, false, second + 1)).toBe(true);
  });

  it('does not limit a provider without a known limit', async () => {
    expect(await takeProviderSlot('adyen', undefined, false)).toBe(true);
    expect(await counted('adyen#platform#live', now(), 1)).toBe(0);
  });
});
