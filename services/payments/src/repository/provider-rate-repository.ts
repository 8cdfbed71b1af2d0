import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { now } from '@svc/core';
import { db, defineEntity, TTL_ATTRIBUTE, tableName } from '@svc/table';
import { limitOf, providerRateLimits } from '../providers/provider-rate-limits';

/**
 * A shared limiter of the requests we send a provider per second, per provider, account and
 * mode, so a peak stays under the limit the provider enforces instead of meeting its 429s. The
 * limits (stage configuration, run-time override, defaults) and the provider figures behind them
 * are in providers/provider-rate-limits.ts. The count of a second is split over shards (each
 * holding its share of the limit) so the counter is no hot key at thousands of requests per
 * second; items expire by TTL. Seconds are the service clock's (real time in a deployed stage;
 * tests move it).
 */
const MAX_SHARDS = 10;

/**
 * The most of a scope's limit one organisation may take in a second (issue 44): several
 * organisations share a provider account (the platform's Stripe account, a shared Adyen merchant
 * account), and one organisation's peak must not leave the others none. 75% keeps a quarter of
 * every second for the others while costing a lone organisation at its peak only a quarter of
 * the account's limit; an organisation with an account of its own can be given all of it by
 * setting SVC_PROVIDER_ORGANISATION_SHARE to 1. At least one slot a second, whatever the share.
 */
export const DEFAULT_ORGANISATION_SHARE = 0.75;

export function organisationCap(limit: number, share = organisationShare()): number {
  return Math.max(1, Math.floor(limit * share));
}

function organisationShare(): number {
  const configured = Number(process.env.SVC_PROVIDER_ORGANISATION_SHARE);
  return configured > 0 && configured <= 1 ? configured : DEFAULT_ORGANISATION_SHARE;
}

interface RateCount {
  scope: string;
  second: number;
  shard: number;
  count: number;
}

export const PROVIDER_RATE = defineEntity<RateCount, readonly [string, number, number]>({
  name: 'provider_rate',
  summary:
    'Requests sent to a provider in one second, per account and mode, on one shard of the limiter (TTL 2 minutes).',
  prefix: 'PROVIDER_RATE',
  idShown: '<provider>#<account>#<mode>#<unix second>#<shard>',
  sort: 'PROVIDER_RATE',
  id: (count) => [count.scope, count.second, count.shard] as const,
  idParts: ([scope, second, shard]) => [scope, String(second), String(shard)],
  byKey: 'a provider’s request count of a second (rate limiter)',
  storage: {
    toAttributes: ({ count }) => ({ count }),
    fromAttributes: (item) => {
      const parts = String(item.pk).split('#');
      return {
        scope: parts.slice(1, -2).join('#'),
        second: Number(parts.at(-2)),
        shard: Number(parts.at(-1)),
        count: item.count,
      };
    },
  },
  parse: (value) => value as RateCount,
});

/**
 * What this container holds of a scope's current second: slots taken in a block and not used
 * yet, and whether the shared count was found full (then no more writes are tried that second:
 * a refused conditional write still costs a write unit, and at a peak most would be refused).
 */
const local = new Map<string, { second: number; allowance: number; full: Set<number>; capped: Set<string> }>();

/** Forgets what this container holds (tests that play several containers). */
export function forgetProviderSlots(): void {
  local.clear();
}

/**
 * Whether one more request may go to the provider this second (a slot is taken when it may).
 * Slots are taken from the shared count in blocks of a quarter of a shard's share (at least one),
 * so a busy container writes once per few requests; the rest of a block unused at the second's
 * end is lost, which keeps us under the limit, never over it.
 */
export async function takeProviderSlot(
  provider: string,
  account: string | undefined,
  testMode: boolean,
  second = now(),
  organisation?: string,
): Promise<boolean> {
  const limit = limitOf(await providerRateLimits(), provider, account, testMode);
  if (limit === undefined) return true;
  const scope = `${provider}#${account ?? 'platform'}#${testMode ? 'test' : 'live'}`;
  let held = local.get(scope);
  if (held?.second !== second) {
    held = { second, allowance: 0, full: new Set(), capped: new Set() };
    local.set(scope, held);
  }
  // The organisation's own count first (counted before it is checked: one conditional write), so
  // an organisation past its share takes nothing of the others' room.
  if (organisation !== undefined) {
    if (held.capped.has(organisation)) return false;
    if (!(await take(`${scope}#org#${organisation}`, second, 0, organisationCap(limit), 1))) {
      // Seen full: no more writes for it this second (a refused write still costs a unit).
      held.capped.add(organisation);
      return false;
    }
  }
  // One slot at a time for an organisation's request: a block taken for it and left unused at the
  // second's end would be lost to the others too, defeating the share (it already writes once per
  // request for its own count, and a provider's limit is tens a second).
  const granted = await takeShared(scope, held, limit, second, organisation === undefined);
  // Refused by the shared count: the organisation's slot goes back, so its share counts only
  // what it was granted.
  if (!granted && organisation !== undefined) await give(`${scope}#org#${organisation}`, second);
  return granted;
}

async function takeShared(
  scope: string,
  held: { allowance: number; full: Set<number> },
  limit: number,
  second: number,
  inBlocks: boolean,
): Promise<boolean> {
  if (inBlocks && held.allowance > 0) {
    held.allowance -= 1;
    return true;
  }
  // One item takes 50 conditional writes a second easily; above that, shards of at least 10.
  const shards = limit <= 50 ? 1 : Math.min(MAX_SHARDS, Math.floor(limit / 10));
  const open = Array.from({ length: shards }, (_, shard) => shard).filter((shard) => !held.full.has(shard));
  const start = Math.floor(Math.random() * open.length);
  // Up to two shards not yet seen full are tried: one full shard among free ones refuses nothing.
  for (const shard of [open[start], open[(start + 1) % open.length]].filter(
    (s, i, all) => s !== undefined && all.indexOf(s) === i,
  )) {
    if (shard === undefined) continue;
    const share = Math.floor(limit / shards) + (shard < limit % shards ? 1 : 0);
    for (const block of inBlocks ? [...new Set([Math.max(1, Math.floor(share / 4)), 1])] : [1]) {
      if (await take(scope, second, shard, share, block)) {
        held.allowance += block - 1;
        return true;
      }
    }
    held.full.add(shard);
  }
  return false;
}

async function give(scope: string, second: number): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: PROVIDER_RATE.key([scope, second, 0]),
      UpdateExpression: 'ADD #count :minus',
      ConditionExpression: 'attribute_exists(#count)',
      ExpressionAttributeNames: { '#count': 'count' },
      ExpressionAttributeValues: { ':minus': -1 },
    }),
  );
}

async function take(scope: string, second: number, shard: number, share: number, block: number): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: PROVIDER_RATE.key([scope, second, shard]),
        UpdateExpression: 'ADD #count :block SET entity = :entity, #ttl = :expires',
        ConditionExpression: 'attribute_not_exists(#count) OR #count <= :room',
        ExpressionAttributeNames: { '#count': 'count', '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ':block': block,
          ':room': share - block,
          ':entity': 'provider_rate',
          ':expires': second + 120,
        },
      }),
    );
    return true;
  } catch (error) {
    if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
    return false;
  }
}
