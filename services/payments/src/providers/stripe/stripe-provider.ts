import { deferred, isValidIban, parseOrThrow, ValidationError } from '@svc/core';
import type Stripe from 'stripe';
import * as z from 'zod';
import { rawCardSchema } from '../card-rules';
import { maskIban } from '../iban';
import type { Authorisation, AuthoriseRequest, PaymentAtProvider, PaymentProvider, ProviderContext } from '../provider';
import { keyName, stripeClient } from './stripe-config';
import { classifyError, intentOutcome, maskedPaymentMethod, refundOutcome, setupOutcome } from './stripe-mapping';

/**
 * Stripe, through its official SDK. Each payment is a PaymentIntent created and confirmed in one
 * call; a method that needs the donor (3-D Secure, TWINT) answers with Stripe's redirect, and
 * Stripe sends the donor back to our return endpoint. A SEPA debit stays `processing` for days
 * and is settled by Stripe's events.
 *
 * Every call carries an idempotency key `<our uuid>:<operation>` and our uuids as metadata, and
 * goes to the profile's connected account (`Stripe-Account`) when it names one. An answer that
 * does not come (timeout, network, 5xx) is an unknown outcome: the payment stays pending with
 * `provider_unavailable` and is resolved by asking again under the same key, which Stripe
 * answers with the first result: never a second charge.
 */
export class ProviderUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`Stripe did not answer: ${message}`, options);
    this.name = 'ProviderUnavailableError';
  }
}

// `deferred`: built at the first Stripe payment of each method, not at the function's cold start.
const cardInput = deferred(() =>
  z.union([
    z
      .object({
        payment_method: z.string().regex(/^pm_[A-Za-z0-9_]{1,200}$/, 'A Stripe PaymentMethod id (pm_…)'),
      })
      .strict(),
    rawCardSchema.strict(),
  ]),
);

const sepaInput = deferred(() =>
  z
    .object({
      iban: z.string().max(50),
      account_holder: z.string().min(1).max(200),
      email: z.email().max(254).optional(),
    })
    .strict(),
);

type CreateParams = Stripe.PaymentIntentCreateParams;

function requestOptions(context: ProviderContext, idempotencyKey: string): Stripe.RequestOptions {
  const account = context.profile.stripe_account;
  return { idempotencyKey, ...(account ? { stripeAccount: account } : {}) };
}

async function clientFor(context: ProviderContext): Promise<Stripe> {
  const client = await stripeClient(context.testMode);
  // unusableFor refused the payment before; a key removed since is an error of the deployment.
  if (!client)
    throw new Error(`No Stripe key for ${context.testMode ? 'test' : 'live'} payments (${keyName(context.testMode)})`);
  return client;
}

/** The method-specific part of a PaymentIntent, and what is safe to keep of the input. */
function methodParams(request: AuthoriseRequest): { params: Partial<CreateParams>; masked: Record<string, unknown> } {
  const { method, paymentInformation, context } = request;
  switch (method) {
    case 'card': {
      const card = parseOrThrow(cardInput, paymentInformation ?? {}, 'payment_information');
      if ('payment_method' in card) return { params: { payment_method: card.payment_method }, masked: {} };
      if (!context.profile.raw_card_data) {
        throw ValidationError.field(
          'payment_information',
          'error.validation.not_valid',
          'This profile takes a Stripe PaymentMethod id ({"payment_method": "pm_…"}, from Stripe.js); raw card data is not allowed',
        );
      }
      // Forwarded to Stripe and never kept: only what Stripe's PaymentMethod shows is stored.
      return {
        params: {
          payment_method_data: {
            type: 'card',
            card: { number: card.number, exp_month: card.expiry_month, exp_year: card.expiry_year, cvc: card.cvv },
            ...(card.cardholder ? { billing_details: { name: card.cardholder } } : {}),
          } as Stripe.PaymentIntentCreateParams.PaymentMethodData,
        },
        masked: {},
      };
    }
    case 'twint':
      if (request.amount.currency !== 'CHF') {
        throw ValidationError.field('amount.currency', 'error.validation.not_valid', 'TWINT takes CHF only');
      }
      return { params: { payment_method_data: { type: 'twint' } }, masked: {} };
    case 'sepa_dd': {
      const sepa = parseOrThrow(sepaInput, paymentInformation ?? {}, 'payment_information');
      if (!isValidIban(sepa.iban)) {
        throw ValidationError.field('payment_information.iban', 'error.validation.not_valid', 'This IBAN is not valid');
      }
      return {
        params: {
          payment_method_data: {
            type: 'sepa_debit',
            sepa_debit: { iban: sepa.iban },
            billing_details: { name: sepa.account_holder, ...(sepa.email ? { email: sepa.email } : {}) },
          },
          mandate_data: mandateData(request),
        },
        masked: { iban: maskIban(sepa.iban), account_holder: sepa.account_holder },
      };
    }
  }
}

/** The mandate records the donor's acceptance: from this request's address and browser. */
function mandateData(request: AuthoriseRequest): Stripe.PaymentIntentCreateParams.MandateData {
  return {
    customer_acceptance: {
      type: 'online',
      online: {
        ip_address: request.donor?.ipAddress ?? '0.0.0.0',
        user_agent: request.donor?.userAgent ?? 'unknown',
      },
    },
  };
}

/** Our instrument token of a saved Stripe payment method: the customer and the method. */
export function instrumentToken(customer: string, paymentMethod: string): string {
  return `stripe:${customer}:${paymentMethod}`;
}

function parseInstrument(token: string): { customer: string; paymentMethod: string } {
  const [scheme, customer, paymentMethod] = token.split(':');
  if (scheme !== 'stripe' || !customer || !paymentMethod) throw new Error('Not a Stripe instrument token');
  return { customer, paymentMethod };
}

function idOf(value: string | { id: string } | null | undefined): string | undefined {
  if (!value) return undefined;
  return typeof value === 'string' ? value : value.id;
}

async function authorise(request: AuthoriseRequest): Promise<Authorisation> {
  if (request.sourceOnly && request.method === 'sepa_dd') return setUpMandate(request);
  const stripe = await clientFor(request.context);
  const { params, masked } = methodParams(request);
  const options = (operation: string) => requestOptions(request.context, `${request.reference}:${operation}`);
  try {
    const customer = request.saveInstrument
      ? await stripe.customers.create({ metadata: request.metadata }, options('customer'))
      : undefined;
    const intent = await stripe.paymentIntents.create(
      {
        amount: request.amount.minor,
        currency: request.amount.currency.toLowerCase(),
        confirm: true,
        return_url: request.approvalUrl,
        metadata: request.metadata,
        expand: ['payment_method'],
        ...params,
        ...(customer ? { customer: customer.id, setup_future_usage: 'off_session' } : {}),
      },
      options('payment_intent'),
    );
    const paymentMethod = idOf(intent.payment_method);
    return {
      outcome: intentOutcome(intent),
      maskedInformation: { ...maskedPaymentMethod(intent.payment_method), ...masked },
      providerReference: intent.id,
      ...(customer && paymentMethod ? { instrumentToken: instrumentToken(customer.id, paymentMethod) } : {}),
    };
  } catch (error) {
    const failure = classifyError(error);
    if (failure.kind === 'declined') {
      return {
        outcome: { status: 'failed', reason: failure.reason },
        maskedInformation: { ...maskedPaymentMethod(failure.intent?.payment_method), ...masked },
        ...(failure.intent ? { providerReference: failure.intent.id } : {}),
      };
    }
    if (failure.kind === 'invalid') {
      throw ValidationError.field(
        failure.param?.startsWith('payment_method') ? 'payment_information.payment_method' : 'payment_information',
        'error.validation.not_valid',
        failure.message,
      );
    }
    // The outcome is unknown: the payment waits, and background work asks again (same keys).
    return { outcome: { status: 'pending', reason: 'provider_unavailable' }, maskedInformation: masked };
  }
}

/**
 * A SEPA payment source without a debit: a customer and a SetupIntent for off-session use that
 * records the mandate (Stripe answers `succeeded` at once for SEPA). An answer that does not come
 * fails the request (500); the client's retry under the same `Idempotency-Key` asks Stripe again
 * under the same keys and gets the first answer.
 */
async function setUpMandate(request: AuthoriseRequest): Promise<Authorisation> {
  const stripe = await clientFor(request.context);
  const { params, masked } = methodParams(request);
  const options = (operation: string) => requestOptions(request.context, `${request.reference}:${operation}`);
  try {
    const customer = await stripe.customers.create({ metadata: request.metadata }, options('customer'));
    const setup = await stripe.setupIntents.create(
      {
        customer: customer.id,
        confirm: true,
        usage: 'off_session',
        payment_method_data: params.payment_method_data as Stripe.SetupIntentCreateParams.PaymentMethodData,
        mandate_data: params.mandate_data as Stripe.SetupIntentCreateParams.MandateData,
        metadata: request.metadata,
        expand: ['payment_method'],
      },
      options('setup_intent'),
    );
    const paymentMethod = idOf(setup.payment_method);
    return {
      outcome: setupOutcome(setup),
      maskedInformation: { ...maskedPaymentMethod(setup.payment_method), ...masked },
      providerReference: setup.id,
      ...(paymentMethod ? { instrumentToken: instrumentToken(customer.id, paymentMethod) } : {}),
    };
  } catch (error) {
    const failure = classifyError(error);
    if (failure.kind === 'declined')
      return { outcome: { status: 'failed', reason: failure.reason }, maskedInformation: masked };
    if (failure.kind === 'invalid') {
      throw ValidationError.field('payment_information', 'error.validation.not_valid', failure.message);
    }
    throw new ProviderUnavailableError(failure.message, { cause: error });
  }
}

/** The saved instrument of an intent set up for off-session use, if it is one. */
function savedInstrument(intent: Stripe.PaymentIntent): { instrumentToken?: string } {
  const customer = idOf(intent.customer);
  const paymentMethod = idOf(intent.payment_method);
  return intent.setup_future_usage && customer && paymentMethod
    ? { instrumentToken: instrumentToken(customer, paymentMethod) }
    : {};
}

export const stripeProvider: PaymentProvider &
  Required<Pick<PaymentProvider, 'outcomeOf'>> & {
    refundVerification(reference: string, payment: PaymentAtProvider): Promise<void>;
  } = {
  name: 'stripe',
  methods: ['card', 'twint', 'sepa_dd'],

  async unusableFor(context) {
    if (await stripeClient(context.testMode)) return undefined;
    return `The stripe provider has no ${context.testMode ? 'test' : 'live'} key configured (${keyName(context.testMode)})`;
  },

  authorise,

  async chargeInstrument(token, amount, reference, context) {
    if (!context) throw new Error('A Stripe charge needs the profile it is made under');
    const stripe = await clientFor(context);
    const { customer, paymentMethod } = parseInstrument(token);
    try {
      const intent = await stripe.paymentIntents.create(
        {
          amount: amount.minor,
          currency: amount.currency.toLowerCase(),
          customer,
          payment_method: paymentMethod,
          off_session: true,
          confirm: true,
          metadata: { svc_reference: reference },
        },
        requestOptions(context, `${reference}:payment_intent`),
      );
      const outcome = intentOutcome(intent);
      // Off session nobody can follow a redirect: a charge that needs the donor has failed.
      if (outcome.status === 'pending' && 'action' in outcome) {
        return { status: 'failed', reason: 'authentication_required', providerReference: intent.id };
      }
      // Not decided yet (a SEPA debit for days): the attempt stays pending, never failed (dunning
      // would charge again while this one may still land), and is settled by Stripe's event or
      // by retrieving this intent, never by creating another.
      return { ...outcome, providerReference: intent.id };
    } catch (error) {
      const failure = classifyError(error);
      if (failure.kind === 'declined') return { status: 'failed', reason: failure.reason };
      if (failure.kind === 'invalid') return { status: 'failed', reason: 'payment_source_unavailable' };
      // Unknown: the charge attempt stays pending and is retried under the same key.
      throw new ProviderUnavailableError(failure.message, { cause: error });
    }
  },

  async completeApproval() {
    throw new Error('Stripe payments are approved on Stripe’s pages, not the simulated one');
  },

  async refund(reference, amount, payment) {
    if (!payment?.providerReference) return { status: 'failed', reason: 'no_provider_payment' };
    const stripe = await clientFor(payment.context);
    try {
      const refund = await stripe.refunds.create(
        {
          payment_intent: payment.providerReference,
          amount: amount.minor,
          metadata: {
            svc_reference: reference,
            ...(payment.paymentUuid ? { svc_payment_uuid: payment.paymentUuid } : {}),
          },
        },
        requestOptions(payment.context, `${reference}:refund`),
      );
      return refundOutcome(refund);
    } catch (error) {
      const failure = classifyError(error);
      if (failure.kind === 'unknown') throw new ProviderUnavailableError(failure.message, { cause: error });
      return { status: 'failed', reason: failure.kind === 'declined' ? failure.reason : 'refund_refused' };
    }
  },

  /** Refunds the whole verification charge of a saved card (after the donor's 3-D Secure). */
  async refundVerification(reference, payment) {
    if (!payment.providerReference) return;
    const stripe = await clientFor(payment.context);
    await stripe.refunds.create(
      { payment_intent: payment.providerReference, metadata: { svc_reference: reference } },
      requestOptions(payment.context, `${reference}:refund`),
    );
  },

  async cancel(reference, payment) {
    if (!payment?.providerReference) return;
    const stripe = await clientFor(payment.context);
    try {
      await stripe.paymentIntents.cancel(
        payment.providerReference,
        {},
        requestOptions(payment.context, `${reference}:cancel`),
      );
    } catch (error) {
      const failure = classifyError(error);
      if (failure.kind === 'unknown') throw new ProviderUnavailableError(failure.message, { cause: error });
      // Stripe will not cancel it (processing, or the donor just completed it): it stays pending.
      throw ValidationError.field(
        'status',
        'error.payment.not_cancellable',
        `Stripe did not cancel this payment: ${failure.kind === 'invalid' ? failure.message : failure.reason}`,
      );
    }
  },

  /**
   * Where a payment stands at Stripe: the intent by its id, or, when its creation's answer was
   * lost, by creating it again under the same idempotency key (Stripe answers with the first
   * result, or creates it now if the first request never arrived).
   */
  async outcomeOf(reference, payment) {
    const stripe = await clientFor(payment.context);
    const account = payment.context.profile.stripe_account;
    const options = account ? { stripeAccount: account } : {};
    try {
      if (!payment.providerReference) {
        // The answer to the creation was lost: find the intent by our uuid in its metadata.
        const found = await stripe.paymentIntents.search(
          { query: `metadata['svc_reference']:'${reference}'`, limit: 1 },
          options,
        );
        const intent = found.data[0];
        if (!intent) return { status: 'pending', reason: 'provider_unavailable' };
        return { ...intentOutcome(intent), providerReference: intent.id, ...savedInstrument(intent) };
      }
      const intent = await stripe.paymentIntents.retrieve(payment.providerReference, {}, options);
      return { ...intentOutcome(intent), providerReference: intent.id, ...savedInstrument(intent) };
    } catch (error) {
      throw new ProviderUnavailableError(error instanceof Error ? error.message : String(error), { cause: error });
    }
  },
};
