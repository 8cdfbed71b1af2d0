import { deferred } from '@svc/core';
import { type AnyRoute, defineRoute, type HttpResult, simpleErrorSchema, uuidParams } from '@svc/http';
import { donorReceiptPdf, donorReceipts, receiptNumber, receiptResponse, receiptShape } from '@svc/receipts';
import { subscriptionResponse } from '@svc/subscriptions';
import * as z from 'zod';
import {
  cancelDonorSubscription,
  cancelInput,
  changeDonorTerms,
  donorPayments,
  donorSubscriptions,
  pauseDonorSubscription,
  pauseInput,
  paymentsQuery,
  resumeDonorSubscription,
  skipDonorCharge,
  skipInput,
  termsInput,
} from '../domain/manage';
import { changePaymentMethod, paymentMethodInput, sendCode } from '../domain/payment-method';
import { checkCsrf, type PortalSession, requirePortalSession } from '../session/sessions';

/**
 * The portal's JSON API (contract section 12): what the pages do, for a donor's own script or a
 * charity's app. Every route needs the portal session cookie; every change also the session's
 * CSRF token in `X-CSRF-Token` (each portal page carries it in `<meta name="csrf-token">`).
 * Subscriptions are shown as their API GET shows them; amounts are integers in minor units.
 */
const subscriptionParams = uuidParams('subscription_uuid');
const subscriptionList = deferred(() => z.array(subscriptionResponse));
const paymentsResponse = deferred(() =>
  z.object({
    year: z.number().int(),
    payments: z.array(z.record(z.string(), z.unknown())).meta({ description: 'Each as GET /payments/{uuid} shows it' }),
  }),
);
const receiptList = deferred(() => z.array(receiptResponse));
const codeResponse = z.object({ expires_at: z.number().int().meta({ description: 'Unix seconds: 10 minutes on' }) });
const methodResponse = deferred(() =>
  z.object({
    subscription: subscriptionResponse,
    status: z.enum(['active', 'pending']).meta({ description: 'pending: the donor must approve it at redirect_url' }),
    redirect_url: z.string().optional(),
  }),
);

const NO_STORE = { 'cache-control': 'no-store' };
const SESSION_ERRORS = {
  401: {
    description: 'No portal session, or it ended (30 minutes idle, 2 hours at most)',
    schema: simpleErrorSchema,
  },
  429: { description: 'Too many requests from this address' },
} as const;
const CHANGE_ERRORS = {
  ...SESSION_ERRORS,
  400: { description: 'Invalid input, or outside what the organisation allows (min/max, intervals, reasons)' },
  403: { description: 'The X-CSRF-Token header is missing or wrong' },
  404: { description: 'Not one of the donor’s subscriptions' },
  409: { description: 'Not allowed now: the subscription’s state, or the organisation turned the feature off' },
} as const;

interface Request {
  cookies: Readonly<Record<string, string>>;
  headers: Readonly<Record<string, string | undefined>>;
  body?: unknown;
}

/** The signed-in donor of a change: the session, and its CSRF token matched. */
async function changer(request: Request): Promise<PortalSession> {
  const session = await requirePortalSession(request);
  checkCsrf({ headers: request.headers, body: undefined }, session);
  return session;
}

const json = (status: number, body: unknown): HttpResult => ({ status, headers: NO_STORE, body });

/** A change to one of the donor's subscriptions: POST (or PATCH) with the session and its CSRF token. */
function changeRoute<B extends z.ZodType>(spec: {
  method?: 'POST' | 'PATCH';
  path: string;
  operationId: string;
  summary: string;
  body?: B;
  run: (session: PortalSession, uuid: string, body: z.output<B>) => Promise<unknown>;
}): AnyRoute {
  return defineRoute({
    method: spec.method ?? 'POST',
    path: spec.path,
    auth: 'none',
    limit: 'address',
    operationId: spec.operationId,
    summary: spec.summary,
    params: subscriptionParams,
    ...(spec.body ? { body: spec.body } : {}),
    responses: {
      200: { description: 'The subscription, as GET /subscriptions/{uuid} shows it', schema: subscriptionResponse },
      ...CHANGE_ERRORS,
    },
    handle: async (request: Request & { params: { subscription_uuid: string } }) => {
      const session = await changer(request);
      return json(200, await spec.run(session, request.params.subscription_uuid, request.body as z.output<B>));
    },
  });
}

const path = (action: string) => `/portal/api/subscriptions/{subscription_uuid}/${action}`;

export const portalApiRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/portal/api/subscriptions',
    auth: 'none',
    limit: 'address',
    operationId: 'portalListSubscriptions',
    summary: 'The signed-in donor’s subscriptions in the organisation (the portal session cookie)',
    responses: {
      200: { description: 'Each as GET /subscriptions/{uuid} shows it', schema: subscriptionList },
      ...SESSION_ERRORS,
    },
    handle: async ({ cookies }) => {
      const session = await requirePortalSession({ cookies });
      return json(200, await donorSubscriptions(session));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/portal/api/payments',
    auth: 'none',
    limit: 'address',
    operationId: 'portalListPayments',
    summary: 'The signed-in donor’s gifts of a year (UTC), newest first',
    query: paymentsQuery,
    responses: {
      200: { description: 'The year’s gifts', schema: paymentsResponse },
      400: { description: 'year missing or out of range' },
      ...SESSION_ERRORS,
    },
    handle: async ({ cookies, query }) => {
      const session = await requirePortalSession({ cookies });
      return json(200, await donorPayments(session, query.year));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/portal/api/receipts',
    auth: 'none',
    limit: 'address',
    operationId: 'portalListReceipts',
    summary: 'The signed-in donor’s yearly receipts from the organisation, newest year first (voided ones marked)',
    responses: {
      200: { description: 'Each as GET /receipts/{uuid} shows it', schema: receiptList },
      ...SESSION_ERRORS,
    },
    handle: async ({ cookies }) => {
      const session = await requirePortalSession({ cookies });
      return json(200, (await donorReceipts(session.organisation_uuid, session.supporter_uuid)).map(receiptShape));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/portal/receipts/{receipt_uuid}/pdf',
    auth: 'none',
    limit: 'address',
    operationId: 'portalReceiptPdf',
    summary: 'One of the signed-in donor’s receipts as a PDF',
    params: uuidParams('receipt_uuid'),
    responses: {
      200: { description: 'The document', media: 'application/pdf' },
      404: { description: 'Not one of the donor’s receipts' },
      ...SESSION_ERRORS,
    },
    handle: async ({ cookies, params }) => {
      const session = await requirePortalSession({ cookies });
      const { receipt, bytes } = await donorReceiptPdf(
        session.organisation_uuid,
        session.supporter_uuid,
        params.receipt_uuid,
      );
      return {
        status: 200,
        headers: { ...NO_STORE, 'content-disposition': `inline; filename="receipt-${receiptNumber(receipt)}.pdf"` },
        binary: { contentType: 'application/pdf', bytes },
      };
    },
  }),
  changeRoute({
    method: 'PATCH',
    path: '/portal/api/subscriptions/{subscription_uuid}',
    operationId: 'portalChangeSubscription',
    summary:
      'Change the amount, whether the donor covers the fees (`cover_fees`), the interval or the next charge date (from the next charge, no proration)',
    body: termsInput,
    run: (session, uuid, body) => changeDonorTerms(session, uuid, body),
  }),
  changeRoute({
    path: path('skip'),
    operationId: 'portalSkipCharge',
    summary: 'Skip the next charge (`due_date`: the next_due_date, as YYYY-MM-DD or as GET shows it)',
    body: skipInput,
    run: (session, uuid, body) => skipDonorCharge(session, uuid, body),
  }),
  changeRoute({
    path: path('pause'),
    operationId: 'portalPauseSubscription',
    summary: 'Pause from today, until `resume_on` or until resumed (the billing grid kept, no catch-up)',
    body: pauseInput,
    run: (session, uuid, body) => pauseDonorSubscription(session, uuid, body),
  }),
  changeRoute({
    path: path('resume'),
    operationId: 'portalResumeSubscription',
    summary: 'Resume a paused subscription from its next due day on the grid',
    run: (session, uuid) => resumeDonorSubscription(session, uuid),
  }),
  changeRoute({
    path: path('cancel'),
    operationId: 'portalCancelSubscription',
    summary: 'Cancel, with a reason from the organisation’s list and an optional comment',
    body: cancelInput,
    run: (session, uuid, body) => cancelDonorSubscription(session, uuid, body),
  }),
  defineRoute({
    method: 'POST',
    path: '/portal/api/codes',
    auth: 'none',
    limit: 'address',
    operationId: 'portalSendCode',
    summary: 'Mail a one-time code to the donor (needed to change the payment method; one a minute)',
    responses: {
      202: { description: 'Mailed: six digits, valid 10 minutes, 5 guesses', schema: codeResponse },
      ...CHANGE_ERRORS,
      429: { description: 'A code was mailed less than a minute ago, or too many requests from this address' },
    },
    handle: async (request) => {
      const session = await changer(request);
      return json(202, await sendCode(session, session.locale));
    },
  }),
  defineRoute({
    method: 'POST',
    path: path('payment-method'),
    auth: 'none',
    limit: 'address',
    operationId: 'portalChangePaymentMethod',
    summary:
      'A new payment method for the subscription, with the mailed code (the old one is kept until the new one is active)',
    params: subscriptionParams,
    body: paymentMethodInput,
    responses: {
      200: {
        description: 'The new method: active, or pending with the redirect to approve it',
        schema: methodResponse,
      },
      ...CHANGE_ERRORS,
    },
    handle: async (request) => {
      const session = await changer(request);
      return json(
        200,
        await changePaymentMethod(
          session,
          request.params.subscription_uuid,
          request.body,
          request.baseUrl,
          `${request.baseUrl}/portal/returned?method=${request.params.subscription_uuid}`,
        ),
      );
    },
  }),
];
