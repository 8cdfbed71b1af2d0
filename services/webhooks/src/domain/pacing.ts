import { definedFields, logger, now } from '@svc/core';
import type { PostResult } from '@svc/outbound';
import { isConditionFailure, StaleVersionError, transactWrite, versioned } from '@svc/table';
import type { DeliveryMessage } from '../pipeline/queue';
import { pausedUntil, pauseEndpoint, takeSlots } from '../repository/pace-repository';
import {
  type DeliveryRecord,
  deliveryPut,
  type EndpointRecord,
  findDelivery,
  findEndpoint,
} from '../repository/webhook-repository';

/**
 * Pacing (contract section 11, docs/API.md "Webhook pacing"): an endpoint receives at most its
 * `max_deliveries_per_second` (default 50, at most 500) by the service clock. The rest wait in the
 * table's due index, in order, each with a reserved later second, and are delivered then: never
 * failed or dropped for being many, and none of the waiting counts as an attempt. A 429, or a 503
 * with Retry-After, pauses the endpoint until then (5 s for a 429 without it, an hour at most);
 * the attempt it answered waits for the pause and does not count as a failed attempt.
 *
 * The delivery worker paces a batch before claiming it (attemptDeliveries):
 * - a delivery holding a reservation for this second is sent on it;
 * - the others of each endpoint (a late reservation among them: the queue's delay is not exact)
 *   take what is left of this second's rate, oldest event first (one UpdateItem per endpoint and
 *   batch), so no second sends more than the rate;
 * - the rest reserve later seconds (one UpdateItem per second reserved in, starting at the first
 *   second this container last found with room) and are written back due then.
 *
 * The pace of a second is its own item (`WEBHOOK_PACE#<endpoint>#<second>`), so the counter is
 * no hot key: at most the endpoint's batches of one second go to it.
 */
export const DEFAULT_DELIVERIES_PER_SECOND = 50;
export const MAX_DELIVERIES_PER_SECOND = 500;
/** A 429 without Retry-After pauses the endpoint this long. */
export const DEFAULT_PAUSE_SECONDS = 5;
/** The longest pause an endpoint can ask for. */
export const MAX_PAUSE_SECONDS = 3600;
/** A container trusts its read of an endpoint's pause this long. */
const PAUSE_MEMO_SECONDS = 1;
/**
 * Throttled attempts (429/503 asking to wait) a delivery gets before it fails like any other: a
 * receiver that asks to wait for ever is not tried for ever (issue 44).
 */
export const MAX_THROTTLED_ATTEMPTS = 50;
/** The longest wait the growing floor imposes between two throttled attempts. */
export const MAX_THROTTLE_FLOOR_SECONDS = 3600;

/**
 * The least a delivery waits after its n-th throttled answer (n from 1): 1 s, 2 s, 4 s … an hour
 * at most. Retry-After is honoured when longer (RFC 9110 section 10.2.3 says how long the client
 * ought to wait at least, not that it may come back at once), so a receiver answering
 * `Retry-After: 1` forever is tried 12 times in its first 68 minutes, then hourly, and at most
 * MAX_THROTTLED_ATTEMPTS times (about 1.6 days) in all.
 */
export function throttleFloorSeconds(throttledSoFar: number): number {
  return Math.min(MAX_THROTTLE_FLOOR_SECONDS, 2 ** Math.max(0, throttledSoFar));
}

/** When a delivery answered "wait" for the n-th time goes again: the later of the ask and the floor. */
export function nextThrottledAttempt(asked: number, at: number, throttledSoFar: number): number {
  return Math.max(asked, at + throttleFloorSeconds(throttledSoFar));
}
/** Seconds probed for room per reservation, before the rest wait unreserved. */
const MAX_PROBES = 40;

export function rateOf(endpoint: Pick<EndpointRecord, 'max_deliveries_per_second'> | undefined): number {
  return endpoint?.max_deliveries_per_second ?? DEFAULT_DELIVERIES_PER_SECOND;
}

/**
 * Until when the endpoint's answer asks us to wait, if it does: a 429, or a 503 with Retry-After
 * (RFC 9110 section 10.2.3: seconds, or an HTTP date). Undefined for any other answer.
 */
export function pauseAskedBy(result: PostResult | undefined, at: number): number | undefined {
  const status = result?.statusCode;
  const header = result?.responseHeaders['retry-after'];
  if (status !== 429 && !(status === 503 && header !== undefined)) return undefined;
  let seconds = DEFAULT_PAUSE_SECONDS;
  if (header !== undefined) {
    const trimmed = header.trim();
    if (/^\d+$/.test(trimmed)) seconds = Number(trimmed);
    else {
      const date = Date.parse(trimmed);
      if (!Number.isNaN(date)) seconds = Math.ceil(date / 1000 - Date.now() / 1000);
    }
  }
  return at + Math.min(MAX_PAUSE_SECONDS, Math.max(1, seconds));
}

/** What this container knows of each endpoint: its pause, and the first second seen with room. */
const known = new Map<string, { pause: number; pauseReadAt: number; frontier: number }>();

function knownOf(endpointUuid: string) {
  let state = known.get(endpointUuid);
  if (!state) {
    state = { pause: 0, pauseReadAt: Number.NEGATIVE_INFINITY, frontier: 0 };
    known.set(endpointUuid, state);
  }
  return state;
}

/** For tests: what containers remember of endpoints is forgotten. */
export function forgetPacing(): void {
  known.clear();
}

/** Records a pause the endpoint asked for (shared through the table, and kept here at once). */
export async function pauseFor(endpointUuid: string, until: number): Promise<void> {
  const state = knownOf(endpointUuid);
  state.pause = Math.max(state.pause, until);
  await pauseEndpoint(endpointUuid, until);
}

async function currentPause(endpointUuid: string, at: number): Promise<number> {
  const state = knownOf(endpointUuid);
  if (at - state.pauseReadAt >= PAUSE_MEMO_SECONDS) {
    state.pause = Math.max(state.pause, await pausedUntil(endpointUuid));
    state.pauseReadAt = at;
  }
  return state.pause;
}

/** A delivery held back: written due at `until`, with the second reserved for it (if any). */
export interface Deferral {
  delivery: DeliveryRecord;
  /** Not yet in the table: a first attempt carried in its message. */
  fresh: boolean;
  until: number;
  reserved: boolean;
}

interface Candidate {
  index: number;
  delivery: DeliveryRecord;
  fresh: boolean;
}

/** Oldest event first; an object's events in their order. */
const byEvent = (a: Candidate, b: Candidate) =>
  a.delivery.event.created - b.delivery.event.created ||
  a.delivery.event.sequence - b.delivery.event.sequence ||
  (a.delivery.uuid < b.delivery.uuid ? -1 : a.delivery.uuid > b.delivery.uuid ? 1 : 0);

/** Whether the claim would start an attempt now (else pacing leaves it to the claim to decide). */
function startsAttempt(delivery: DeliveryRecord, at: number): boolean {
  if (delivery.status !== 'pending') return false;
  if ((delivery.lease_until ?? 0) > at) return false;
  return (delivery.next_attempt_at ?? 0) <= at;
}

/**
 * Which of a batch's messages are held back (by index). Each message's delivery is the one it
 * carries, or the stored one it names; `indexes` are the messages to pace (the first of each
 * delivery). Everything else goes on to its claim, which decides as before.
 */
export async function paceMessages(
  messages: readonly DeliveryMessage[],
  indexes: readonly number[],
  /** Filled with each message's delivery that would start an attempt now, as read (by index). */
  seen?: Map<number, { delivery: DeliveryRecord; fresh: boolean }>,
): Promise<Map<number, Deferral | PacingFailed>> {
  const at = now();
  const outcome = new Map<number, Deferral | PacingFailed>();
  const candidates = await Promise.all(
    indexes.map(async (index): Promise<Candidate | undefined> => {
      const message = messages[index] as DeliveryMessage;
      if (message.delivery) return { index, delivery: message.delivery, fresh: true };
      try {
        const stored = await findDelivery(message.delivery_uuid);
        return stored && startsAttempt(stored, at) ? { index, delivery: stored, fresh: false } : undefined;
      } catch (error) {
        outcome.set(index, new PacingFailed(error));
        return undefined;
      }
    }),
  );
  const byEndpoint = new Map<string, Candidate[]>();
  for (const candidate of candidates) {
    if (!candidate) continue;
    seen?.set(candidate.index, { delivery: candidate.delivery, fresh: candidate.fresh });
    const group = byEndpoint.get(candidate.delivery.endpoint_uuid) ?? [];
    group.push(candidate);
    byEndpoint.set(candidate.delivery.endpoint_uuid, group);
  }
  // One endpoint's trouble (its pace item throttled, say) fails its own messages only: they come
  // back from the queue, and the batch's others go on.
  await Promise.all(
    [...byEndpoint].map(async ([endpointUuid, group]) => {
      try {
        for (const [index, deferral] of await paceEndpoint(endpointUuid, group.sort(byEvent), at)) {
          outcome.set(index, deferral);
        }
      } catch (error) {
        for (const candidate of group) outcome.set(candidate.index, new PacingFailed(error));
      }
    }),
  );
  return outcome;
}

/** A message its endpoint's pace could not be decided for: it fails alone (the queue sends it again). */
export class PacingFailed extends Error {
  constructor(readonly reason: unknown) {
    super(`The endpoint's pace could not be read: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
}

async function paceEndpoint(endpointUuid: string, group: Candidate[], at: number): Promise<Map<number, Deferral>> {
  const deferred = new Map<number, Deferral>();
  const hold = (candidate: Candidate, until: number, reserved: boolean) =>
    deferred.set(candidate.index, { delivery: candidate.delivery, fresh: candidate.fresh, until, reserved });
  const endpoint = await findEndpoint(endpointUuid);
  // A deleted endpoint: its claims record that, as before; nothing is sent to pace.
  if (!endpoint) return deferred;
  const rate = rateOf(endpoint);
  const pause = await currentPause(endpointUuid, at);
  if (pause > at) {
    for (const candidate of group) hold(candidate, pause, false);
    return deferred;
  }
  const asking: Candidate[] = [];
  for (const candidate of group) {
    const reservedFor = candidate.delivery.paced_for;
    if (reservedFor !== undefined && reservedFor > at) hold(candidate, reservedFor, true);
    // Late for its second (the queue or the sweep was slow): it asks again with the others,
    // ahead of newer events (the group is in event order), so the backlog keeps its order.
    else if (reservedFor !== at) asking.push(candidate);
    // Otherwise it holds a reservation for this very second: sent on it.
  }
  if (asking.length === 0) return deferred;
  const state = knownOf(endpointUuid);
  // What this second has left beside its reservations (counted in the same item).
  const granted = await takeSlots(endpointUuid, at, asking.length, rate);
  const waiting = asking.slice(granted);
  if (waiting.length === 0) return deferred;
  // The rest reserve later seconds, in order, from the first this container last found with room.
  let second = Math.max(at + 1, state.frontier);
  let next = 0;
  for (let probe = 0; probe < MAX_PROBES && next < waiting.length; probe++) {
    const count = Math.min(rate, waiting.length - next);
    const reserved = await takeSlots(endpointUuid, second, count, rate);
    for (const candidate of waiting.slice(next, next + reserved)) hold(candidate, second, true);
    next += reserved;
    // A second that gave less than asked is full; one that gave all may have room for the next.
    if (reserved < count) second += 1;
  }
  state.frontier = second;
  // Beyond the probes: they wait unreserved, and ask again when that second comes.
  for (const candidate of waiting.slice(next)) hold(candidate, second, false);
  return deferred;
}

/**
 * Writes a held-back delivery due at its second: a fresh one only if absent, a stored one only at
 * the version read. False when it was not written: a fresh one already stored (its message came
 * back, or a copy did) is then claimed as any other, which keeps an attempt in flight to its own
 * message; a stored one that changed meanwhile is its changer's.
 */
export async function deferDelivery(deferral: Deferral): Promise<boolean> {
  const { delivery, until, reserved } = deferral;
  const at = now();
  const next: DeliveryRecord = {
    ...delivery,
    next_attempt_at: until,
    updated: at,
    ...definedFields({ paced_for: reserved ? until : undefined }),
    version: deferral.fresh ? 1 : delivery.version + 1,
  };
  if (!reserved) delete next.paced_for;
  delete next.queued_until;
  delete next.held_by_message;
  try {
    if (deferral.fresh) await transactWrite([{ item: deliveryPut(next) }]);
    else await transactWrite([versioned(deliveryPut(next, delivery.version))]);
    return true;
  } catch (error) {
    if (!isConditionFailure(error) && !(error instanceof StaleVersionError)) throw error;
    logger.info('A paced delivery is written already, or changed meanwhile', { delivery: delivery.uuid });
    return false;
  }
}
