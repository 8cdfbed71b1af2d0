import { randomInt } from 'node:crypto';
import { BatchGetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { MiddlewareObj } from '@middy/core';
import { logger, TooManyRequestsError } from '@svc/core';
import { db, key, tableName } from '@svc/table';
import { addressKey } from '../client-address';
import type { StackEvent, StackResult } from '../context';
import type { AddressLimit } from '../route';

/**
 * Per-caller limits, approximate by design (docs/API.md "Rate limits", docs/operations.md):
 * a caller over its limit gets 429 with `Retry-After`, and the limiter itself never writes one
 * item per request (a telethon's form backend is one client at thousands of requests a second).
 *
 * Each function instance counts what it admits per caller and second. At a caller's first
 * request in a new second it adds what it admitted in the second before to that second's shared
 * item (one UpdateItem ADD, with one to the item's count of instances), and reads the items of two
 * seconds ago, which every busy instance has added to by then (one BatchGetItem). If that second's
 * total is known, the instance may admit its share of the limit: the limit times its part of
 * that total (more than its part when the total was under the limit, less when over; an instance
 * that had no part gets the headroom or an even share). The shares add up to the limit, so across
 * instances a client is held near its limit two seconds after it passes it, and a client under
 * its limit is not refused. Per caller and instance: at most one write and one read a second,
 * whatever the request rate. Without the table (an error), an instance limits by the burst alone.
 *
 * The limits: `client` for authenticated routes (per client id; `perSecond/burst` in
 * SVC_CLIENT_RATE_LIMIT, off when unset), and one per address class for every route without a
 * token (ADDRESS_LIMITS below, always on). The stage's API Gateway throttle stays the hard
 * ceiling of the whole API.
 */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

export function parseRateLimit(text: string | undefined): RateLimit | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+)\s*$/.exec(text ?? '');
  if (!match) return undefined;
  const perSecond = Number(match[1]);
  const burst = Number(match[2]);
  return perSecond > 0 && burst >= 1 ? { perSecond, burst } : undefined;
}

/** How long a caller's per-second items are kept (DynamoDB TTL removes them). */
const WINDOW_ITEM_TTL_SECONDS = 3600;
/** Callers an instance keeps counts for; the oldest is forgotten past this. */
const MAX_CALLERS = 10_000;

/** What the instances together admitted of a caller in one second. */
export interface WindowTotal {
  admitted: number;
  instances: number;
}

/** The shared per-second items: the table's, or a test's. */
export interface SharedWindows {
  add(caller: string, second: number, admitted: number): Promise<void>;
  total(caller: string, second: number): Promise<WindowTotal>;
}

/**
 * A caller's second is split over WINDOW_SHARDS items, each container adding to the one its
 * random shard names, and read whole (one BatchGetItem of all of them). At a telethon a single
 * form client is served by hundreds of payments containers at once, each adding once a second:
 * in one item (and one partition key, 1,000 writes a second at most) that would be the hottest
 * key of the stage; spread over 8 keys of their own second, each takes about an eighth
 * (docs/load-model.md).
 */
export const WINDOW_SHARDS = 8;
const containerShard = randomInt(WINDOW_SHARDS);
const windowKey = (caller: string, second: number, shard: number) => ({
  pk: key('RATE_LIMIT', caller, second, shard),
  sk: 'WINDOW',
});

export const tableWindows: SharedWindows = {
  add: async (caller, second, admitted) => {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: windowKey(caller, second, containerShard),
        UpdateExpression: 'ADD admitted :admitted, instances :one SET #ttl = if_not_exists(#ttl, :ttl)',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':admitted': admitted, ':one': 1, ':ttl': second + WINDOW_ITEM_TTL_SECONDS },
      }),
    );
  },
  total: async (caller, second) => {
    // Its own call, eventually consistent (half the read units; the second read is two seconds
    // old): never batched with the request's own reads, so its trouble stays the limiter's.
    const out = await db().send(
      new BatchGetCommand({
        RequestItems: {
          [tableName()]: {
            Keys: Array.from({ length: WINDOW_SHARDS }, (_, shard) => windowKey(caller, second, shard)),
          },
        },
      }),
    );
    const items = out.Responses?.[tableName()] ?? [];
    return items.reduce<WindowTotal>(
      (sum, item) => ({
        admitted: sum.admitted + Number(item?.admitted ?? 0),
        instances: sum.instances + Number(item?.instances ?? 0),
      }),
      { admitted: 0, instances: 0 },
    );
  },
};

interface CallerState {
  /** The second (Unix) `admitted` counts in, and what this instance may admit in it. */
  second: number;
  admitted: number;
  allowance: number;
  /** What this instance admitted in the seconds before, by second (the last two). */
  history: Map<number, number>;
}

export class RateLimiter {
  private readonly callers = new Map<string, CallerState>();

  constructor(
    private readonly limit: RateLimit,
    private readonly windows: SharedWindows = tableWindows,
    /** Unix seconds, fractional. An operational throttle: real time, not the service clock. */
    private readonly clock: () => number = () => Date.now() / 1000,
  ) {}

  /** Admits one request of `caller`, or throws TooManyRequestsError. */
  async admit(caller: string): Promise<void> {
    const now = this.clock();
    const second = Math.floor(now);
    const state = this.stateOf(caller, second);
    if (state.second !== second) await this.startSecond(caller, state, second);
    if (state.admitted >= state.allowance) {
      throw new TooManyRequestsError(
        `Too many requests: the limit is ${this.limit.perSecond} a second, in bursts of up to ${this.limit.burst}`,
        Math.max(1, Math.ceil(second + 1 - now)),
      );
    }
    state.admitted += 1;
  }

  /** The first request of a new second: share the second before, learn the one before that. */
  private async startSecond(caller: string, state: CallerState, second: number): Promise<void> {
    if (state.admitted > 0) state.history.set(state.second, state.admitted);
    for (const past of state.history.keys()) if (past < second - 2) state.history.delete(past);
    const previous = state.history.get(second - 1) ?? 0;
    const mine = state.history.get(second - 2) ?? 0;
    state.second = second;
    state.admitted = 0;
    state.allowance = this.limit.burst;
    try {
      const [, total] = await Promise.all([
        previous > 0 ? this.windows.add(caller, second - 1, previous) : undefined,
        this.windows.total(caller, second - 2),
      ]);
      state.allowance = this.allowance(total, mine);
    } catch (error) {
      // The limiter never fails a request: without the table it limits by the burst alone.
      logger.warn('Rate limit totals not shared', { caller, error: error as Error });
    }
  }

  /**
   * What this instance may admit this second, from the total of two seconds ago and its own part
   * of it: nothing known, the burst; else its share of the limit, the limit times its part of
   * that total (more than its part when the total was under the limit, so a client under its
   * limit is not refused; less when over); an instance that had no part gets the headroom, or
   * the limit divided among the instances that had one. Rounded up: the shares of N instances add
   * up to at most the limit plus N.
   */
  private allowance(total: WindowTotal, mine: number): number {
    const { perSecond, burst } = this.limit;
    if (total.admitted <= 0) return burst;
    const allowed =
      mine > 0
        ? (perSecond * mine) / total.admitted
        : Math.max(perSecond - total.admitted, perSecond / Math.max(1, total.instances));
    return Math.min(burst, Math.max(1, Math.ceil(allowed)));
  }

  private stateOf(caller: string, second: number): CallerState {
    let state = this.callers.get(caller);
    if (state) {
      // Most recently used last, so the first entry is the one to forget.
      this.callers.delete(caller);
    } else {
      state = { second: second - 1, admitted: 0, allowance: this.limit.burst, history: new Map() };
      if (this.callers.size >= MAX_CALLERS) {
        const oldest = this.callers.keys().next().value;
        if (oldest !== undefined) this.callers.delete(oldest);
      }
    }
    this.callers.set(caller, state);
    return state;
  }
}

/**
 * The per-address limits of the routes without a bearer token, by class (route.ts AddressLimit):
 * requests a second and the burst an instance admits within one. Each is on by default, also
 * in the local runtime, and set per stage by its variable (`<per second>/<burst>`, e.g. `5/10`);
 * a value that does not parse keeps the default, so a typo cannot switch a limit off. The
 * defaults are generous for a person or a form backend and far below what a script guessing
 * secrets needs; docs/API.md "Rate limits" states them. Provider callbacks come from a
 * provider's few sending addresses (Stripe publishes about a dozen for webhooks,
 * https://docs.stripe.com/ips#webhook-notifications), so at a telethon's peak
 * (docs/load-model.md) one address may carry hundreds of events a second: their limit only
 * bounds a flood, and a provider refused retries later.
 */
export const ADDRESS_LIMITS: Record<AddressLimit, { variable: string; defaults: RateLimit }> = {
  credentials: { variable: 'SVC_CREDENTIALS_RATE_LIMIT', defaults: { perSecond: 10, burst: 30 } },
  address: { variable: 'SVC_ADDRESS_RATE_LIMIT', defaults: { perSecond: 20, burst: 60 } },
  'provider-callback': { variable: 'SVC_PROVIDER_CALLBACK_RATE_LIMIT', defaults: { perSecond: 1000, burst: 3000 } },
  'public-read': { variable: 'SVC_PUBLIC_READ_RATE_LIMIT', defaults: { perSecond: 50, burst: 150 } },
};

const LIMIT_CLASSES = Object.keys(ADDRESS_LIMITS) as AddressLimit[];

/** The limit of a class now: its variable when it parses, else its default. */
export function addressLimit(limit: AddressLimit): RateLimit {
  const { variable, defaults } = ADDRESS_LIMITS[limit];
  return parseRateLimit(process.env[variable]) ?? defaults;
}

/**
 * Health, the API description and static assets are limited per instance only: each instance
 * admits the burst a second per address and shares nothing, so these routes write nothing to the
 * table (their function, the platform's, has no table access) and cost nothing per request.
 */
const instanceOnly: SharedWindows = {
  add: async () => {},
  total: async () => ({ admitted: 0, instances: 0 }),
};

let limiters: { env: string; client?: RateLimiter; address: Map<AddressLimit, RateLimiter> } | undefined;

/** The instance's limiters, made again when their configuration changes (tests set it). */
function limitersNow() {
  const env = [process.env.SVC_CLIENT_RATE_LIMIT, ...LIMIT_CLASSES.map((c) => process.env[ADDRESS_LIMITS[c].variable])]
    .map((value) => value ?? '')
    .join('|');
  if (limiters?.env !== env) {
    const client = parseRateLimit(process.env.SVC_CLIENT_RATE_LIMIT);
    limiters = {
      env,
      ...(client ? { client: new RateLimiter(client) } : {}),
      address: new Map(
        LIMIT_CLASSES.map((c) => [
          c,
          new RateLimiter(addressLimit(c), c === 'public-read' ? instanceOnly : tableWindows),
        ]),
      ),
    };
  }
  return limiters;
}

/**
 * After authentication: a route without a token by its caller's address (an IPv6 address by its
 * /64, client-address.ts), under its class's own key; authenticated routes by client.
 */
export function rateLimit(): MiddlewareObj<StackEvent, StackResult> {
  return {
    before: async (request) => {
      const { svc } = request.event;
      const { client, address } = limitersNow();
      const { route } = svc;
      if (route.auth === 'none') {
        await address.get(route.limit)?.admit(`${route.limit}:${addressKey(svc.sourceIp)}`);
      } else if (svc.clientId !== undefined) {
        await client?.admit(`client:${svc.clientId}`);
      }
    },
  };
}
