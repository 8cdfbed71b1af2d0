import { BUSINESS_METRICS, definedFields, logger, now, recordMetric } from '@svc/core';
import { type PostResult, postJson } from '@svc/outbound';
import { putItems, retryOnConflict, transactWrite, versioned } from '@svc/table';
import type { DeliveryMessage } from '../pipeline/queue';
import {
  type DeliveryRecord,
  deliveryItem,
  deliveryPut,
  findDelivery,
  type ResponseRecord,
  responseItem,
  responsePut,
} from '../repository/webhook-repository';
import {
  type Claimed,
  claimAttempt,
  claimFirstAttempt,
  failedAttempts,
  LOST_ATTEMPT,
  MAX_ATTEMPTS,
  RESPONSE_RETENTION_SECONDS,
  RETRY_DELAYS_SECONDS,
  recordedHeaders,
  truncate,
} from './delivery';
import { IN_FLIGHT_WAIT_SECONDS, takeInFlight } from './in-flight';
import {
  deferDelivery,
  MAX_THROTTLED_ATTEMPTS,
  nextThrottledAttempt,
  PacingFailed,
  paceMessages,
  pauseAskedBy,
  pauseFor,
} from './pacing';
import { noteAttempt } from './slow-endpoints';

/**
 * Sending and settling a claimed attempt (claims are delivery.ts's).
 *
 * Once sent, an attempt's Webhook Response is written and the delivery settled: delivered, gone
 * (410), failed, or scheduled for the next attempt on the published back-off. A first attempt
 * held by its queue message that ends the delivery is recorded by its Webhook Response alone.
 */

/**
 * The receiver has 10 s (contract). SVC_WEBHOOK_TIMEOUT_MS may only shorten it (tests use a
 * fraction of a second to exercise timeouts without waiting).
 */
const TIMEOUT_MS = 10_000;
function timeoutMs(): number {
  const configured = Number(process.env.SVC_WEBHOOK_TIMEOUT_MS);
  return Number.isFinite(configured) && configured >= 50 ? Math.min(configured, TIMEOUT_MS) : TIMEOUT_MS;
}

/** The Webhook Response of a claimed attempt before its outcome is known (as if lost). */
function baseResponse(claimed: Claimed): ResponseRecord {
  const { delivery, attempt, at, request } = claimed;
  return {
    uuid: claimed.responseUuid,
    organisation_uuid: delivery.organisation_uuid,
    ...definedFields({ account_uuid: delivery.account_uuid }),
    webhook_configuration_uuid: delivery.endpoint_uuid,
    ...definedFields({ endpoint_account_uuid: claimed.endpoint?.account_uuid }),
    delivery_uuid: delivery.uuid,
    event_uuid: delivery.event.uuid,
    object_uuid: delivery.event.object_uuid,
    attempt,
    sent_at: at,
    error: true,
    error_message: LOST_ATTEMPT,
    do_not_retry: false,
    request_headers: recordedHeaders(request.headers),
    request_body: truncate(request.body),
    response_headers: '{}',
    response_body: '',
  };
}

export interface AttemptOutcome {
  attempted: boolean;
  delivered: boolean;
}

/**
 * A delivery whose claim still has this long to run is the claimant's alone (no other worker
 * claims it, and the sweeper sees it only once the lease lapses): its final state can be written
 * without a guard.
 */
const UNGUARDED_SETTLE_MARGIN_SECONDS = 15;

/**
 * A queue batch's attempts, each delivery on its own (what fails for one is reported for that
 * one): every due delivery is claimed (a first attempt carried in its message by writing it),
 * then all are sent at once, then their Webhook Responses are written together (BatchWriteItem:
 * unconditional puts, one call instead of one each) with the final state of each delivery that
 * ended while its lease still holds, unless its message holds it (its response is its record);
 * a delivery that goes on to a retry (or whose lease is nearly over) is settled on its own under
 * its version. If the batch write fails, each response is written on its own, and a delivery is
 * settled once its response is stored; one whose response cannot be stored is left to its lease
 * (or message), and the next claim logs that attempt as having no outcome. A delivery named
 * twice in one batch (a message sent twice) is attempted once.
 */
export async function attemptDeliveries(
  messages: readonly DeliveryMessage[],
): Promise<Array<PromiseSettledResult<AttemptOutcome>>> {
  const firstOf = new Map<string, number>();
  messages.forEach((message, index) => {
    if (!firstOf.has(message.delivery_uuid)) firstOf.set(message.delivery_uuid, index);
  });
  // Each endpoint's pace first (domain/pacing.ts): what it holds back waits in the due index.
  const seen = new Map<number, { delivery: DeliveryRecord; fresh: boolean }>();
  const held = await paceMessages(messages, [...firstOf.values()], seen);
  // The places in flight of the deliveries that would start now (domain/in-flight.ts), before claims.
  const startedAt = now();
  const asking = [...seen.entries()].filter(([index]) => !held.has(index));
  const inFlight = await takeInFlight(
    asking.map(([, candidate]) => candidate.delivery),
    startedAt,
  );
  const withoutRoom = new Set(asking.filter((_, position) => !inFlight.granted.has(position)).map(([index]) => index));
  const claims = await Promise.allSettled(
    messages.map(async (message, index) => {
      if (firstOf.get(message.delivery_uuid) !== index) return undefined;
      const deferral = held.get(index);
      if (deferral instanceof PacingFailed) throw deferral;
      if (deferral) {
        if (await deferDelivery(deferral)) {
          recordMetric(BUSINESS_METRICS.webhookDeliveries, 1, { outcome: 'paced' });
          if (failedAttempts(deferral.delivery) === 0) recordLag(deferral.delivery);
          return undefined;
        }
        // A stored one that changed meanwhile is its changer's; a carried one already stored is
        // claimed from what is stored (an attempt in flight keeps its message).
        if (!deferral.fresh) return undefined;
      }
      const candidate = seen.get(index);
      if (candidate && withoutRoom.has(index)) {
        // No room in flight: due again once the places held now have come free, unclaimed.
        if (await deferDelivery({ ...candidate, until: startedAt + IN_FLIGHT_WAIT_SECONDS, reserved: false })) {
          recordMetric(BUSINESS_METRICS.webhookDeliveries, 1, { outcome: 'in_flight_capped' });
          if (failedAttempts(candidate.delivery) === 0) recordLag(candidate.delivery);
          return undefined;
        }
        if (!candidate.fresh) return undefined;
        // Carried, and stored meanwhile by a copy of its message: this one comes back later.
        throw new Error('No place in flight for the delivery; its message is tried again');
      }
      return message.delivery ? claimFirstAttempt(message.delivery) : claimAttempt(message.delivery_uuid);
    }),
  );
  const sent = await Promise.allSettled(
    claims.map(async (claim) => {
      if (claim.status !== 'fulfilled' || !claim.value) return undefined;
      const claimed = claim.value;
      return { claimed, outcome: outcomeOf(claimed, await sendAttempt(claimed)) };
    }),
  );
  // The batch's sends are over (the invocation was held until now too): their places go back.
  await inFlight.release();
  const at = now();
  const recorded = sent.flatMap((attempt) => (attempt.status === 'fulfilled' && attempt.value ? [attempt.value] : []));
  const ttlOf = (claimed: Claimed) => claimed.at + RESPONSE_RETENTION_SECONDS;
  const endsNow = ({ claimed, outcome }: { claimed: Claimed; outcome: Outcome }) =>
    outcome.final && (claimed.delivery.lease_until ?? 0) - at >= UNGUARDED_SETTLE_MARGIN_SECONDS;
  const together =
    recorded.length > 0 &&
    (await putItems(
      recorded.flatMap((attempt) => [
        responseItem(attempt.outcome.response, ttlOf(attempt.claimed)),
        ...(endsNow(attempt) && !attempt.claimed.delivery.held_by_message
          ? [deliveryItem(settled(attempt.claimed.delivery, attempt.outcome, at))]
          : []),
      ]),
    ).then(
      () => true,
      (error: unknown) => {
        logger.warn('Webhook Responses not written together; writing each on its own', { error });
        return false;
      },
    ));
  return Promise.allSettled(
    claims.map(async (claim, index): Promise<AttemptOutcome> => {
      if (claim.status === 'rejected') throw claim.reason;
      const attempt = sent[index];
      if (attempt?.status === 'rejected') throw attempt.reason;
      if (!attempt?.value) return { attempted: false, delivered: false };
      const { claimed, outcome } = attempt.value;
      if (together && endsNow(attempt.value)) return settledOutcome(claimed, outcome);
      if (!together) await transactWrite([{ item: responsePut(outcome.response, ttlOf(claimed)) }]);
      return settleAttempt(claimed, outcome);
    }),
  );
}

/** Sends a claimed attempt; never throws (network trouble is a result). */
export async function sendAttempt(claimed: Claimed): Promise<PostResult | undefined> {
  const { endpoint, request } = claimed;
  if (!endpoint || claimed.problem !== undefined) return undefined;
  const allowPrivate = process.env.SVC_WEBHOOK_ALLOW_PRIVATE === 'true';
  const result = await postJson(endpoint.endpoint, request.body, request.headers, {
    allowPrivate,
    timeoutMs: timeoutMs(),
  });
  // An endpoint that keeps timing out is paused (slow-endpoints.ts): shared batches stop waiting on it.
  await noteAttempt(endpoint.uuid, result, claimed.at);
  const pause = pauseAskedBy(result, claimed.at);
  if (pause !== undefined) {
    // Shared with every worker at once; a failure to share it leaves this attempt's own wait.
    await pauseFor(endpoint.uuid, pause).catch((error: unknown) =>
      logger.warn('An endpoint’s pause was not shared', { endpoint: endpoint.uuid, error }),
    );
  }
  return result;
}

interface Outcome {
  response: ResponseRecord;
  delivered: boolean;
  gone: boolean;
  final: boolean;
  /** The endpoint asked us to wait until then (429, or 503 with Retry-After): not a failed attempt. */
  pausedUntil?: number;
}

/**
 * An endpoint that answers "wait" to every attempt is given up on once the delivery is as old as
 * the whole retry schedule (about 3 days), as a failing one is.
 */
const THROTTLED_GIVE_UP_SECONDS = RETRY_DELAYS_SECONDS.reduce((sum, delay) => sum + delay, 0);

/** What an attempt's result means: its Webhook Response and how the delivery goes on. */
function outcomeOf(claimed: Claimed, result: PostResult | undefined): Outcome {
  const { endpoint, delivery } = claimed;
  const gone = result?.statusCode === 410;
  const delivered = result?.ok === true;
  // A URL the guard refuses for its form (not its address) can never succeed: no retries.
  const hopeless = result?.blocked === true && result.blockedReason !== undefined && result.blockedReason !== 'address';
  const asked = pauseAskedBy(result, claimed.at);
  // Measured from the delivery's own creation (a redelivery of an old event starts afresh), or
  // once this is its MAX_THROTTLED_ATTEMPTS-th throttled answer.
  const throttledSoFar = delivery.throttled ?? 0;
  const givenUp =
    asked !== undefined &&
    (claimed.at - delivery.created >= THROTTLED_GIVE_UP_SECONDS || throttledSoFar + 1 >= MAX_THROTTLED_ATTEMPTS);
  // Growing waits: the receiver's Retry-After, but never less than the floor for this many.
  const pausedUntil =
    asked !== undefined && !givenUp ? nextThrottledAttempt(asked, claimed.at, throttledSoFar) : undefined;
  const failed = failedAttempts(delivery) - (pausedUntil === undefined ? 0 : 1);
  const final =
    !endpoint || delivered || gone || hopeless || givenUp || (pausedUntil === undefined && failed >= MAX_ATTEMPTS);
  const response: ResponseRecord = {
    ...baseResponse(claimed),
    error: !delivered,
    do_not_retry: final && !delivered,
    ...definedFields({ status_code: result?.statusCode, reason_phrase: result?.reasonPhrase }),
    ...(result === undefined ? {} : { response_time: Math.round(result.responseTimeMs) }),
    response_headers: recordedHeaders(result?.responseHeaders ?? {}),
    response_body: truncate(result?.responseBody ?? ''),
  };
  if (!endpoint) response.error_message = 'The webhook endpoint was deleted';
  else if (claimed.problem !== undefined) response.error_message = claimed.problem;
  else if (result?.error !== undefined) response.error_message = result.error;
  else if (!delivered) response.error_message = `The receiver answered ${result?.statusCode}`;
  else delete response.error_message;
  return { response, delivered, gone, final, ...definedFields({ pausedUntil }) };
}

/**
 * EventToDeliveryLag: from an event's creation to now, in whole seconds of service time (like the
 * event's `created`), for a delivery no failed attempt came before, each time it is attempted
 * (delivered, failed, gone or paused by its endpoint) or held back (by its endpoint's pace or the
 * in-flight cap). So a receiver's wait is seen while it waits, not only once it ends well: a paced
 * backlog or a dead endpoint shows as lag at once. Alarmed on its maximum (infra: WebhookDeliveryLag).
 */
function recordLag(delivery: DeliveryRecord): void {
  recordMetric(BUSINESS_METRICS.eventToDeliveryLag, Math.max(0, now() - delivery.event.created), {}, 'Seconds');
}

/** A pending delivery after an attempt: delivered, gone, failed, or waiting for its next attempt. */
function settled(read: DeliveryRecord, outcome: Outcome, at: number): DeliveryRecord {
  const next: DeliveryRecord = { ...read, updated: at, version: read.version + 1 };
  delete next.lease_until;
  // Settled or waiting for a retry, it is the due index's (and TTL's) again, not its message's.
  delete next.held_by_message;
  delete next.expires_at;
  if (outcome.delivered) next.status = 'delivered';
  else if (outcome.gone) next.status = 'gone';
  else if (outcome.final) next.status = 'failed';
  // A settled delivery is kept as long as its responses (it also de-duplicates replays).
  if (next.status !== 'pending') next.expires_at = at + RESPONSE_RETENTION_SECONDS;
  else if (outcome.pausedUntil !== undefined) {
    // The endpoint asked to wait: the next attempt when it said, this one not counted as failed.
    next.next_attempt_at = outcome.pausedUntil;
    next.throttled = (read.throttled ?? 0) + 1;
  } else next.next_attempt_at = at + (RETRY_DELAYS_SECONDS[failedAttempts(read) - 1] ?? 86_400);
  return next;
}

function settledOutcome(claimed: Claimed, outcome: Outcome): AttemptOutcome {
  recordMetric(BUSINESS_METRICS.webhookDeliveries, 1, {
    outcome: outcome.delivered
      ? 'delivered'
      : outcome.gone
        ? 'gone'
        : outcome.pausedUntil !== undefined
          ? 'throttled'
          : 'failed',
  });
  // How long the receiver waited for the event before its first real attempt, whatever came of it
  // (an attempt after the endpoint's pause is one too; a retry after a failure is a wait by
  // design and not counted): see recordLag.
  if (claimed.attempt - (claimed.delivery.throttled ?? 0) === 1) recordLag(claimed.delivery);
  if (!outcome.delivered) {
    logger.info('webhook delivery failed', {
      delivery: claimed.delivery.uuid,
      attempt: claimed.attempt,
      status: outcome.response.status_code,
    });
  }
  return { attempted: true, delivered: outcome.delivered };
}

/** The delivery after a recorded attempt, written only if this worker's claim still holds it. */
async function settleAttempt(claimed: Claimed, outcome: Outcome): Promise<AttemptOutcome> {
  const { delivery, attempt } = claimed;
  const uuid = delivery.uuid;
  const at = now();
  let known: DeliveryRecord | undefined = delivery;
  await retryOnConflict(async () => {
    const read = known ?? (await findDelivery(uuid));
    known = undefined;
    // Another worker took over after our lease lapsed: it owns the delivery now.
    if (!read || read.attempts !== attempt || read.status !== 'pending') return;
    await transactWrite([versioned(deliveryPut(settled(read, outcome, at), read.version))]);
  });
  return settledOutcome(claimed, outcome);
}
