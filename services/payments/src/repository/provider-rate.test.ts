import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { freezeClock, now } from '@svc/core';
import { db, tableName } from '@svc/table';
import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, DEMO, seedDemo, tokenFor } from '../../../../test/support/api';
import {
  DEFAULT_ORGANISATION_SHARE,
  forgetProviderSlots,
  organisationCap,
  PROVIDER_RATE,
  takeProviderSlot,
} from './provider-rate-repository';

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

describe('the provider limiter shared by several organisations (issue 44)', () => {
  const A = 'organisation-a';
  const B = 'organisation-b';

  it('holds one organisation bursting from racing containers to its share, and leaves the rest to another', async () => {
    limitTo(20);
    const second = now() + 30;
    let grantedA = 0;
    // Organisation A: three containers, each with 30 requests at once (4.5 times the limit).
    for (let container = 0; container < 3; container++) {
      forgetProviderSlots();
      const answers = await Promise.all(
        Array.from({ length: 30 }, () => takeProviderSlot('adyen', 'Shared', false, second, A)),
      );
      grantedA += answers.filter(Boolean).length;
    }
    expect(grantedA).toBeLessThanOrEqual(organisationCap(20));
    // Before the share (one count for everyone), A took all 20 and B found none.
    forgetProviderSlots();
    const answersB = await Promise.all(
      Array.from({ length: 5 }, () => takeProviderSlot('adyen', 'Shared', false, second, B)),
    );
    expect(answersB.filter(Boolean).length).toBe(20 - organisationCap(20));
    expect(await counted('adyen#Shared#live', second, 1)).toBeLessThanOrEqual(20);
  });

  it('gives an organisation’s slot back when the shared count refuses it', async () => {
    limitTo(4);
    const second = now() + 40;
    for (let i = 0; i < 3; i++) expect(await takeProviderSlot('adyen', 'Small', false, second, A)).toBe(true);
    expect(await takeProviderSlot('adyen', 'Small', false, second, B)).toBe(true);
    // The shared second is used up: B is refused, and its own count keeps only what it was granted.
    forgetProviderSlots();
    expect(await takeProviderSlot('adyen', 'Small', false, second, B)).toBe(false);
    expect(await counted(`adyen#Small#live#org#${B}`, second, 1)).toBe(1);
  });

  it('gives every organisation at least one slot and never more than the limit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        (limit, share) => {
          const cap = organisationCap(limit, share);
          expect(cap).toBeGreaterThanOrEqual(1);
          expect(cap).toBeLessThanOrEqual(limit);
          expect(cap === 1 || cap <= limit * share).toBe(true);
        },
      ),
    );
    expect(organisationCap(22, DEFAULT_ORGANISATION_SHARE)).toBe(16);
  });

  it('takes no slot for a payment refused by validation', async () => {
    process.env.SVC_PROVIDER_RATE_LIMITS = JSON.stringify({ simulated: { live: 5, test: 5 } });
    await seedDemo();
    const token = await tokenFor(DEMO.client);
    const refused = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call('POST', '/payments', {
          token,
          body: {
            account_uuid: DEMO.account,
            payment_method: 'card',
            profile: i % 2 ? 'no-such-profile' : 'card',
            amount: { value: i % 2 ? '2500' : 'not money', currency: 'CHF' },
            payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2030, cvv: '123' },
          },
        }),
      ),
    );
    expect(refused.map((response) => response.status)).toEqual(Array(10).fill(400));
    const slots = await db().send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: 'begins_with(pk, :simulated)',
        ExpressionAttributeValues: { ':simulated': 'PROVIDER_RATE#simulated' },
      }),
    );
    expect(slots.Items ?? []).toEqual([]);
  });
});
