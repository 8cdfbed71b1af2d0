import { createHash } from 'node:crypto';
import { deferred, definedFields } from '@svc/core';
import {
  byUuid,
  defineEntity,
  key,
  mergedPages,
  queryAll,
  queryPages,
  shardedPartition,
  shardOf,
  shardPartitions,
  type TransactItem,
  timeKey,
} from '@svc/table';
import * as z from 'zod';

/**
 * The webhooks domain's items in the one table: endpoints, their URL markers, event
 * subscriptions, deliveries and webhook responses, each described below (`ENDPOINT`,
 * `WEBHOOK_URL`, `EVENT_SUBSCRIPTION`, `DELIVERY`, `RESPONSE`; docs/access-patterns.md).
 */
/**
 * Shards of the deliveries' due entries. At a peak every delivery an endpoint's pace holds back
 * waits in the due index (one write in, one out), about as often as events are made: 32 keeps
 * each shard at about 1/32 of those writes (docs/load-model.md). Deliveries written when there
 * were 8 sit in shards 0–7, which are among the 32 read.
 */
export const DELIVERY_SHARDS = 32;
/**
 * Shards of an organisation's and of an endpoint's Webhook Responses (one per attempt, each
 * event to each endpoint): 32, as the supporters' (docs/load-model.md).
 */
export const RESPONSE_SHARDS = 32;

export const endpointRecordSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string().optional(),
    alias: z.string().optional(),
    endpoint: z.string(),
    username: z.string().optional(),
    /** Sealed (see secrets.ts). */
    password: z.string().optional(),
    /** Sealed (see secrets.ts). */
    hmac_key: z.string().optional(),
    /** sha256 of the URL when the endpoint claimed it as unique in its organisation. */
    unique_url: z.string().optional(),
    /** Its pace (domain/pacing.ts); absent, the default. */
    max_deliveries_per_second: z.number().int().optional(),
    created: z.number().int(),
    updated: z.number().int(),
    version: z.number().int(),
  }),
);
export type EndpointRecord = z.infer<typeof endpointRecordSchema>;

export const subscriptionRecordSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string().optional(),
    action_configuration_uuid: z.string(),
    action_type: z.literal('webhook'),
    /** As the client sent it (an alias stays an alias in responses). */
    event_name: z.string(),
    canonical_event_name: z.string(),
    filter: z.string().optional(),
    enabled: z.boolean(),
    created: z.number().int(),
    updated: z.number().int(),
    version: z.number().int(),
  }),
);
export type EventSubscriptionRecord = z.infer<typeof subscriptionRecordSchema>;

export const envelopeSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    name: z.string(),
    created: z.number(),
    object: z.string(),
    object_uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string().optional(),
    sequence: z.number().int(),
    data: z.record(z.string(), z.unknown()),
  }),
);
export type Envelope = z.infer<typeof envelopeSchema>;

export const deliveryRecordSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string().optional(),
    endpoint_uuid: z.string(),
    /** The endpoint's account scope when the delivery was made (who may read its traffic). */
    endpoint_account_uuid: z.string().optional(),
    event: envelopeSchema,
    /** Attempts started so far (the next one is attempts + 1). */
    attempts: z.number().int(),
    status: z.enum(['pending', 'delivered', 'failed', 'gone']),
    /** When the next attempt is due (Unix seconds), while pending. */
    next_attempt_at: z.number().int().optional(),
    /** While an attempt is in flight: until when its worker owns it. */
    lease_until: z.number().int().optional(),
    /**
     * Set on the claim of a first attempt carried in its queue message: that message stays in
     * flight until the attempt ends, so the queue (not the due index) brings the delivery back if
     * its worker stops, and an attempt that ends the delivery is recorded by its Webhook Response
     * alone (see domain/delivery.ts).
     */
    held_by_message: z.boolean().optional(),
    /** Sent to the queue: the sweeper leaves it alone until then. */
    queued_until: z.number().int().optional(),
    /** The second reserved for its next attempt by the endpoint's pace (domain/pacing.ts). */
    paced_for: z.number().int().optional(),
    /** Attempts the endpoint answered with 429 (or 503 and Retry-After): not failed attempts. */
    throttled: z.number().int().optional(),
    /** Once settled (or claimed while held by its message): when DynamoDB's TTL may remove it. */
    expires_at: z.number().int().optional(),
    created: z.number().int(),
    updated: z.number().int(),
    version: z.number().int(),
  }),
);
export type DeliveryRecord = z.infer<typeof deliveryRecordSchema>;

export const responseRecordSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    organisation_uuid: z.string(),
    account_uuid: z.string().optional(),
    webhook_configuration_uuid: z.string(),
    /** The endpoint's own account scope, if any: who may read its traffic. */
    endpoint_account_uuid: z.string().optional(),
    delivery_uuid: z.string(),
    event_uuid: z.string(),
    object_uuid: z.string(),
    attempt: z.number().int(),
    sent_at: z.number().int(),
    error: z.boolean(),
    status_code: z.number().int().optional(),
    reason_phrase: z.string().optional(),
    response_time: z.number().int().optional(),
    error_message: z.string().optional(),
    do_not_retry: z.boolean(),
    request_headers: z.string(),
    request_body: z.string(),
    response_headers: z.string(),
    response_body: z.string(),
  }),
);
export type ResponseRecord = z.infer<typeof responseRecordSchema>;

export const endpointKey = (uuid: string) => ENDPOINT.key(uuid);
const urlMarkerSchema = z.object({ organisation_uuid: z.string(), url_hash: z.string(), webhook_uuid: z.string() });

/** One endpoint per URL in an organisation (when asked for): a marker in its partition. */
export const WEBHOOK_URL = defineEntity<z.infer<typeof urlMarkerSchema>, readonly [string, string]>({
  name: 'webhook_url',
  summary: 'The endpoint that holds a URL in its organisation (when created as unique): a marker in its partition.',
  prefix: 'ORG',
  idShown: '<organisation uuid>',
  sort: ([, hash]) => key('WEBHOOK_URL', hash),
  sortShown: 'WEBHOOK_URL#<sha256 of the URL>',
  id: (marker) => [marker.organisation_uuid, marker.url_hash] as const,
  idParts: ([organisationUuid]) => [organisationUuid],
  byKey: 'one endpoint per URL (optional, on request)',
  storage: {
    toAttributes: ({ webhook_uuid }) => ({ webhook_uuid }),
    fromAttributes: (item) => ({
      ...item,
      organisation_uuid: String(item.pk).slice('ORG#'.length),
      url_hash: String(item.sk).slice('WEBHOOK_URL#'.length),
    }),
  },
  parse: (value) => urlMarkerSchema.parse(value),
});

export const urlKey = (organisationUuid: string, urlHash: string) => WEBHOOK_URL.key([organisationUuid, urlHash]);
export const eventSubscriptionKey = (uuid: string) => EVENT_SUBSCRIPTION.key(uuid);
export const DELIVERY_PARTITION_PREFIX = key('DELIVERY', '');
export const deliveryKey = (uuid: string) => DELIVERY.key(uuid);
const RESPONSE_PARTITION_PREFIX = key('WEBHOOK_RESPONSE', '');
export const responseKey = (uuid: string) => RESPONSE.key(uuid);
/**
 * What the delivery worker writes with BatchWriteItem (Webhook Responses, and deliveries that
 * ended): IAM scopes that action, which can delete as well as put, to partitions starting so.
 */
export const WORKER_BATCH_WRITE_PREFIXES = [RESPONSE_PARTITION_PREFIX, DELIVERY_PARTITION_PREFIX] as const;

export function urlHash(url: string): string {
  return createHash('sha256').update(url).digest('hex');
}

// Endpoints

export const ENDPOINT = defineEntity<EndpointRecord, string>({
  name: 'webhook',
  summary: 'A webhook endpoint: its URL, sealed credentials and HMAC key.',
  prefix: 'WEBHOOK',
  ...byUuid(),
  sort: 'WEBHOOK',
  byKey: 'endpoint by uuid',
  indexes: [
    {
      index: 'gsi1',
      pattern: 'endpoints of an organisation',
      shown: 'gsi1pk = ORG#<org>#WEBHOOKS, gsi1sk = <created>#<uuid>',
      keys: (endpoint) => ({
        partition: key('ORG', endpoint.organisation_uuid, 'WEBHOOKS'),
        sort: key(timeKey(endpoint.created), endpoint.uuid),
      }),
    },
  ],
  version: 'version',
  parse: (item) => endpointRecordSchema.parse(item),
});

export function endpointPut(endpoint: EndpointRecord, readVersion?: number): TransactItem {
  return ENDPOINT.put(endpoint, readVersion);
}

export function findEndpoint(uuid: string): Promise<EndpointRecord | undefined> {
  return ENDPOINT.find(uuid);
}

export async function endpointsOf(organisationUuid: string): Promise<EndpointRecord[]> {
  const items = await queryAll({ index: 'gsi1', partition: key('ORG', organisationUuid, 'WEBHOOKS') });
  return items.map((item) => endpointRecordSchema.parse(item));
}

export function claimUrl(endpoint: EndpointRecord, hash: string): TransactItem {
  return {
    Put: {
      Item: WEBHOOK_URL.item({
        organisation_uuid: endpoint.organisation_uuid,
        url_hash: hash,
        webhook_uuid: endpoint.uuid,
      }),
      ConditionExpression: 'attribute_not_exists(pk) OR webhook_uuid = :self',
      ExpressionAttributeValues: { ':self': endpoint.uuid },
    },
  };
}

export function releaseUrl(endpoint: EndpointRecord, hash: string): TransactItem {
  return {
    Delete: {
      Key: urlKey(endpoint.organisation_uuid, hash),
      ConditionExpression: 'webhook_uuid = :self',
      ExpressionAttributeValues: { ':self': endpoint.uuid },
    },
  };
}

export function deleteGuarded(itemKey: { pk: string; sk: string }, readVersion: number): TransactItem {
  return {
    Delete: {
      Key: itemKey,
      ConditionExpression: 'version = :read',
      ExpressionAttributeValues: { ':read': readVersion },
    },
  };
}

// Event subscriptions

export const EVENT_SUBSCRIPTION = defineEntity<EventSubscriptionRecord, string>({
  name: 'event_subscription',
  summary: 'A subscription of an endpoint to an event name, with its filter.',
  prefix: 'EVENT_SUBSCRIPTION',
  ...byUuid(),
  sort: 'EVENT_SUBSCRIPTION',
  byKey: 'event subscription by uuid',
  indexes: [
    {
      index: 'gsi1',
      pattern: 'event subscriptions of an organisation',
      shown: 'gsi1pk = ORG#<org>#EVENT_SUBSCRIPTIONS, gsi1sk = <created>#<uuid>',
      keys: (subscription) => ({
        partition: key('ORG', subscription.organisation_uuid, 'EVENT_SUBSCRIPTIONS'),
        sort: key(timeKey(subscription.created), subscription.uuid),
      }),
    },
    {
      index: 'gsi2',
      pattern: 'subscriptions to one event name (fan-out)',
      shown: 'gsi2pk = ORG#<org>#EVENT#<canonical name>, gsi2sk = <uuid>',
      keys: (subscription) => ({
        partition: key('ORG', subscription.organisation_uuid, 'EVENT', subscription.canonical_event_name),
        sort: subscription.uuid,
      }),
    },
  ],
  version: 'version',
  parse: (item) => subscriptionRecordSchema.parse(item),
});

export function eventSubscriptionPut(subscription: EventSubscriptionRecord, readVersion?: number): TransactItem {
  return EVENT_SUBSCRIPTION.put(subscription, readVersion);
}

export function findEventSubscription(uuid: string): Promise<EventSubscriptionRecord | undefined> {
  return EVENT_SUBSCRIPTION.find(uuid);
}

export async function eventSubscriptionsOf(organisationUuid: string): Promise<EventSubscriptionRecord[]> {
  const items = await queryAll({ index: 'gsi1', partition: key('ORG', organisationUuid, 'EVENT_SUBSCRIPTIONS') });
  return items.map((item) => subscriptionRecordSchema.parse(item));
}

/** The subscriptions of an organisation to one (canonical) event name: what fan-out reads. */
export async function subscribersOf(organisationUuid: string, eventName: string): Promise<EventSubscriptionRecord[]> {
  const items = await queryAll({ index: 'gsi2', partition: key('ORG', organisationUuid, 'EVENT', eventName) });
  return items.map((item) => subscriptionRecordSchema.parse(item));
}

// Deliveries

/**
 * A delivery's event is stored as JSON text (`event_json`), not as a map: the item is written
 * three times per attempt and read back from the stream each time, and one string attribute
 * costs the store and the SDK far less than the event's nested attributes. Items written before
 * (with `event` as a map) are still read. The reverse does not hold: code from before this
 * format cannot read these items, so a deployment is not rolled back past it (its pending
 * deliveries would fail their claims and end in the dead-letter queue).
 */
export const DELIVERY = defineEntity<DeliveryRecord, string>({
  name: 'delivery',
  summary: 'One event on its way to one endpoint: its attempts, lease and schedule (TTL after it ends).',
  prefix: 'DELIVERY',
  ...byUuid(),
  sort: 'DELIVERY',
  byKey: 'delivery of an event to an endpoint',
  indexes: [
    {
      index: 'due',
      pattern: 'deliveries due for an attempt (the sweeper)',
      shown: `duepk = DELIVERY_DUE#<shard 0-${DELIVERY_SHARDS - 1}>, duesk = <unix 12 digits>#<uuid>`,
      keys: (delivery) => {
        // A delivery just sent to the queue is due for the sweeper only once that message had its
        // chance (queued_until), so a sweep never re-sends what is already waiting in the queue.
        const waiting = Math.max(delivery.next_attempt_at ?? 0, delivery.queued_until ?? 0);
        // A lapsed claim that the sweeper queued again is due once that message had its chance too.
        if (delivery.status !== 'pending' || delivery.held_by_message) return undefined;
        const due = Math.max(delivery.lease_until ?? 0, waiting);
        return {
          partition: key('DELIVERY_DUE', shardOf(delivery.uuid, DELIVERY_SHARDS)),
          sort: key(timeKey(due), delivery.uuid),
        };
      },
    },
  ],
  version: 'version',
  storage: {
    toAttributes: ({ event, ...rest }) => ({
      ...definedFields({ ttl: rest.expires_at }),
      ...rest,
      event_json: JSON.stringify(event),
    }),
    fromAttributes: ({ event_json: json, ...rest }) =>
      typeof json === 'string' ? { ...rest, event: JSON.parse(json) } : rest,
  },
  parse: (record) => deliveryRecordSchema.parse(record),
});

/**
 * A delivery's event is stored as JSON text (`event_json`), not as a map: the item is written
 * three times per attempt and read back from the stream each time, and one string attribute
 * costs the store and the SDK far less than the event's nested attributes. Items written before
 * (with `event` as a map) are still read. The reverse does not hold: code from before this
 * format cannot read these items, so a deployment is not rolled back past it (its pending
 * deliveries would fail their claims and end in the dead-letter queue).
 */
export const deliveryItem = (delivery: DeliveryRecord) => DELIVERY.item(delivery);

export function deliveryPut(delivery: DeliveryRecord, readVersion?: number): TransactItem {
  return DELIVERY.put(delivery, readVersion);
}

export function findDelivery(uuid: string): Promise<DeliveryRecord | undefined> {
  return DELIVERY.find(uuid);
}

/**
 * Deliveries due at or before `at` (keys only): every shard read in parallel, at most
 * `perShard` from each, oldest first, so one busy shard cannot starve the others.
 */
export async function dueDeliveries(at: number, perShard: number): Promise<string[]> {
  return (await dueDeliveriesWithTimes(at, perShard)).map(({ uuid }) => uuid);
}

/** As dueDeliveries, each with when it is due (Unix seconds, from its due key). */
export async function dueDeliveriesWithTimes(
  at: number,
  perShard: number,
): Promise<Array<{ uuid: string; due: number }>> {
  const before = `${timeKey(at)}$`;
  const shards = await Promise.all(
    Array.from({ length: DELIVERY_SHARDS }, async (_, shard) => {
      const due: Array<{ uuid: string; due: number }> = [];
      for await (const page of queryPages({
        index: 'due',
        partition: key('DELIVERY_DUE', shard),
        sortBefore: before,
        limit: perShard,
      })) {
        for (const item of page) {
          const [time, uuid] = String(item.duesk).split('#');
          if (uuid) due.push({ uuid, due: Number(time) });
        }
      }
      return due;
    }),
  );
  return shards.flat();
}

// Webhook responses

/** The unsharded keys: responses stored before the shards were introduced are still under them. */
const organisationResponses = (organisationUuid: string) => key('ORG', organisationUuid, 'WEBHOOK_RESPONSES');
const endpointResponses = (endpointUuid: string) => key('WEBHOOK', endpointUuid, 'RESPONSES');

export const RESPONSE = defineEntity<ResponseRecord, string>({
  name: 'webhook_response',
  summary: 'What an endpoint answered to one delivery attempt (kept until its TTL).',
  prefix: 'WEBHOOK_RESPONSE',
  ...byUuid(),
  sort: 'WEBHOOK_RESPONSE',
  byKey: 'webhook response (one per attempt)',
  indexes: [
    {
      index: 'gsi1',
      pattern: 'responses of an organisation, newest first',
      shown: `gsi1pk = ORG#<org>#WEBHOOK_RESPONSES#<shard 0-${RESPONSE_SHARDS - 1}>, gsi1sk = <sent_at>#<uuid>`,
      keys: (response) => ({
        partition: shardedPartition(organisationResponses(response.organisation_uuid), response.uuid, RESPONSE_SHARDS),
        sort: key(timeKey(response.sent_at), response.uuid),
      }),
    },
    {
      index: 'gsi2',
      pattern: 'responses of one endpoint, newest first',
      shown: `gsi2pk = WEBHOOK#<uuid>#RESPONSES#<shard 0-${RESPONSE_SHARDS - 1}>, gsi2sk = <sent_at>#<uuid>`,
      keys: (response) => ({
        partition: shardedPartition(
          endpointResponses(response.webhook_configuration_uuid),
          response.uuid,
          RESPONSE_SHARDS,
        ),
        sort: key(timeKey(response.sent_at), response.uuid),
      }),
    },
  ],
  parse: (item) => responseRecordSchema.parse(item),
});

export function responseItem(response: ResponseRecord, ttl: number): Record<string, unknown> {
  return { ...RESPONSE.item(response), ttl };
}

export function responsePut(response: ResponseRecord, ttl: number): TransactItem {
  return { Put: { Item: responseItem(response, ttl) } };
}

export function findResponse(uuid: string): Promise<ResponseRecord | undefined> {
  return RESPONSE.find(uuid);
}

/**
 * Responses of an organisation (or of one endpoint), newest first, page by page, at most `limit`
 * read: the shards merged in order (sent_at, then uuid).
 */
export async function* responsesOf(
  organisationUuid: string,
  endpointUuid: string | undefined,
  limit: number,
): AsyncGenerator<ResponseRecord[]> {
  for await (const page of mergedPages({
    ...(endpointUuid === undefined
      ? {
          index: 'gsi1' as const,
          partitions: shardPartitions(organisationResponses(organisationUuid), RESPONSE_SHARDS, { legacy: true }),
        }
      : {
          index: 'gsi2' as const,
          partitions: shardPartitions(endpointResponses(endpointUuid), RESPONSE_SHARDS, { legacy: true }),
        }),
    descending: true,
    limit,
  })) {
    yield page.map((item) => responseRecordSchema.parse(item));
  }
}
