import { uuidSchema } from '@svc/core';
import { type AnyRoute, defineRoute, uuidParams } from '@svc/http';
import * as z from 'zod';
import {
  changeEndpoint,
  createEndpoint,
  createEndpointInput,
  deleteEndpoint,
  endpointListResponse,
  endpointListShape,
  endpointResponse,
  endpointShape,
  listEndpoints,
  readEndpoint,
  replaceEndpointInput,
  updateEndpointInput,
} from '../domain/endpoints';
import {
  changeEventSubscription,
  createEventSubscription,
  createSubscriptionInput,
  deleteEventSubscription,
  eventSubscriptionResponse,
  eventSubscriptionShape,
  listEventSubscriptions,
  readEventSubscription,
  replaceSubscriptionInput,
  updateSubscriptionInput,
} from '../domain/event-subscriptions';
import {
  listResponses,
  listResponsesQuery,
  readResponse,
  redeliverResponse,
  responseListShape,
  responseShape,
  webhookResponseDetail,
  webhookResponseSummary,
} from '../domain/responses';
import { enqueueDeliveries } from '../pipeline/queue';

const webhookParams = uuidParams('webhook_uuid');
const subscriptionParams = uuidParams('event_subscription_uuid');
const responseParams = uuidParams('webhook_response_uuid');
const listQuery = z.object({ organisation_uuid: uuidSchema.optional(), account_uuid: uuidSchema.optional() });

const createEndpointRoute = (path: string, operationId: string) =>
  defineRoute({
    method: 'POST',
    path,
    auth: 'token',
    operationId,
    summary: 'Create a webhook endpoint',
    description: 'https:// only; password write-only; an hmac_key is generated when none is sent.',
    body: createEndpointInput,
    responses: { 201: { description: 'Webhook endpoint', schema: endpointResponse } },
    handle: async ({ body, principal }) => ({
      status: 201,
      body: await endpointShape(await createEndpoint(principal(), body)),
    }),
  });

const createSubscriptionRoute = (path: string, operationId: string) =>
  defineRoute({
    method: 'POST',
    path,
    auth: 'token',
    operationId,
    summary: 'Create an event subscription',
    body: createSubscriptionInput,
    responses: { 201: { description: 'Event subscription', schema: eventSubscriptionResponse } },
    handle: async ({ body, principal }) => ({
      status: 201,
      body: eventSubscriptionShape(await createEventSubscription(principal(), body)),
    }),
  });

export const webhooksRoutes: AnyRoute[] = [
  createEndpointRoute('/webhooks', 'createWebhookEndpoint'),
  createEndpointRoute('/organisations/webhooks', 'createOrganisationWebhookEndpoint'),
  defineRoute({
    method: 'GET',
    path: '/webhooks',
    auth: 'token',
    operationId: 'listWebhookEndpoints',
    summary: 'List webhook endpoints (organisation_uuid required)',
    query: listQuery,
    responses: { 200: { description: 'Webhook endpoints', schema: z.array(endpointListResponse) } },
    handle: async ({ query, principal }) => ({
      status: 200,
      body: (await listEndpoints(principal(), query.organisation_uuid, query.account_uuid)).map(endpointListShape),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/webhooks/{webhook_uuid}',
    auth: 'token',
    operationId: 'getWebhookEndpoint',
    summary: 'Get a webhook endpoint',
    params: webhookParams,
    responses: { 200: { description: 'Webhook endpoint', schema: endpointResponse } },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: await endpointShape(await readEndpoint(principal(), params.webhook_uuid)),
    }),
  }),
  ...(['PUT', 'PATCH'] as const).map((method) =>
    defineRoute({
      method,
      path: '/webhooks/{webhook_uuid}',
      auth: 'token',
      operationId: method === 'PUT' ? 'replaceWebhookEndpoint' : 'updateWebhookEndpoint',
      summary: method === 'PUT' ? 'Replace a webhook endpoint' : 'Update a webhook endpoint',
      params: webhookParams,
      body: method === 'PUT' ? replaceEndpointInput : updateEndpointInput,
      responses: { 200: { description: 'Webhook endpoint', schema: endpointResponse } },
      handle: async ({ params, body, principal }) => ({
        status: 200,
        body: await endpointShape(
          await changeEndpoint(principal(), params.webhook_uuid, body, method === 'PUT' ? 'replace' : 'update'),
        ),
      }),
    }),
  ),
  defineRoute({
    method: 'DELETE',
    path: '/webhooks/{webhook_uuid}',
    auth: 'token',
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete a webhook endpoint',
    params: webhookParams,
    responses: { 204: { description: 'Deleted' } },
    handle: async ({ params, principal }) => {
      await deleteEndpoint(principal(), params.webhook_uuid);
      return { status: 204 };
    },
  }),
  createSubscriptionRoute('/event-subscriptions', 'createEventSubscription'),
  createSubscriptionRoute('/organisations/event-subscriptions', 'createOrganisationEventSubscription'),
  defineRoute({
    method: 'GET',
    path: '/event-subscriptions',
    auth: 'token',
    operationId: 'listEventSubscriptions',
    summary: 'List event subscriptions (organisation_uuid required)',
    query: listQuery,
    responses: { 200: { description: 'Event subscriptions', schema: z.array(eventSubscriptionResponse) } },
    handle: async ({ query, principal }) => ({
      status: 200,
      body: (await listEventSubscriptions(principal(), query.organisation_uuid, query.account_uuid)).map(
        eventSubscriptionShape,
      ),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/event-subscriptions/{event_subscription_uuid}',
    auth: 'token',
    operationId: 'getEventSubscription',
    summary: 'Get an event subscription',
    params: subscriptionParams,
    responses: { 200: { description: 'Event subscription', schema: eventSubscriptionResponse } },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: eventSubscriptionShape(await readEventSubscription(principal(), params.event_subscription_uuid)),
    }),
  }),
  ...(['PUT', 'PATCH'] as const).map((method) =>
    defineRoute({
      method,
      path: '/event-subscriptions/{event_subscription_uuid}',
      auth: 'token',
      operationId: method === 'PUT' ? 'replaceEventSubscription' : 'updateEventSubscription',
      summary: method === 'PUT' ? 'Replace an event subscription' : 'Update an event subscription',
      params: subscriptionParams,
      body: method === 'PUT' ? replaceSubscriptionInput : updateSubscriptionInput,
      responses: { 200: { description: 'Event subscription', schema: eventSubscriptionResponse } },
      handle: async ({ params, body, principal }) => ({
        status: 200,
        body: eventSubscriptionShape(
          await changeEventSubscription(
            principal(),
            params.event_subscription_uuid,
            body,
            method === 'PUT' ? 'replace' : 'update',
          ),
        ),
      }),
    }),
  ),
  defineRoute({
    method: 'DELETE',
    path: '/event-subscriptions/{event_subscription_uuid}',
    auth: 'token',
    operationId: 'deleteEventSubscription',
    summary: 'Delete an event subscription',
    params: subscriptionParams,
    responses: { 204: { description: 'Deleted' } },
    handle: async ({ params, principal }) => {
      await deleteEventSubscription(principal(), params.event_subscription_uuid);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/webhook-responses',
    auth: 'token',
    operationId: 'listWebhookResponses',
    summary: 'List webhook responses, newest first (organisation_uuid required)',
    query: listResponsesQuery,
    responses: { 200: { description: 'Webhook responses', schema: z.array(webhookResponseSummary) } },
    handle: async ({ query, principal }) => ({
      status: 200,
      body: (await listResponses(principal(), query)).map(responseListShape),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/webhook-responses/{webhook_response_uuid}',
    auth: 'token',
    operationId: 'getWebhookResponse',
    summary: 'Get a webhook response (every field)',
    params: responseParams,
    responses: { 200: { description: 'Webhook response', schema: webhookResponseDetail } },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: responseShape(await readResponse(principal(), params.webhook_response_uuid)),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/webhook-responses/{webhook_response_uuid}/redeliver',
    auth: 'token',
    operationId: 'redeliverEvent',
    summary: 'Send the event of a recorded attempt to its endpoint again',
    params: responseParams,
    responses: { 202: { description: 'Accepted: a new delivery', schema: z.object({ delivery_uuid: z.string() }) } },
    handle: async ({ params, principal }) => {
      const { delivery_uuid } = await redeliverResponse(principal(), params.webhook_response_uuid);
      // The sweeper would send it within a minute anyway; this sends it now.
      await enqueueDeliveries([delivery_uuid]).catch(() => undefined);
      return { status: 202, body: { delivery_uuid } };
    },
  }),
];
