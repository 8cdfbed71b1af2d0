import { freeJsonObject, SEARCH_BODY_LIMITS, uuidSchema } from '@svc/core';
import { type AnyRoute, defineRoute, uuidParams } from '@svc/http';
import { searchResponseSchema } from '@svc/search';
import * as z from 'zod';
import {
  closeInvoice,
  closeInvoiceInput,
  createChargeAttempt,
  createInvoice,
  createInvoiceInput,
  getInvoice,
  listInvoices,
} from '../domain/invoices';
import {
  createPlan,
  createPlanInput,
  getPlan,
  listPlans,
  planResponse,
  planShape,
  updatePlan,
  updatePlanInput,
} from '../domain/plans';
import { searchSubscriptions } from '../domain/search';
import {
  chargeAttemptResponse,
  chargeAttemptShape,
  invoiceResponse,
  invoiceShape,
  shapedSubscription,
  subscriptionResponse,
} from '../domain/shapes';
import {
  activateSubscription,
  cancelSubscription,
  createSubscription,
  createSubscriptionInput,
  readSubscription,
  suspendInput,
  suspendSubscription,
  updateSubscription,
  updateSubscriptionInput,
} from '../domain/subscriptions';

const planParams = uuidParams('plan_uuid');
const subscriptionParams = uuidParams('subscription_uuid');
const invoiceParams = uuidParams('subscription_uuid', 'invoice_uuid');

const subscriptionResult = (status: number) => async (subscription: Parameters<typeof shapedSubscription>[0]) => ({
  status,
  body: await shapedSubscription(subscription),
});

export const subscriptionsRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/subscription-plans',
    auth: 'token',
    operationId: 'listSubscriptionPlans',
    summary: 'List subscription plans (the global default plan first)',
    query: z.object({ organisation_uuid: uuidSchema.optional() }),
    responses: { 200: { description: 'Plans', schema: z.array(planResponse) } },
    handle: async ({ query, principal }) => ({
      status: 200,
      body: (await listPlans(principal(), query.organisation_uuid)).map(planShape),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/subscription-plans',
    auth: 'token',
    operationId: 'createSubscriptionPlan',
    summary: 'Create a subscription plan',
    description: 'A second default plan of an organisation is 409; unset is_default on the first one before.',
    body: createPlanInput,
    responses: { 201: { description: 'Plan', schema: planResponse } },
    handle: async ({ body, principal }) => ({ status: 201, body: planShape(await createPlan(principal(), body)) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/subscription-plans/{plan_uuid}',
    auth: 'token',
    operationId: 'getSubscriptionPlan',
    summary: 'Get a subscription plan',
    params: planParams,
    responses: { 200: { description: 'Plan', schema: planResponse } },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: planShape(await getPlan(principal(), params.plan_uuid)),
    }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/subscription-plans/{plan_uuid}',
    auth: 'token',
    operationId: 'updateSubscriptionPlan',
    summary: 'Update a subscription plan',
    params: planParams,
    body: updatePlanInput,
    responses: { 200: { description: 'Plan', schema: planResponse } },
    handle: async ({ params, body, principal }) => ({
      status: 200,
      body: planShape(await updatePlan(principal(), params.plan_uuid, body)),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/subscriptions',
    auth: 'token',
    operationId: 'createSubscription',
    summary: 'Create a subscription',
    description: 'Honours Idempotency-Key.',
    body: createSubscriptionInput,
    responses: { 201: { description: 'Subscription', schema: subscriptionResponse } },
    handle: async ({ body, principal }) => subscriptionResult(201)(await createSubscription(principal(), body)),
  }),
  ...(['GET', 'POST'] as const).map((method) =>
    defineRoute({
      method,
      path: '/subscriptions/{subscription_uuid}',
      auth: 'token',
      readOnly: true,
      operationId: method === 'GET' ? 'getSubscription' : 'getSubscriptionByPost',
      summary: 'Get a subscription',
      params: subscriptionParams,
      responses: { 200: { description: 'Subscription', schema: subscriptionResponse } },
      handle: async ({ params, principal }) =>
        subscriptionResult(200)(await readSubscription(principal(), params.subscription_uuid)),
    }),
  ),
  defineRoute({
    method: 'PATCH',
    path: '/subscriptions/{subscription_uuid}',
    auth: 'token',
    operationId: 'updateSubscription',
    summary: 'Update a subscription (the supporter only while unset)',
    params: subscriptionParams,
    body: updateSubscriptionInput,
    responses: { 200: { description: 'Subscription', schema: subscriptionResponse } },
    handle: async ({ params, body, principal }) =>
      subscriptionResult(200)(await updateSubscription(principal(), params.subscription_uuid, body)),
  }),
  defineRoute({
    method: 'POST',
    path: '/subscriptions/{subscription_uuid}/activate',
    auth: 'token',
    operationId: 'activateSubscription',
    summary: 'Activate a pending or suspended subscription',
    params: subscriptionParams,
    responses: { 200: { description: 'Subscription', schema: subscriptionResponse } },
    handle: async ({ params, principal }) =>
      subscriptionResult(200)(await activateSubscription(principal(), params.subscription_uuid)),
  }),
  defineRoute({
    method: 'POST',
    path: '/subscriptions/{subscription_uuid}/cancel',
    auth: 'token',
    operationId: 'cancelSubscription',
    summary: 'Cancel a subscription',
    params: subscriptionParams,
    responses: { 200: { description: 'Subscription', schema: subscriptionResponse } },
    handle: async ({ params, principal }) =>
      subscriptionResult(200)(await cancelSubscription(principal(), params.subscription_uuid)),
  }),
  defineRoute({
    method: 'POST',
    path: '/subscriptions/{subscription_uuid}/suspend',
    auth: 'token',
    operationId: 'suspendSubscription',
    summary: 'Suspend a subscription, or change the end of the suspension in force',
    params: subscriptionParams,
    body: suspendInput.optional(),
    responses: { 200: { description: 'Subscription', schema: subscriptionResponse } },
    handle: async ({ params, body, principal }) =>
      subscriptionResult(200)(await suspendSubscription(principal(), params.subscription_uuid, body)),
  }),
  defineRoute({
    method: 'POST',
    path: '/search/subscriptions',
    auth: 'token',
    readOnly: true,
    operationId: 'searchSubscriptions',
    summary: 'Search subscriptions with the search language',
    body: freeJsonObject(SEARCH_BODY_LIMITS),
    responses: { 200: { description: 'Search response', schema: searchResponseSchema(subscriptionResponse) } },
    handle: async ({ body, principal }) => ({ status: 200, body: await searchSubscriptions(principal(), body) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/subscriptions/{subscription_uuid}/invoices',
    auth: 'token',
    operationId: 'listInvoices',
    summary: 'List the invoices of a subscription (oldest first)',
    params: subscriptionParams,
    responses: { 200: { description: 'Invoices', schema: z.array(invoiceResponse) } },
    handle: async ({ params, principal }) => {
      const { invoices } = await listInvoices(principal(), params.subscription_uuid);
      return { status: 200, body: await Promise.all(invoices.map(invoiceShape)) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/subscriptions/{subscription_uuid}/invoices',
    auth: 'token',
    operationId: 'createInvoice',
    summary: 'Create a manual invoice (charged only by the charge attempts you create)',
    params: subscriptionParams,
    body: createInvoiceInput.optional(),
    responses: { 201: { description: 'Invoice', schema: invoiceResponse } },
    handle: async ({ params, body, principal }) => {
      const { invoice } = await createInvoice(principal(), params.subscription_uuid, body ?? {});
      return { status: 201, body: await invoiceShape(invoice) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/subscriptions/{subscription_uuid}/invoices/{invoice_uuid}',
    auth: 'token',
    operationId: 'getInvoice',
    summary: 'Get an invoice',
    params: invoiceParams,
    responses: { 200: { description: 'Invoice', schema: invoiceResponse } },
    handle: async ({ params, principal }) => {
      const { invoice } = await getInvoice(principal(), params.subscription_uuid, params.invoice_uuid);
      return { status: 200, body: await invoiceShape(invoice) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/subscriptions/{subscription_uuid}/invoices/{invoice_uuid}/close',
    auth: 'token',
    operationId: 'closeInvoice',
    summary: 'Close an open invoice as paid or cancelled',
    params: invoiceParams,
    body: closeInvoiceInput,
    responses: { 200: { description: 'Invoice', schema: invoiceResponse } },
    handle: async ({ params, body, principal }) => {
      const { invoice } = await closeInvoice(principal(), params.subscription_uuid, params.invoice_uuid, body.status);
      return { status: 200, body: await invoiceShape(invoice) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/subscriptions/{subscription_uuid}/invoices/{invoice_uuid}/charge-attempts',
    auth: 'token',
    operationId: 'createChargeAttempt',
    summary: 'Charge an invoice now (409 when paid or while an attempt is pending)',
    params: invoiceParams,
    responses: { 201: { description: 'Charge attempt, with the provider’s answer', schema: chargeAttemptResponse } },
    handle: async ({ params, principal }) => {
      const { attempt, invoice, subscription } = await createChargeAttempt(
        principal(),
        params.subscription_uuid,
        params.invoice_uuid,
      );
      return { status: 201, body: await chargeAttemptShape(attempt, invoice, subscription) };
    },
  }),
];
