import { freeJsonObject, SEARCH_BODY_LIMITS } from '@svc/core';
import { type AnyRoute, defineRoute, uuidParams } from '@svc/http';
import { searchResponseSchema } from '@svc/search';
import * as z from 'zod';
import { withEarlyCallbacks } from '../domain/early-callbacks';
import { feeQuoteRequest, feeQuoteResponse, quoteFees } from '../domain/fee-quote';
import { initialisePayment } from '../domain/initialise';
import { cancelPayment, changeCustomParameters, getPayment, refundPayment } from '../domain/payments';
import { minorUnits, moneyInput, paymentRequestSchema } from '../domain/request';
import { searchPayments } from '../domain/search';
import {
  paymentResponse,
  paymentShape,
  paymentSourceResponse,
  paymentSourceShape,
  refundResponse,
  refundShape,
} from '../domain/shapes';
import { createPaymentSource, getPaymentSource, replaceSourceCustomParameters } from '../domain/sources';
import { findPayment } from '../repository/payment-repository';
import { findPaymentSource } from '../repository/payment-source-repository';
import { adyenRoutes } from './adyen-routes';
import { approvalRoutes } from './approval-routes';
import { stripeRoutes } from './stripe-routes';

const paymentParams = uuidParams('payment_uuid');
const sourceParams = uuidParams('payment_source_uuid');
const customParameters = freeJsonObject();

export const paymentsRoutes: AnyRoute[] = [
  defineRoute({
    method: 'POST',
    path: '/payments',
    auth: 'token',
    operationId: 'initialisePayment',
    summary: 'Initialise a payment',
    description: 'Card, TWINT or SEPA direct debit through the account profile. Honours Idempotency-Key.',
    body: paymentRequestSchema,
    responses: { 201: { description: 'Payment', schema: paymentResponse } },
    handle: async ({ body, principal, baseUrl }) => ({
      status: 201,
      body: paymentShape(await withEarlyCallbacks(await initialisePayment(principal(), body, baseUrl), findPayment)),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/payments/fee-quotes',
    auth: 'token',
    readOnly: true,
    operationId: 'quotePaymentFees',
    summary: 'Quote the total a payment with cover_fees would charge (for a donation form)',
    description:
      'The amount, intended_amount and fee_cover_amount of a payment of `amount` on the profile with `cover_fees: true`, at the candidate a new payment would try first. Nothing is charged or stored. 400 on `profile` when the profile has no fees.',
    body: feeQuoteRequest,
    responses: {
      200: { description: 'The three figures, and the fees they cover', schema: feeQuoteResponse },
      400: { description: 'Invalid input, an unknown profile, or a profile without fees' },
      403: { description: 'The account is not granted to the caller' },
      404: { description: 'No such account' },
    },
    handle: async ({ body, principal }) => ({ status: 200, body: await quoteFees(principal(), body) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/payments/{payment_uuid}',
    auth: 'token',
    operationId: 'getPayment',
    summary: 'Get a payment',
    params: paymentParams,
    responses: { 200: { description: 'Payment', schema: paymentResponse } },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: paymentShape(await getPayment(principal(), params.payment_uuid)),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/payments/{payment_uuid}/cancel',
    auth: 'token',
    operationId: 'cancelPayment',
    summary: 'Cancel a pending payment',
    params: paymentParams,
    body: z
      .object({ reason: z.string().max(500).optional() })
      .strict()
      .optional(),
    responses: { 200: { description: 'Payment', schema: paymentResponse } },
    handle: async ({ params, body, principal }) => ({
      status: 200,
      body: paymentShape(await cancelPayment(principal(), params.payment_uuid, body?.reason)),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/payments/{payment_uuid}/refunds',
    auth: 'token',
    operationId: 'createRefund',
    summary: 'Refund a payment (the whole residual without an amount)',
    description: 'Honours Idempotency-Key.',
    params: paymentParams,
    body: z.object({ amount: moneyInput.optional() }).strict().optional(),
    responses: {
      200: { description: 'Refund', schema: refundResponse },
      409: { description: 'Too many concurrent changes to the payment (its other refunds won every race): send again' },
    },
    handle: async ({ params, body, principal }) => {
      const amount = body?.amount ? { minor: minorUnits(body.amount), currency: body.amount.currency } : undefined;
      const { payment, refund } = await refundPayment(principal(), params.payment_uuid, amount);
      return { status: 200, body: refundShape(refund, payment) };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/payments/{payment_uuid}/custom-parameters',
    auth: 'token',
    operationId: 'replacePaymentCustomParameters',
    summary: "Replace a payment's custom parameters",
    params: paymentParams,
    body: customParameters,
    responses: { 200: { description: 'Payment', schema: paymentResponse } },
    handle: async ({ params, body, principal }) => ({
      status: 200,
      body: paymentShape(await changeCustomParameters(principal(), params.payment_uuid, body, 'replace')),
    }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/payments/{payment_uuid}/custom-parameters',
    auth: 'token',
    operationId: 'patchPaymentCustomParameters',
    summary: "Merge into a payment's custom parameters",
    params: paymentParams,
    body: customParameters,
    responses: { 200: { description: 'Payment', schema: paymentResponse } },
    handle: async ({ params, body, principal }) => ({
      status: 200,
      body: paymentShape(await changeCustomParameters(principal(), params.payment_uuid, body, 'merge')),
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/search/payments',
    auth: 'token',
    readOnly: true,
    operationId: 'searchPayments',
    summary: 'Search payments with the search language',
    body: freeJsonObject(SEARCH_BODY_LIMITS),
    responses: { 200: { description: 'Search response', schema: searchResponseSchema(paymentResponse) } },
    handle: async ({ body, principal }) => ({ status: 200, body: await searchPayments(principal(), body) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/payment-sources',
    auth: 'token',
    operationId: 'createPaymentSource',
    summary: 'Create a payment source',
    description:
      'Same request as a payment. Nothing is charged: a provider that verifies instruments does so without a charge (Stripe: a SetupIntent; 3-D Secure and TWINT leave the source pending with an action until the donor approves).',
    body: paymentRequestSchema,
    responses: { 201: { description: 'Payment source', schema: paymentSourceResponse } },
    handle: async ({ body, principal, baseUrl }) => ({
      status: 201,
      body: paymentSourceShape(
        await withEarlyCallbacks(await createPaymentSource(principal(), body, baseUrl), findPaymentSource),
      ),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/payment-sources/{payment_source_uuid}',
    auth: 'token',
    operationId: 'getPaymentSource',
    summary: 'Get a payment source',
    params: sourceParams,
    responses: { 200: { description: 'Payment source', schema: paymentSourceResponse } },
    handle: async ({ params, principal }) => ({
      status: 200,
      body: paymentSourceShape(await getPaymentSource(principal(), params.payment_source_uuid)),
    }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/payment-sources/{payment_source_uuid}/custom-parameters',
    auth: 'token',
    operationId: 'replacePaymentSourceCustomParameters',
    summary: "Replace a payment source's custom parameters",
    params: sourceParams,
    body: customParameters,
    responses: { 200: { description: 'Payment source', schema: paymentSourceResponse } },
    handle: async ({ params, body, principal }) => ({
      status: 200,
      body: paymentSourceShape(await replaceSourceCustomParameters(principal(), params.payment_source_uuid, body)),
    }),
  }),
  ...approvalRoutes,
  ...stripeRoutes,
  ...adyenRoutes,
];
