import { defineEntity, type TransactItem } from '@svc/table';
import * as z from 'zod';

/**
 * Endpoints per organisation (issue 44): at most MAX_ENDPOINTS_PER_ORGANISATION, so one tenant
 * cannot multiply the deliveries each of its events costs the shared workers. Counted by one item
 * in the organisation's partition, written in the same transaction as the endpoint: a create adds
 * one under the condition that the count is below the cap (two racing creates at the cap cannot
 * both pass: DynamoDB evaluates each transaction's conditions against the item as it is when the
 * transaction commits, and conflicting transactions on one item are serialised, see
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html
 * "Isolation levels for DynamoDB transactions"), a delete takes one away.
 */
export const MAX_ENDPOINTS_PER_ORGANISATION = 20;

const countSchema = z.object({ organisation_uuid: z.string(), endpoint_count: z.number() });

export const WEBHOOK_ENDPOINT_COUNT = defineEntity<z.infer<typeof countSchema>, string>({
  name: 'webhook_endpoint_count',
  summary: `How many webhook endpoints an organisation has (at most ${MAX_ENDPOINTS_PER_ORGANISATION}): a counter in its partition.`,
  prefix: 'ORG',
  idShown: '<organisation uuid>',
  sort: 'WEBHOOK_ENDPOINT_COUNT',
  id: (count) => count.organisation_uuid,
  idParts: (organisationUuid) => [organisationUuid],
  byKey: 'the endpoint cap of an organisation',
  storage: {
    toAttributes: ({ endpoint_count }) => ({ endpoint_count }),
    fromAttributes: (item) => ({ ...item, organisation_uuid: String(item.pk).slice('ORG#'.length) }),
  },
  parse: (value) => countSchema.parse(value),
});

/** One more endpoint, if the organisation has fewer than `max` (its condition fails otherwise). */
export function countEndpoint(organisationUuid: string, max = MAX_ENDPOINTS_PER_ORGANISATION): TransactItem {
  return {
    Update: {
      Key: WEBHOOK_ENDPOINT_COUNT.key(organisationUuid),
      UpdateExpression: 'ADD endpoint_count :one',
      ConditionExpression: 'attribute_not_exists(endpoint_count) OR endpoint_count < :max',
      ExpressionAttributeValues: { ':one': 1, ':max': max },
    },
  };
}

/**
 * Endpoints made by the platform itself (an onboarding configuration's initial webhooks): counted,
 * so their deletion releases what it should, but not refused (the operator chose them).
 */
export function countInitialEndpoints(organisationUuid: string, count: number): TransactItem {
  return {
    Update: {
      Key: WEBHOOK_ENDPOINT_COUNT.key(organisationUuid),
      UpdateExpression: 'ADD endpoint_count :count',
      ExpressionAttributeValues: { ':count': count },
    },
  };
}

/**
 * One endpoint fewer. Endpoints made before the counter existed were never counted: the condition
 * keeps the count from going below zero (the caller then deletes without it).
 */
export function releaseEndpoint(organisationUuid: string): TransactItem {
  return {
    Update: {
      Key: WEBHOOK_ENDPOINT_COUNT.key(organisationUuid),
      UpdateExpression: 'ADD endpoint_count :minus',
      ConditionExpression: 'endpoint_count > :zero',
      ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
    },
  };
}
