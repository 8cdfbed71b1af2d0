import { logger, NotFoundError } from '@svc/core';
import { type AnyRoute, defineRoute, type HttpResult, simpleErrorSchema, uuidParams } from '@svc/http';
import { retryOnConflict } from '@svc/table';
import * as z from 'zod';
import { findPendingPayment, findPendingSource, settlePendingSource } from '../domain/approval';
import { storedContext } from '../domain/context';
import { settleFromProvider } from '../domain/provider-updates';
import { receiveAdyenNotifications } from '../providers/adyen/adyen-notifications';
import { AdyenUnavailableError, adyenDetails } from '../providers/adyen/adyen-provider';
import { afterDecision } from './approval-page';

/**
 * Adyen's two ways back to us, neither with an API token: the donor returning from Adyen's page
 * (3-D Secure 2, TWINT) with Adyen's `redirectResult`, addressed by the payment's approval token
 * (the result is submitted to Adyen's `/payments/details`, whose answer settles the payment), and
 * Adyen's HMAC-signed notifications, answered `[accepted]`.
 */
/**
 * Adyen's `redirectResult`: "The result of the redirect as appended to the `returnURL`", at most
 * 20,000 characters (Checkout API v72, PaymentCompletionDetails.redirectResult, maxLength 20000).
 */
const redirectResult = z.string().min(1).max(20_000);
/** The approval token of the returnUrl we gave Adyen. */
const returnToken = z.looseObject({ token: z.string().min(1).max(200) });
const returnQuery = returnToken.extend({ redirectResult });
const returnForm = z.looseObject({ redirectResult });

/**
 * The donor comes back "to your returnURL using the same method" as the redirect to Adyen, and
 * that method "depends on your payment method configuration and the length of the data included
 * in the request, so make sure that your integration can handle both HTTP GET and HTTP POST"
 * (https://docs.adyen.com/checkout/api-only/handling-redirects). A GET carries the result in the
 * URL, where API Gateway's HTTP API takes at most 10,240 bytes of request line and headers
 * ("Total combined size of request line and header values", not adjustable,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html): a longer
 * one never reaches us (the donor's payment still settles by Adyen's notification). A POST carries
 * it as a form field in the body (10 MB there), so a result of 20,000 characters comes through.
 */
const resultPage = (what: string, status: string): HttpResult => ({
  status: 200,
  headers: { 'cache-control': 'no-store' },
  html: `<!doctype html><title>${what} ${status}</title><p role="status">${what} ${status}.</p>`,
});

/** Submits the donor's redirectResult for a payment, and sends them on to its return_url. */
async function paymentReturn(paymentUuid: string, token: string, result: string): Promise<HttpResult> {
  const found = await findPendingPayment(paymentUuid, token);
  if (found.provider !== 'adyen') throw new NotFoundError('Payment not found');
  // Adyen not answering /payments/details leaves the payment as it is (pending): the donor is
  // sent back all the same, and Adyen's AUTHORISATION notification (or the donor's reload,
  // which replays the same call under its idempotency key) settles it.
  const payment =
    (await settleFromProvider(found.uuid, (stored) =>
      adyenDetails(storedContext(stored), result, stored.uuid, stored.provider_reference),
    ).catch((error: unknown) => {
      if (!(error instanceof AdyenUnavailableError)) throw error;
      logger.warn('Adyen did not answer /payments/details; the payment waits for its notification', {
        payment: found.uuid,
        error,
      });
      return found;
    })) ?? found;
  const location = afterDecision(payment.return_url, { payment_uuid: payment.uuid, status: payment.status });
  if (location) return { status: 303, headers: { location, 'cache-control': 'no-store' } };
  return resultPage('Payment', payment.status);
}

/** Submits the donor's redirectResult for a payment source being saved. */
async function sourceReturn(sourceUuid: string, token: string, result: string): Promise<HttpResult> {
  const source = await retryOnConflict(async () => {
    const found = await findPendingSource(sourceUuid, token);
    if (found.provider !== 'adyen') throw new NotFoundError('Payment source not found');
    if (found.status !== 'pending') return found;
    const outcome = await adyenDetails(storedContext(found), result, found.uuid, found.provider_reference).catch(
      (error: unknown) => {
        // As for a payment: no answer leaves the source pending, for the notification or a reload.
        if (!(error instanceof AdyenUnavailableError)) throw error;
        logger.warn('Adyen did not answer /payments/details; the source waits for its notification', {
          source: found.uuid,
          error,
        });
        return undefined;
      },
    );
    if (!outcome) return found;
    const withInstrument =
      outcome.instrumentToken && !found.instrument_token
        ? { ...found, instrument_token: outcome.instrumentToken }
        : found;
    return settlePendingSource(withInstrument, outcome);
  });
  return resultPage('Payment method', source.status);
}

const returnRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/providers/adyen/return/payments/{payment_uuid}',
    auth: 'none',
    limit: 'address',
    operationId: 'adyenPaymentReturn',
    summary:
      "Adyen: the donor's way back after Adyen's page; submits Adyen's redirectResult, settles the payment and redirects to its return_url",
    params: uuidParams('payment_uuid'),
    query: returnQuery,
    responses: { 303: { description: 'Back to the return_url' }, 200: { description: 'Result page', html: true } },
    handle: ({ params, query }) => paymentReturn(params.payment_uuid, query.token, query.redirectResult),
  }),
  defineRoute({
    method: 'POST',
    path: '/providers/adyen/return/payments/{payment_uuid}',
    auth: 'none',
    limit: 'address',
    operationId: 'adyenPaymentReturnPost',
    summary:
      "Adyen: the donor's way back by POST (a redirect Adyen made by POST, or a result too long for a URL); as the GET, with redirectResult a form field",
    params: uuidParams('payment_uuid'),
    query: returnToken,
    accepts: ['form'],
    body: returnForm,
    responses: { 303: { description: 'Back to the return_url' }, 200: { description: 'Result page', html: true } },
    handle: ({ params, query, body }) => paymentReturn(params.payment_uuid, query.token, body.redirectResult),
  }),
  defineRoute({
    method: 'GET',
    path: '/providers/adyen/return/payment-sources/{payment_source_uuid}',
    auth: 'none',
    limit: 'address',
    operationId: 'adyenPaymentSourceReturn',
    summary: "Adyen: the donor's way back after saving a payment method on Adyen's page; settles the source",
    params: uuidParams('payment_source_uuid'),
    query: returnQuery,
    responses: { 200: { description: 'Result page', html: true } },
    handle: ({ params, query }) => sourceReturn(params.payment_source_uuid, query.token, query.redirectResult),
  }),
  defineRoute({
    method: 'POST',
    path: '/providers/adyen/return/payment-sources/{payment_source_uuid}',
    auth: 'none',
    limit: 'address',
    operationId: 'adyenPaymentSourceReturnPost',
    summary:
      "Adyen: the donor's way back by POST after saving a payment method; as the GET, with redirectResult a form field",
    params: uuidParams('payment_source_uuid'),
    query: returnToken,
    accepts: ['form'],
    body: returnForm,
    responses: { 200: { description: 'Result page', html: true } },
    handle: ({ params, query, body }) => sourceReturn(params.payment_source_uuid, query.token, body.redirectResult),
  }),
];

export const adyenRoutes: AnyRoute[] = [
  ...returnRoutes,
  defineRoute({
    method: 'POST',
    path: '/providers/adyen/notifications',
    auth: 'none',
    limit: 'provider-callback',
    operationId: 'adyenNotifications',
    summary:
      'Adyen: standard notifications, every item HMAC-verified (and basic auth when configured); answered [accepted] once applied',
    body: z.unknown(),
    responses: {
      200: { description: 'Applied: the text [accepted]', text: true },
      400: {
        description:
          'Not a batch of Adyen notifications, or an item whose HMAC signature does not match: nothing applied',
      },
      401: { description: 'Basic auth is configured and the request does not carry it', schema: simpleErrorSchema },
      503: { description: 'An item names a payment not written yet: Adyen delivers the batch again' },
    },
    handle: async ({ rawBody, headers }): Promise<HttpResult> => {
      await receiveAdyenNotifications(rawBody, headers.authorization);
      return { status: 200, text: '[accepted]' };
    },
  }),
];
