import { type AnyRoute, defineRoute, uuidParams } from '@svc/http';
import * as z from 'zod';
import { decidePayment, decideSource, findPendingPayment, findPendingSource } from '../domain/approval';
import { afterDecision, approvalPage } from './approval-page';

const tokenQuery = z.object({ token: z.string().min(1).max(200) });
const decisionBody = z.object({ token: z.string().min(1).max(200), decision: z.enum(['approve', 'decline']) });

/** The simulated provider's pages (3-D Secure, TWINT): no API token, the page token decides. */
export const approvalRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/simulated/payments/{payment_uuid}',
    auth: 'none',
    limit: 'address',
    operationId: 'simulatedPaymentApprovalPage',
    summary: "Simulated provider: the donor's approval page for a payment",
    params: uuidParams('payment_uuid'),
    query: tokenQuery,
    responses: { 200: { description: 'HTML page', html: true } },
    handle: async ({ params, query }) => {
      const payment = await findPendingPayment(params.payment_uuid, query.token);
      return {
        status: 200,
        headers: { 'cache-control': 'no-store' },
        html: approvalPage({
          title: payment.payment_method === 'card' ? '3-D Secure check' : 'Approve in TWINT',
          amount: String(payment.amount_minor),
          currency: payment.currency,
          method: payment.payment_method,
          actionUrl: `/simulated/payments/${payment.uuid}`,
          token: query.token,
          status: payment.status,
        }),
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/simulated/payments/{payment_uuid}',
    auth: 'none',
    limit: 'address',
    operationId: 'simulatedPaymentDecision',
    summary: "Simulated provider: the donor's decision; 303 to the payment's return_url",
    params: uuidParams('payment_uuid'),
    accepts: ['form', 'json'],
    body: decisionBody,
    responses: { 303: { description: 'Back to the return_url' }, 200: { description: 'Result page', html: true } },
    handle: async ({ params, body }) => {
      const payment = await decidePayment(params.payment_uuid, body.token, body.decision === 'approve');
      const location = afterDecision(payment.return_url, { payment_uuid: payment.uuid, status: payment.status });
      if (location) return { status: 303, headers: { location } };
      return {
        status: 200,
        html: `<!doctype html><title>Payment ${payment.status}</title><p role="status">Payment ${payment.status}.</p>`,
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/simulated/payment-sources/{payment_source_uuid}',
    auth: 'none',
    limit: 'address',
    operationId: 'simulatedSourceApprovalPage',
    summary: "Simulated provider: the donor's approval page for a payment source",
    params: uuidParams('payment_source_uuid'),
    query: tokenQuery,
    responses: { 200: { description: 'HTML page', html: true } },
    handle: async ({ params, query }) => {
      const source = await findPendingSource(params.payment_source_uuid, query.token);
      return {
        status: 200,
        headers: { 'cache-control': 'no-store' },
        html: approvalPage({
          title: 'Save this payment method',
          amount: '0',
          currency: '',
          method: source.payment_method,
          actionUrl: `/simulated/payment-sources/${source.uuid}`,
          token: query.token,
          status: source.status,
        }),
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/simulated/payment-sources/{payment_source_uuid}',
    auth: 'none',
    limit: 'address',
    operationId: 'simulatedSourceDecision',
    summary: "Simulated provider: the donor's decision on a payment source",
    params: uuidParams('payment_source_uuid'),
    accepts: ['form', 'json'],
    body: decisionBody,
    responses: { 200: { description: 'Result page', html: true } },
    handle: async ({ params, body }) => {
      const source = await decideSource(params.payment_source_uuid, body.token, body.decision === 'approve');
      return {
        status: 200,
        html: `<!doctype html><title>Payment method ${source.status}</title><p role="status">Payment method ${source.status}.</p>`,
      };
    },
  }),
];
