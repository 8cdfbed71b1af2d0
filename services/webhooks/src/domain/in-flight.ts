import { logger } from '@svc/core';
import { addInFlight, type InFlightKey } from '../repository/pace-repository';
import type { DeliveryRecord } from '../repository/webhook-repository';

/**
 * Deliveries in flight per endpoint and per organisation (issue 44: no tenant slows another's
 * webhooks). A delivery worker invocation waits for its batch's slowest send (up to the 10 s a
 * receiver has), so an organisation whose endpoints hang could hold every invocation of the
 * shared worker at once. Before a batch's deliveries are claimed, they take places in flight for
 * their endpoints, then for their organisations, counted in the table, and give them back when
 * the batch's sends are over (the invocation is held until then too). A delivery without room
 * is written back due IN_FLIGHT_WAIT_SECONDS later, unclaimed (no attempt used, its order kept),
 * and is tried again by the sweeper. So one organisation has at most its cap of sends in flight, and holds at most that
 * many invocations of the worker, whose concurrency is kept well above it
 * (infra/constructs/events.ts): the other organisations always find invocations free.
 *
 * Counted before checked: one ADD per endpoint and per organisation of a batch asks for all of
 * its deliveries there and answers the count before; the places that fit under the cap are
 * taken, the rest given back at once (one more ADD), so racing workers never hold more than the
 * cap between them (each ADD sees every earlier ask). A count lives in its minute's item (the key
 * holds the minute): a worker that dies holding places leaks them for that minute only, and
 * sends started in the minute before are not counted in the next, so for the seconds after
 * each minute turns an endpoint or organisation can have up to twice its cap in flight. A busy
 * count is no hot key: what one holds is capped, so its writes are at most a few per batch.
 */
/**
 * 50 each: a receiver answering in 200 ms at the default pace (50 a second) has about 10 in
 * flight, one at the highest pace (500) about 100, and a worker invocation sends up to ten at once;
 * the caps hold hanging receivers, not working ones (sends of one batch to one endpoint are many).
 */
export const DEFAULT_IN_FLIGHT_PER_ENDPOINT = 50;
/**
 * How long a delivery without room waits: an attempt's bound (10 s), by when every place held now
 * has come free. Sooner would only bring the backlog of a hanging organisation round again and
 * again (a sweep, a queue message and a write each time) while its places are still held.
 */
export const IN_FLIGHT_WAIT_SECONDS = 10;
export const DEFAULT_IN_FLIGHT_PER_ORGANISATION = 50;
const WINDOW_SECONDS = 60;
/** Counts are kept an hour past their minute (TTL). */
const KEEP_SECONDS = 3600;

function configured(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value >= 1 ? value : fallback;
}

/** The caps in force (SVC_WEBHOOK_IN_FLIGHT_PER_ENDPOINT / _PER_ORGANISATION override the defaults). */
export function inFlightCaps(): { endpoint: number; organisation: number } {
  return {
    endpoint: configured('SVC_WEBHOOK_IN_FLIGHT_PER_ENDPOINT', DEFAULT_IN_FLIGHT_PER_ENDPOINT),
    organisation: configured('SVC_WEBHOOK_IN_FLIGHT_PER_ORGANISATION', DEFAULT_IN_FLIGHT_PER_ORGANISATION),
  };
}

type Delivery = Pick<DeliveryRecord, 'uuid' | 'endpoint_uuid' | 'organisation_uuid'>;

/** The places a batch took: which of its deliveries may be sent, and how to give the places back. */
export interface InFlight {
  /** Indexes (into the deliveries asked for) that have their places. */
  granted: ReadonlySet<number>;
  /** Gives every place taken back (once; never throws: a place not given back ends with its minute). */
  release(): Promise<void>;
}

function groupBy(indexes: readonly number[], keyOf: (index: number) => string): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  for (const index of indexes) {
    const key = keyOf(index);
    groups.set(key, [...(groups.get(key) ?? []), index]);
  }
  return groups;
}

/**
 * Takes places in flight for a batch's deliveries (in the order given: the first of each endpoint
 * first), by their endpoints' caps, then their organisations'.
 */
export async function takeInFlight(deliveries: readonly Delivery[], at: number): Promise<InFlight> {
  const caps = inFlightCaps();
  const window = Math.floor(at / WINDOW_SECONDS);
  const ttl = (window + 1) * WINDOW_SECONDS + KEEP_SECONDS;
  const keyOf = (scope: string): InFlightKey => [scope, window];
  /** Places held, by scope (endpoint or organisation uuid). */
  const held = new Map<string, number>();
  const give = async (scope: string, count: number) => {
    if (count > 0) await addInFlight(keyOf(scope), -count, ttl);
  };
  /** Asks for the group's places in one ADD; answers the indexes that fit (the rest given back). */
  const ask = async (scope: string, group: number[], cap: number): Promise<number[]> => {
    const before = await addInFlight(keyOf(scope), group.length, ttl);
    const fit = Math.max(0, Math.min(group.length, cap - before));
    held.set(scope, fit);
    return group.slice(0, fit);
  };
  const release = async () => {
    const taken = [...held];
    held.clear();
    await Promise.all(taken.map(([scope, count]) => give(scope, count))).catch((error: unknown) =>
      logger.warn('Places in flight not given back (they end with their minute)', { error }),
    );
  };
  try {
    const all = deliveries.map((_, index) => index);
    const endpoints = groupBy(all, (index) => (deliveries[index] as Delivery).endpoint_uuid);
    const byEndpoint = await Promise.all(
      [...endpoints].map(async ([endpoint, group]) => {
        const fit = await ask(endpoint, group, caps.endpoint);
        await give(endpoint, group.length - fit.length);
        return fit;
      }),
    );
    const organisations = groupBy(byEndpoint.flat(), (index) => (deliveries[index] as Delivery).organisation_uuid);
    const granted = new Set<number>();
    await Promise.all(
      [...organisations].map(async ([organisation, group]) => {
        const fit = await ask(organisation, group, caps.organisation);
        await give(organisation, group.length - fit.length);
        for (const index of fit) granted.add(index);
        // What its organisation had no room for gives its endpoint's place back.
        const refused = groupBy(
          group.filter((index) => !granted.has(index)),
          (index) => (deliveries[index] as Delivery).endpoint_uuid,
        );
        for (const [endpoint, indexes] of refused) {
          held.set(endpoint, (held.get(endpoint) ?? 0) - indexes.length);
          await give(endpoint, indexes.length);
        }
      }),
    );
    return { granted, release };
  } catch (error) {
    await release();
    throw error;
  }
}
