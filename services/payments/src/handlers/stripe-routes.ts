import { NotFoundError } from '@svc/core';
import { type AnyRoute, defineRoute, type HttpResult, uuidParams } from '@svc/http';
import { retryOnConflict } from '@svc/table';
import * as z from 'zod';
import { findPendingPayment, findPendingSource, settlePendingSource } from '../domain/approval';
import { storedContext } from '../domain/context';
import { settleFromProvider } from '../domain/provider-updates';
import { receiveStripeEvent } from '../providers/stripe/stripe-events';
import { stripeProvider } from '../providers/stripe/stripe-provider';
import { afterDecision } from './approval-page';

/**
 * Stripe's two ways back to us, neither with an API token: the donor returning from Stripe's
 * page (3-D Secure, TWINT), addressed by the payment's approval token, and Stripe's signed
 * event deliveries.
 */
export const stripeRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/providers/stripe/return/payments/{payment_uuid}',
    auth: 'none',
    limit: 'address',
    operationId: 'stripePaymentReturn',
    summary: "Stripe: the donor's way back after Stripe's page; settles the payment and redirects to its return_url",
    params: uuidParams('payment_uuid'),
    query: z.looseObject({ token: z.string().min(1).max(200) }),
    responses: { 303: { description: 'Back to the return_url' }, 200: { description: 'Result page', html: true } },
    handle: async ({ params, query }): Promise<HttpResult> => {
      const found = await findPendingPayment(params.payment_uuid, query.token);
      // Only Stripe's payments come back this way.
      if (found.provider !== 'stripe') throw new NotFoundError('Payment not found');
      const payment =
        (await settleFromProvider(found.uuid, (stored) =>
          stripeProvider.outcomeOf(stored.uuid, {
            context: storedContext(stored),
            providerReference: stored.provider_reference,
          }),
        )) ?? found;
      const location = afterDecision(payment.return_url, { payment_uuid: payment.uuid, status: payment.status });
      if (location) return { status: 303, headers: { location, 'cache-control': 'no-store' } };
      return {
        status: 200,
        headers: { 'cache-control': 'no-store' },
        html: `<!doctype html><title>Payment ${payment.status}</title><p role="status">Payment ${payment.status}.</p>`,
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/providers/stripe/return/payment-sources/{payment_source_uuid}',
    auth: 'none',
    limit: 'address',
    operationId: 'stripePaymentSourceReturn',
    summary: "Stripe: the donor's way back after saving a payment method on Stripe's page; settles the source",
    params: uuidParams('payment_source_uuid'),
    query: z.looseObject({ token: z.string().min(1).max(200) }),
    responses: { 200: { description: 'Result page', html: true } },
    handle: async ({ params, query }): Promise<HttpResult> => {
      const source = await retryOnConflict(async () => {
        const found = await findPendingSource(params.payment_source_uuid, query.token);
        if (found.provider !== 'stripe') throw new NotFoundError('Payment source not found');
        if (found.status !== 'pending') return found;
        // The SetupIntent as Stripe has it now (nothing was charged to save the instrument).
        const outcome = await stripeProvider.sourceOutcomeOf({
          context: storedContext(found),
          providerReference: found.provider_reference,
        });
        const withInstrument =
          outcome.instrumentToken && !found.instrument_token
            ? { ...found, instrument_token: outcome.instrumentToken }
            : found;
        return settlePendingSource(withInstrument, outcome);
      });
      return {
        status: 200,
        headers: { 'cache-control': 'no-store' },
        html: `<!doctype html><title>Payment method ${source.status}</title><p role="status">Payment method ${source.status}.</p>`,
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/providers/stripe/events',
    auth: 'none',
    limit: 'provider-callback',
    operationId: 'stripeEvents',
    summary: 'Stripe: event deliveries, verified by their Stripe-Signature; 200 once applied, unknown types ignored',
    body: z.unknown(),
    responses: {
      200: {
        description: 'Received',
        schema: z.object({ received: z.literal(true), applied: z.boolean(), duplicate: z.literal(true).optional() }),
      },
    },
    handle: async ({ rawBody, headers }) => ({
      status: 200,
      body: await receiveStripeEvent(rawBody, headers['stripe-signature']),
    }),
  }),
];
