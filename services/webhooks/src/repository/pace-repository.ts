import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, defineEntity, isConditionFailure, key, TTL_ATTRIBUTE, tableName } from '@svc/table';
import * as z from 'zod';

/**
 * The pace of each webhook endpoint (domain/pacing.ts), in two items per endpoint:
 *
 * - `WEBHOOK_PACE#<endpoint>#<unix second>`: the deliveries sent, or reserved, to the endpoint in
 *   that second. Its own partition per second, so no key takes more than one second's batches of
 *   one endpoint; gone by TTL an hour later.
 * - `WEBHOOK_PAUSE#<endpoint>`: until when the endpoint asked us to wait (429, or 503 with
 *   Retry-After). Written only when it answers so.
 */
const PACE_TTL_SECONDS = 3600;

interface PaceCount {
  endpoint_uuid: string;
  second: number;
  taken: number;
}

export const WEBHOOK_PACE = defineEntity<PaceCount, readonly [string, number]>({
  name: 'webhook_pace',
  summary:
    'Deliveries sent or reserved to one webhook endpoint in one second: its pace (domain/pacing.ts; TTL 1 hour).',
  prefix: 'WEBHOOK_PACE',
  idShown: '<endpoint uuid>#<unix second>',
  sort: 'WEBHOOK_PACE',
  id: (count) => [count.endpoint_uuid, count.second] as const,
  idParts: ([endpoint, second]) => [endpoint, String(second)],
  byKey: 'an endpoint’s deliveries of a second (pacing)',
  storage: {
    toAttributes: ({ taken }) => ({ taken }),
    fromAttributes: (item) => {
      const [, endpoint, second] = String(item.pk).split('#');
      return { endpoint_uuid: endpoint, second: Number(second), taken: item.taken };
    },
  },
  parse: (value) => value as PaceCount,
});

interface Pause {
  endpoint_uuid: string;
  paused_until: number;
}

export const WEBHOOK_PAUSE = defineEntity<Pause, string>({
  name: 'webhook_pause',
  summary: 'Until when a webhook endpoint asked to be sent nothing (429, or 503 with Retry-After).',
  prefix: 'WEBHOOK_PAUSE',
  idShown: '<endpoint uuid>',
  sort: 'WEBHOOK_PAUSE',
  id: (pause) => pause.endpoint_uuid,
  idParts: (endpoint) => [endpoint],
  byKey: 'an endpoint’s pause (pacing)',
  storage: {
    toAttributes: ({ paused_until }) => ({ paused_until }),
    fromAttributes: (item) => ({ endpoint_uuid: String(item.pk).slice('WEBHOOK_PAUSE#'.length), ...item }),
  },
  parse: (value) => z.object({ endpoint_uuid: z.string(), paused_until: z.number() }).parse(value),
});

/**
 * Takes up to `wanted` of the second's `rate` deliveries, now or ahead of time (a reservation):
 * one UpdateItem whatever `wanted` is. The count goes up by all that was asked, so a second once
 * over its rate stays full for everyone (what was asked beyond the room was never sent, and the
 * second was full without it); answers how many were granted (0 … wanted).
 */
export async function takeSlots(endpointUuid: string, second: number, wanted: number, rate: number): Promise<number> {
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: WEBHOOK_PACE.key([endpointUuid, second]),
      UpdateExpression: 'ADD taken :wanted SET #ttl = if_not_exists(#ttl, :ttl)',
      ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':wanted': wanted, ':ttl': second + PACE_TTL_SECONDS },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const before = Number(out.Attributes?.taken ?? wanted) - wanted;
  return Math.max(0, Math.min(wanted, rate - before));
}

/** Until when the endpoint is paused (0 when it is not). */
export async function pausedUntil(endpointUuid: string): Promise<number> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: WEBHOOK_PAUSE.key(endpointUuid) }));
  return Number(out.Item?.paused_until ?? 0);
}

/** Pauses the endpoint until `until`, unless a longer pause is already set. */
export async function pauseEndpoint(endpointUuid: string, until: number): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: WEBHOOK_PAUSE.key(endpointUuid),
        UpdateExpression: 'SET paused_until = :until, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(paused_until) OR paused_until < :until',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':until': until, ':ttl': until + PACE_TTL_SECONDS },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/**
 * One more attempt to the endpoint that timed out, on its pause item (one atomic ADD, so racing
 * workers count every one): answers the count. The item lives an hour past the last timeout.
 */
export async function noteTimeout(endpointUuid: string, at: number): Promise<number> {
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: WEBHOOK_PAUSE.key(endpointUuid),
      UpdateExpression: 'ADD timeouts :one SET #ttl = :ttl',
      ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':one': 1, ':ttl': at + PACE_TTL_SECONDS },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(out.Attributes?.timeouts ?? 1);
}

/** The endpoint answered: its run of timeouts is over (nothing written when it had none). */
export async function clearTimeouts(endpointUuid: string): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: WEBHOOK_PAUSE.key(endpointUuid),
        UpdateExpression: 'REMOVE timeouts',
        ConditionExpression: 'attribute_exists(timeouts)',
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

interface InFlightCount {
  scope: string;
  window: number;
  held: number;
}

export const WEBHOOK_IN_FLIGHT = defineEntity<InFlightCount, readonly [string, number]>({
  name: 'webhook_in_flight',
  summary:
    'Deliveries in flight to one endpoint, or of one organisation, counted in one minute (domain/in-flight.ts; TTL 1 hour).',
  prefix: 'WEBHOOK_IN_FLIGHT',
  idShown: '<endpoint or organisation uuid>#<minute>',
  sort: 'WEBHOOK_IN_FLIGHT',
  id: (count) => [count.scope, count.window] as const,
  idParts: ([scope, window]) => [scope, String(window)],
  byKey: 'the deliveries in flight of an endpoint or organisation (one minute’s count)',
  storage: {
    toAttributes: ({ held }) => ({ held }),
    fromAttributes: (item) => {
      const [, scope, window] = String(item.pk).split('#');
      return { scope, window: Number(window), held: item.held };
    },
  },
  parse: (value) => value as InFlightCount,
});

/** One count of deliveries in flight: an endpoint's or organisation's, in one minute. */
export type InFlightKey = readonly [string, number];

/**
 * Adds `count` (positive: places asked for; negative: places given back) to a count in flight, in
 * one ADD; answers the count before it. Asking counts first and checks after (the answer says
 * how many of the asked fit under a cap); the caller gives back at once what did not fit, so
 * racing workers never hold more than the cap between them (each sees every other's ask).
 */
export async function addInFlight(at: InFlightKey, count: number, ttl: number): Promise<number> {
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: WEBHOOK_IN_FLIGHT.key(at),
      UpdateExpression: 'ADD held :count SET #ttl = if_not_exists(#ttl, :ttl)',
      ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':count': count, ':ttl': ttl },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(out.Attributes?.held ?? count) - count;
}

/** What the delivery worker updates for pacing, for its IAM grant (infra/constructs/events.ts). */
export const PACING_PREFIXES = [
  key('WEBHOOK_PACE', ''),
  key('WEBHOOK_PAUSE', ''),
  key('WEBHOOK_IN_FLIGHT', ''),
] as const;
export const PACING_ATTRIBUTES = ['pk', 'sk', 'taken', 'paused_until', 'timeouts', 'held', TTL_ATTRIBUTE] as const;
