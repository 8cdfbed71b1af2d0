import { createHmac } from 'node:crypto';
import { definedFields, derivedUuid, isResumedRequest, newResourceUuid, now } from '@svc/core';
import { matchesFilter, parseFilter } from '@svc/filter';
import { isConditionFailure, retryOnConflict, transactWrite, versioned } from '@svc/table';
import { type DeliveryMessage, INLINE_DELIVERY_MAX_BYTES } from '../pipeline/queue';
import { open } from '../repository/secrets';
import {
  type DeliveryRecord,
  deliveryPut,
  type EndpointRecord,
  type Envelope,
  type EventSubscriptionRecord,
  findDelivery,
  findEndpoint,
  findResponse,
  type ResponseRecord,
  responsePut,
  subscribersOf,
} from '../repository/webhook-repository';

/**
 * Fan-out and claims (sending and settling a claimed attempt: delivery-attempt.ts).
 *
 * Fan-out turns one event into one delivery per endpoint whose subscriptions match it, sent to
 * the delivery queue in its message. A delivery's uuid is derived from the event and the endpoint,
 * and the first claim writes it only if absent, so an event published or fanned out twice is
 * delivered once.
 *
 * An attempt is claimed before it is sent (attempt number + 1 and a short lease, one conditional
 * write; for a first attempt that write creates the delivery). Once sent, its Webhook Response is
 * written and the delivery settled: delivered, gone (410), failed, or scheduled for the next
 * attempt on the published back-off. A worker that dies after sending leaves the claim; once its
 * lease lapses the sweeper finds it in the due index and the next worker sends the same event
 * again as the next attempt (at-least-once; receivers de-duplicate on `X-Svc-Event-Uuid`), logging
 * the lost attempt as one with no recorded outcome. Until its first claim a delivery lives in the
 * queue only, with the queue's retries and dead-letter queue behind it, as the event did in the
 * fan-out queue before it.
 *
 * A first attempt carried in its message is held by that message: the queue keeps it in flight
 * until the worker is done, so its claim needs no due entry (a worker that stops leaves the
 * message to come back), and an attempt that ends the delivery is recorded by its Webhook
 * Response alone: the claim is not rewritten. Whoever claims such a delivery again (its message
 * back, or a duplicate) reads that response first and settles the delivery from it. Two writes
 * per delivered event instead of three.
 */
export const RETRY_DELAYS_SECONDS = [60, 300, 900, 3600, 10_800, 21_600, 43_200, 86_400, 86_400] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;
export const ATTEMPT_LEASE_SECONDS = 60;
/** How long a queued delivery is left to its queue message before the sweeper sends another. */
export const QUEUED_GRACE_SECONDS = 300;
/** Request and response bodies and headers are kept up to this many characters in a Webhook Response. */
export const RECORD_LIMIT = 16_384;
/** Webhook Responses are kept this long (DynamoDB TTL). */
export const RESPONSE_RETENTION_SECONDS = 30 * 86_400;
export const LOST_ATTEMPT = 'No outcome was recorded: the delivery worker stopped during this attempt';

/**
 * A delivery held by another message's attempt still in flight: this message is not acknowledged
 * (the queue sends it again later, when that attempt has ended or its worker is known to have
 * stopped), since the held claim has no due entry to fall back on.
 */
export class AttemptInFlightError extends Error {
  /** The message comes back later: logged as information, not as an error. */
  readonly expected = true;
  constructor(uuid: string) {
    super(`Delivery ${uuid} has an attempt in flight held by another queue message`);
  }
}

function wants(subscription: EventSubscriptionRecord, event: Envelope): boolean {
  if (!subscription.enabled) return false;
  if (subscription.account_uuid !== undefined && subscription.account_uuid !== event.account_uuid) return false;
  if (subscription.filter === undefined) return true;
  const parsed = parseFilter(subscription.filter);
  return parsed.ok && matchesFilter(parsed.filter, { event });
}

type Subscribers = (organisationUuid: string, eventName: string) => Promise<EventSubscriptionRecord[]>;

/**
 * The deliveries a batch of events needs, event by event (what one event's failure leaves
 * undone, the others still do): each organisation's subscriptions to each name are read once
 * for the batch, and the endpoints' reads of all its events go out together (the table client
 * coalesces them).
 */
export function fanOutAll(events: readonly Envelope[]): Promise<Array<PromiseSettledResult<DeliveryMessage[]>>> {
  const read = new Map<string, Promise<EventSubscriptionRecord[]>>();
  const subscribers: Subscribers = (organisationUuid, eventName) => {
    const id = `${organisationUuid}\u0000${eventName}`;
    let found = read.get(id);
    if (!found) {
      found = subscribersOf(organisationUuid, eventName);
      read.set(id, found);
    }
    return found;
  };
  return Promise.allSettled(events.map((event) => fanOut(event, subscribers)));
}

/**
 * The delivery queue's messages for an event: one per endpoint whose subscriptions match it.
 * A delivery travels in its message and is written by its first claim (one write instead of two;
 * see claimFirstAttempt). One too large to carry is written here, as due, and its message names
 * it; if it is already written (the event was fanned out before), it has its message already, or
 * the sweeper sends one.
 */
export async function fanOut(event: Envelope, subscribers: Subscribers = subscribersOf): Promise<DeliveryMessage[]> {
  const matching = (await subscribers(event.organisation_uuid, event.name)).filter((s) => wants(s, event));
  const endpoints = [...new Set(matching.map((s) => s.action_configuration_uuid))];
  const at = now();
  const messages = await Promise.all(
    endpoints.map(async (endpointUuid): Promise<DeliveryMessage | undefined> => {
      const endpoint = await findEndpoint(endpointUuid);
      if (!endpoint) return undefined;
      const delivery = newDelivery(
        {
          uuid: derivedUuid('delivery', event.uuid, endpointUuid),
          organisation_uuid: event.organisation_uuid,
          account_uuid: event.account_uuid,
          endpoint_uuid: endpointUuid,
          endpoint_account_uuid: endpoint.account_uuid,
          event,
        },
        at,
      );
      const carried: DeliveryMessage = { delivery_uuid: delivery.uuid, delivery };
      if (Buffer.byteLength(JSON.stringify(carried)) <= INLINE_DELIVERY_MAX_BYTES) return carried;
      try {
        await transactWrite([{ item: deliveryPut(delivery) }]);
        return { delivery_uuid: delivery.uuid };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        return undefined;
      }
    }),
  );
  return messages.filter((message): message is DeliveryMessage => message !== undefined);
}

/**
 * Marks due deliveries as queued (the sweeper sends them right after): each is re-read and
 * written guarded by its version, so one claimed meanwhile is left out. Returns those marked.
 */
export async function markQueued(
  uuids: readonly string[],
  /** Told of each delivery marked, as it was read (the sweeper's backlog figures). */
  onMarked?: (read: DeliveryRecord) => void,
): Promise<string[]> {
  const at = now();
  const marked = await Promise.all(
    uuids.map(async (uuid) => {
      const read = await findDelivery(uuid);
      // One whose claim still holds is its worker's alone (see attemptDeliveries).
      if (read?.status !== 'pending' || (read.lease_until ?? 0) > at) return undefined;
      // One the sweep looked ahead for waits in the queue's delay until its second first.
      const due = Math.max(at, read.next_attempt_at ?? 0, read.lease_until ?? 0);
      const next: DeliveryRecord = {
        ...read,
        queued_until: due + QUEUED_GRACE_SECONDS,
        updated: at,
        version: read.version + 1,
      };
      try {
        await transactWrite([{ item: deliveryPut(next, read.version) }]);
        onMarked?.(read);
        return uuid;
      } catch (error) {
        if (isConditionFailure(error)) return undefined;
        throw error;
      }
    }),
  );
  return marked.filter((uuid): uuid is string => uuid !== undefined);
}

/** A new delivery of a recorded attempt's event to its endpoint (redeliver: 202). */
export async function redeliver(response: ResponseRecord): Promise<string> {
  const uuid = newResourceUuid('webhook_delivery');
  // A re-run of a request that died after writing the delivery returns that delivery.
  if (isResumedRequest() && (await findDelivery(uuid))) return uuid;
  const original = await findDelivery(response.delivery_uuid);
  if (!original) throw new Error(`Delivery ${response.delivery_uuid} is gone`);
  const delivery = newDelivery(
    {
      uuid,
      organisation_uuid: original.organisation_uuid,
      account_uuid: original.account_uuid,
      endpoint_uuid: original.endpoint_uuid,
      endpoint_account_uuid: original.endpoint_account_uuid,
      event: original.event,
    },
    now(),
  );
  await transactWrite([{ item: deliveryPut(delivery) }]);
  return delivery.uuid;
}

/**
 * A delivery not yet attempted, due now and counted as sent to the queue (the sweeper, only the
 * safety net, leaves it alone for QUEUED_GRACE_SECONDS).
 */
function newDelivery(
  of: {
    uuid: string;
    organisation_uuid: string;
    account_uuid: string | undefined;
    endpoint_uuid: string;
    endpoint_account_uuid: string | undefined;
    event: DeliveryRecord['event'];
  },
  at: number,
): DeliveryRecord {
  return {
    uuid: of.uuid,
    organisation_uuid: of.organisation_uuid,
    ...definedFields({ account_uuid: of.account_uuid }),
    endpoint_uuid: of.endpoint_uuid,
    ...definedFields({ endpoint_account_uuid: of.endpoint_account_uuid }),
    event: of.event,
    attempts: 0,
    status: 'pending',
    next_attempt_at: at,
    queued_until: at + QUEUED_GRACE_SECONDS,
    created: at,
    updated: at,
    version: 1,
  };
}

export const truncate = (text: string) => (text.length > RECORD_LIMIT ? text.slice(0, RECORD_LIMIT) : text);
const REDACTED = '[redacted]';

/**
 * Headers as recorded: JSON text that stays valid within the limit (values are cut, then whole
 * headers dropped), and the Authorization value never recorded.
 */
export function recordedHeaders(headers: Record<string, string>): string {
  const safe: Record<string, string> = {};
  let size = 2;
  for (const [name, value] of Object.entries(headers)) {
    const shown = name.toLowerCase() === 'authorization' ? REDACTED : value.slice(0, 1024);
    size += JSON.stringify(name).length + JSON.stringify(shown).length + 2;
    if (size > RECORD_LIMIT) break;
    safe[name] = shown;
  }
  return JSON.stringify(safe);
}

export function hmacHex(key: string, content: string): string {
  return createHmac('sha256', key).update(content).digest('hex');
}

async function requestFor(endpoint: EndpointRecord, delivery: DeliveryRecord, attempt: number, at: number) {
  const body = JSON.stringify({ event: delivery.event });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'svc-webhooks/1',
    'x-svc-event-uuid': delivery.event.uuid,
    'x-svc-delivery-attempt': String(attempt),
  };
  if (endpoint.hmac_key) {
    const key = await open(endpoint.hmac_key, { endpoint: endpoint.uuid, field: 'hmac_key' });
    headers['x-hmac'] = hmacHex(key, body);
    headers['x-svc-signature'] = `t=${at},v1=${hmacHex(key, `${at}.${body}`)}`;
  }
  if (endpoint.username !== undefined && endpoint.password !== undefined) {
    const password = await open(endpoint.password, { endpoint: endpoint.uuid, field: 'password' });
    headers.authorization = `Basic ${Buffer.from(`${endpoint.username}:${password}`).toString('base64')}`;
  }
  return { body, headers };
}

export interface Claimed {
  /** Why this attempt cannot be sent (it is recorded as failed without a request). */
  problem?: string;
  delivery: DeliveryRecord;
  endpoint: EndpointRecord | undefined;
  attempt: number;
  responseUuid: string;
  request: { body: string; headers: Record<string, string> };
  at: number;
}

/**
 * The first attempt of a delivery fan-out carried in its queue message: the claim is the
 * delivery's first write (only if absent). If the delivery is already written (the message came
 * twice, or the event was fanned out twice), it is claimed as any other, from what is stored.
 */
export async function claimFirstAttempt(fresh: DeliveryRecord): Promise<Claimed | undefined> {
  const at = now();
  const next: DeliveryRecord = {
    ...fresh,
    attempts: 1,
    status: 'pending',
    lease_until: at + ATTEMPT_LEASE_SECONDS,
    held_by_message: true,
    // If this attempt ends the delivery, the claim is its last write: it expires with the responses.
    expires_at: at + RESPONSE_RETENTION_SECONDS,
    updated: at,
    version: 1,
  };
  delete next.next_attempt_at;
  delete next.queued_until;
  const claimed = await claimOf(next, await findEndpoint(next.endpoint_uuid), at);
  try {
    await transactWrite([{ item: deliveryPut(next) }]);
    return claimed;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return claimAttempt(fresh.uuid);
  }
}

/** Claims the next attempt of a due delivery; undefined when there is nothing to do now. */
export async function claimAttempt(uuid: string): Promise<Claimed | undefined> {
  return retryOnConflict(async () => {
    const read = await findDelivery(uuid);
    if (!read) return undefined;
    const at = now();
    const previous = readsPreviousResponse(read, at)
      ? await findResponse(derivedUuid('webhook_response', read.uuid, read.attempts))
      : undefined;
    const decision = decideClaim(read, previous, at);
    if (decision.logLost) await logLostAttempt(read);
    if (decision.kind === 'in_flight') throw new AttemptInFlightError(uuid);
    if (decision.kind === 'none') return undefined;
    const claimed = decision.claim
      ? await claimOf(decision.next, await findEndpoint(read.endpoint_uuid), at)
      : undefined;
    await transactWrite([versioned(deliveryPut(decision.next, read.version))]);
    return claimed;
  });
}

/**
 * What a claim decides from the delivery, the record of its last attempt (when that is read) and
 * the time: nothing to do now; the attempt is another worker's; or one write of the delivery,
 * which starts the next attempt (`claim`) or settles it. `logLost`: the last attempt has no
 * record, and is logged as one with no outcome (it may have reached the receiver) first.
 */
export type ClaimDecision =
  | { kind: 'none'; logLost: boolean }
  | { kind: 'in_flight'; logLost: false }
  | { kind: 'save'; next: DeliveryRecord; claim: boolean; logLost: boolean };

/**
 * The attempts that count against MAX_ATTEMPTS and the back-off: those the endpoint did not
 * answer with a request to wait (429, or 503 with Retry-After; domain/pacing.ts).
 */
export function failedAttempts(delivery: Pick<DeliveryRecord, 'attempts' | 'throttled'>): number {
  return delivery.attempts - (delivery.throttled ?? 0);
}

/** Whether deciding needs the record of the last attempt: an ended delivery's, or one under a lease. */
export function readsPreviousResponse(read: DeliveryRecord, at: number): boolean {
  if (read.status !== 'pending') return read.attempts > 0;
  const leased = (read.lease_until ?? 0) > at;
  if (leased && !read.held_by_message) return false;
  if (!leased && (read.next_attempt_at ?? 0) > at) return false;
  return read.lease_until !== undefined;
}

/** The claim's decision (see ClaimDecision); pure. */
export function decideClaim(read: DeliveryRecord, previous: ResponseRecord | undefined, at: number): ClaimDecision {
  if (read.status !== 'pending') {
    // Ended: its last attempt has its record, unless the worker stopped between storing the
    // delivery's final state and the response (a batch write done in part).
    return { kind: 'none', logLost: read.attempts > 0 && !previous };
  }
  const leased = (read.lease_until ?? 0) > at;
  if (leased && !read.held_by_message) return { kind: 'none', logLost: false };
  if (!leased && (read.next_attempt_at ?? 0) > at) return { kind: 'none', logLost: false };
  let logLost = false;
  if (read.lease_until !== undefined) {
    // The attempt under the lease (held by its message, so recorded by its response alone, or
    // lapsed, so its worker stopped): a response that ended the delivery settles it; one held
    // and not yet ended is its worker's still; a lapsed one without a response is logged as an
    // attempt with no outcome; then the next one goes ahead.
    if (previous && (!previous.error || previous.do_not_retry)) {
      return { kind: 'save', next: endedBy(read, previous, at), claim: false, logLost: false };
    }
    if (leased) return { kind: 'in_flight', logLost: false };
    if (!previous) logLost = true;
    else {
      // Recorded as failed but never settled: the next attempt keeps to the schedule.
      const due = previous.sent_at + (RETRY_DELAYS_SECONDS[failedAttempts(read) - 1] ?? 86_400);
      if (due > at) {
        const waiting: DeliveryRecord = { ...read, next_attempt_at: due, updated: at, version: read.version + 1 };
        delete waiting.lease_until;
        delete waiting.held_by_message;
        delete waiting.expires_at;
        delete waiting.queued_until;
        return { kind: 'save', next: waiting, claim: false, logLost: false };
      }
    }
  }
  if (failedAttempts(read) >= MAX_ATTEMPTS) {
    // The last attempt's worker died: its record is the final word.
    const failed: DeliveryRecord = {
      ...read,
      status: 'failed',
      expires_at: at + RESPONSE_RETENTION_SECONDS,
      updated: at,
      version: read.version + 1,
    };
    delete failed.lease_until;
    delete failed.held_by_message;
    return { kind: 'save', next: failed, claim: false, logLost };
  }
  const next: DeliveryRecord = {
    ...read,
    attempts: read.attempts + 1,
    lease_until: at + ATTEMPT_LEASE_SECONDS,
    updated: at,
    version: read.version + 1,
  };
  delete next.next_attempt_at;
  delete next.queued_until;
  delete next.expires_at;
  // Its pace's reservation is used by this attempt.
  delete next.paced_for;
  // From now on the due index watches the lease (this message may be the sweeper's).
  delete next.held_by_message;
  return { kind: 'save', next, claim: true, logLost };
}

/**
 * Hands a claim held by its message to the due index (that message is about to go to the
 * dead-letter queue): from now on the sweeper brings the delivery back once its lease lapses.
 */
export async function releaseHeldClaim(uuid: string): Promise<void> {
  await retryOnConflict(async () => {
    const read = await findDelivery(uuid);
    if (!read?.held_by_message || read.status !== 'pending') return;
    const released: DeliveryRecord = { ...read, updated: now(), version: read.version + 1 };
    delete released.held_by_message;
    delete released.expires_at;
    await transactWrite([versioned(deliveryPut(released, read.version))]);
  });
}

/** The attempt a claim writes, with its request signed. */
async function claimOf(next: DeliveryRecord, endpoint: EndpointRecord | undefined, at: number): Promise<Claimed> {
  const attempt = next.attempts;
  const bare = () => ({ body: JSON.stringify({ event: next.event }), headers: {} });
  // A secret that cannot be opened (a disabled KMS key, say) fails this attempt on the record
  // and the schedule goes on: the delivery never stalls unlogged.
  let problem: string | undefined;
  const request = endpoint
    ? await requestFor(endpoint, next, attempt, at).catch((error: unknown) => {
        problem = `The endpoint's secrets could not be opened: ${error instanceof Error ? error.message : String(error)}`;
        return bare();
      })
    : bare();
  return {
    delivery: next,
    endpoint,
    attempt,
    responseUuid: derivedUuid('webhook_response', next.uuid, attempt),
    request,
    at,
    ...definedFields({ problem }),
  };
}

/**
 * Logs the delivery's latest attempt as one with no recorded outcome, unless it has a record
 * (written only if absent; writing it twice, or after the real one, changes nothing).
 */
async function logLostAttempt(read: DeliveryRecord): Promise<void> {
  try {
    await transactWrite([{ item: lostAttemptRecord(read) }]);
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** A delivery whose last attempt's response ended it, settled as that response says. */
function endedBy(read: DeliveryRecord, response: ResponseRecord, at: number): DeliveryRecord {
  const ended: DeliveryRecord = {
    ...read,
    status: !response.error ? 'delivered' : response.status_code === 410 ? 'gone' : 'failed',
    expires_at: at + RESPONSE_RETENTION_SECONDS,
    updated: at,
    version: read.version + 1,
  };
  delete ended.lease_until;
  delete ended.held_by_message;
  return ended;
}

/** The record of an attempt whose worker stopped before recording it (written once, if absent). */
function lostAttemptRecord(read: DeliveryRecord) {
  const startedAt = (read.lease_until ?? now()) - ATTEMPT_LEASE_SECONDS;
  const record: ResponseRecord = {
    uuid: derivedUuid('webhook_response', read.uuid, read.attempts),
    organisation_uuid: read.organisation_uuid,
    ...definedFields({ account_uuid: read.account_uuid }),
    webhook_configuration_uuid: read.endpoint_uuid,
    ...definedFields({ endpoint_account_uuid: read.endpoint_account_uuid }),
    delivery_uuid: read.uuid,
    event_uuid: read.event.uuid,
    object_uuid: read.event.object_uuid,
    attempt: read.attempts,
    sent_at: startedAt,
    error: true,
    error_message: LOST_ATTEMPT,
    do_not_retry: failedAttempts(read) >= MAX_ATTEMPTS,
    request_headers: '{}',
    request_body: truncate(JSON.stringify({ event: read.event })),
    response_headers: '{}',
    response_body: '',
  };
  const put = responsePut(record, startedAt + RESPONSE_RETENTION_SECONDS);
  return 'Put' in put ? { Put: { ...put.Put, ConditionExpression: 'attribute_not_exists(pk)' } } : put;
}
