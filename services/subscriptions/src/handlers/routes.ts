import { freeJsonObject, SEARCH_BODY_LIMITS, uuidSchema } from '@svc/core';
import { type AnyRoute, defineRoute, uuidParams } from '@svc/http';
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
  planShape,
  updatePlan,
  updatePlanInput,
} from '../domain/plans';
import { searchSubscriptions } from '../domain/search';
import { chargeAttemptShape, invoiceShape, subscriptionResponse } from '../domain/shapes';
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
const parameters = z.record(z.string(), z.unknown());

const dunningOut = z.object({
  retry_delays_days: z.array(z.number().int()),
  max_consecutive_failed_invoices: z.number().int(),
  on_max_failed: z.enum(['cancel', 'suspend']),
});
const planOut = z.looseObject({
  uuid: z.string(),
  organisation_uuid: z.string().optional(),
  account_uuid: z.string().optional(),
  name: z.string(),
  is_default: z.boolean(),
  dunning_configuration: dunningOut,
  notification_configuration: z.object({
    supporter_receipts: z.boolean(),
    failure_recipient_emails: z.array(z.string()),
  }),
});
const subscriptionOut = z.looseObject({
  uuid: z.string(),
  organisation_uuid: z.string(),
  account_uuid: z.string(),
  supporter_uuid: z.string().optional(),
  subscription_plan: z.object({ uuid: z.string(), name: z.string() }),
  payment_source_uuid: z.string(),
  currency: z.string(),
  amount: z.number().int(),
  timezone: z.string(),
  next_due_date: z.number().int().optional(),
  subscription_status: z.enum(['pending', 'active', 'suspended', 'cancelled', 'finished']),
  recurring_interval: z.string(),
  consecutive_failed_invoices: z.number().int(),
  test_mode: z.boolean(),
  custom_parameters: parameters,
  svc_parameters: parameters,
});
const invoiceOut = z.looseObject({
  uuid: z.string(),
  subscription: z.object({ uuid: z.string() }),
  created: z.number().int(),
  status: z.enum(['open', 'paid', 'cancelled']),
  amount: z.number().int(),
  refunded_amount: z.number().int(),
  currency: z.string(),
  next_attempt_date: z.number().int().optional(),
  failed_payment_attempts: z.number().int(),
  is_manually_created: z.boolean(),
  charge_attempts: z.array(z.object({ uuid: z.string(), status: z.string(), created: z.number().int() })),
});
const chargeAttemptOut = z.looseObject({
  uuid: z.string(),
  created: z.number().int(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  payment_uuid: z.string(),
  invoice: invoiceOut,
  subscription: subscriptionOut,
});
const searchOut = z.object({
  summary: z.object({ hits: z.number().int(), last_sort_values: z.array(z.unknown()) }),
  hits: z.array(z.record(z.string(), z.unknown())),
  aggregations: z.record(z.string(), z.array(z.record(z.string(), z.unknown()))),
});

const subscriptionResult = (status: number) => async (subscription: Parameters<typeof subscriptionResponse>[0]) => ({
  status,
  body: await subscriptionResponse(subscription),
});

export const subscriptionsRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/subscription-plans',
    auth: 'token',
    operationId: 'listSubscriptionPlans',
    summary: 'List subscription plans (the global default plan first)',
    query: z.object({ organisation_uuid: uuidSchema.optional() }),
    responses: { 200: { description: 'Plans', schema: z.array(planOut) } },
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
    responses: { 201: { description: 'Plan', schema: planOut } },
    handle: async ({ body, principal }) => ({ status: 201, body: planShape(await createPlan(principal(), body)) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/subscription-plans/{plan_uuid}',
    auth: 'token',
    operationId: 'getSubscriptionPlan',
    summary: 'Get a subscription plan',
    params: planParams,
    responses: { 200: { description: 'Plan', schema: planOut } },
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
    responses: { 200: { description: 'Plan', schema: planOut } },
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
    responses: { 201: { description: 'Subscription', schema: subscriptionOut } },
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
      responses: { 200: { description: 'Subscription', schema: subscriptionOut } },
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
    responses: { 200: { description: 'Subscription', schema: subscriptionOut } },
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
    responses: { 200: { description: 'Subscription', schema: subscriptionOut } },
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
    responses: { 200: { description: 'Subscription', schema: subscriptionOut } },
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
    responses: { 200: { description: 'Subscription', schema: subscriptionOut } },
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
    responses: { 200: { description: 'Search response', schema: searchOut } },
    handle: async ({ body, principal }) => ({ status: 200, body: await searchSubscriptions(principal(), body) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/subscriptions/{subscription_uuid}/invoices',
    auth: 'token',
    operationId: 'listInvoices',
    summary: 'List the invoices of a subscription (oldest first)',
    params: subscriptionParams,
    responses: { 200: { description: 'Invoices', schema: z.array(invoiceOut) } },
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
    responses: { 201: { description: 'Invoice', schema: invoiceOut } },
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
    responses: { 200: { description: 'Invoice', schema: invoiceOut } },
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
    responses: { 200: { description: 'Invoice', schema: invoiceOut } },
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
    responses: { 201: { description: 'Charge attempt, with the provider’s answer', schema: chargeAttemptOut } },
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
