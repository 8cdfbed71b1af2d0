import {
  BUSINESS_METRICS,
  deferred,
  isValidIban,
  logger,
  type Money,
  normaliseIban,
  now,
  parseOrThrow,
  providerAmount,
  providerAmountAtMost,
  recordMetric,
  ValidationError,
} from '@svc/core';
import type Stripe from 'stripe';
import * as z from 'zod';
import { findProviderCustomer, rememberProviderCustomer } from '../../repository/provider-customer-repository';
import { rawCardSchema } from '../card-rules';
import { maskIban } from '../iban';
import type {
  Authorisation,
  AuthoriseRequest,
  FoundOutcome,
  PaymentAtProvider,
  PaymentMethod,
  PaymentProvider,
  ProviderContext,
  RefundOutcome,
} from '../provider';
import { PAYMENT_METHODS, ProviderNotReachedError } from '../provider';
import {
  keyName,
  STRIPE_API_VERSION,
  STRIPE_CONFIRM_RETRIES,
  STRIPE_CONFIRM_TIMEOUT_MS,
  stripeClient,
  withAttemptsCounted,
} from './stripe-config';
import {
  classifyError,
  intentOutcome,
  maskedPaymentMethod,
  refundOutcome,
  type StripeFailure,
  setupOutcome,
} from './stripe-mapping';

/**
 * Stripe, through its official SDK. Each payment is a PaymentIntent created and confirmed in one
 * call; a method that needs the donor (3-D Secure, TWINT) answers with Stripe's redirect, and
 * Stripe sends the donor back to our return endpoint. A SEPA debit stays `processing` for days
 * and is settled by Stripe's events and the resolver's checks. A payment source is a SetupIntent
 * (`usage: off_session`): nothing is charged to save an instrument.
 *
 * Idempotency. Every call carries a key `<our uuid>:<operation>` and our uuids as metadata, and
 * goes to the profile's connected account (`Stripe-Account`) when it names one. Stripe keeps the
 * first answer under a key, a 500 included, and may forget the key once it is 24 hours old
 * (https://docs.stripe.com/api/idempotent_requests: "subsequent requests with the same key return
 * the same result, including 500 errors"; "keys are eligible to be removed from the system
 * automatically after they're at least 24 hours old"). So re-sending under the same key resolves
 * nothing after a 500, and after 24 hours may charge again. An answer that does not come
 * (timeout, network, 5xx) is therefore resolved by reading Stripe's records: the intent by its
 * id, else a list of the customer's intents or of the intents created around our request (lists
 * are read from Stripe's primary records; Search is not used, it lags: "don't use search for
 * read-after-write flows", https://docs.stripe.com/search#data-freshness). A retry that finds
 * nothing re-sends under its first key only within KEY_REUSE_SECONDS, and otherwise under a new one.
 */
export class ProviderUnavailableError extends Error {
  /** Stripe answered, refusing our key or the connected account (not a lack of answer). */
  readonly accessRefused: boolean;
  constructor(message: string, options?: { cause?: unknown; accessRefused?: boolean }) {
    super(`Stripe did not answer: ${message}`, options);
    this.name = 'ProviderUnavailableError';
    this.accessRefused = options?.accessRefused ?? false;
  }
}

/** Stripe keeps a key at least 24 hours; we re-use one for at most 23 (clock skew, slow passes). */
export const KEY_REUSE_SECONDS = 23 * 3600;
/**
 * Where a creation whose answer was lost is looked for: intents created this long before and
 * after our request's time (our request ends within 30 s; the rest is room for clock skew).
 */
const CREATION_WINDOW_SECONDS = 600;
/** At most this many intents are read looking for one (beyond, it is still unknown). */
const LIST_LIMIT = 2_000;

/**
 * How an intent is confirmed without the donor (off-session charges). Since API version
 * 2023-08-16 automatic payment methods are on by default, and confirming then needs a
 * `return_url` "unless off_session=true"; "you can bypass the return_url requirement using
 * automatic_payment_methods[allow_redirects]=never"
 * (https://docs.stripe.com/changelog/2023-08-16/automatic-payment-methods). `payment_method_types`
 * is gone at our pinned version (endive, 2026-09-30: "Passing payment_method_types on this API
 * version returns a 400 error with the code payment_method_types_no_longer_supported"), so it is
 * never sent. Confirmations with the donor (3-D Secure, TWINT, saving a source) send our
 * `return_url` instead, where Stripe sends the donor back.
 */
const WITHOUT_REDIRECTS = { enabled: true, allow_redirects: 'never' } as const;

/**
 * Since which API version Stripe can set a method up for off-session charges. Cards and SEPA
 * mandates always could; TWINT since 2026-05-27 (recurring TWINT). A method not listed cannot be
 * saved at all.
 */
const SAVEABLE_SINCE: Partial<Record<PaymentMethod, string>> = {
  card: '2011-01-01',
  sepa_dd: '2011-01-01',
  twint: '2026-05-27',
};

/** Whether Stripe, at this API version, can save the method for later charges without the donor. */
export function saveableOffSession(method: PaymentMethod, apiVersion: string = STRIPE_API_VERSION): boolean {
  const since = SAVEABLE_SINCE[method];
  return since !== undefined && apiVersion.slice(0, 10) >= since;
}

/**
 * The EEA's countries (EU, Iceland, Liechtenstein, Norway). A SEPA IBAN from any other country
 * (CH, GB, SM, VA, AD, MC, …) needs the account holder's address: "For payments from IBANs
 * outside the European Economic Area (EEA), you must also collect the customer's billing address,
 * including city, postal_code, line1, and country" (https://docs.stripe.com/payments/sepa-debit;
 * enforced from API version endive, 2026-09-30: "non-EEA IBANs, including UK and Swiss IBANs.
 * You must provide city and postal_code in addition to line1 and country").
 */
const EEA = new Set(
  'AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IS IT LI LT LU LV MT NL NO PL PT RO SE SI SK'.split(' '),
);

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
      address: z
        .object({
          line1: z.string().min(1).max(200),
          line2: z.string().max(200).optional(),
          postal_code: z.string().min(1).max(20),
          city: z.string().min(1).max(100),
          country: z.string().regex(/^[A-Z]{2}$/, 'An ISO 3166-1 alpha-2 country code'),
        })
        .strict()
        .optional(),
      /** The donor's own connection when they accepted the mandate (their browser's, not the caller's). */
      donor_ip_address: z.union([z.ipv4(), z.ipv6()]).refine((ip) => !UNSPECIFIED.has(ip), {
        message: 'The donor’s own IP address (0.0.0.0 and :: are not an address)',
      }),
      donor_user_agent: z.string().min(1).max(500),
    })
    .strict(),
);

const UNSPECIFIED = new Set(['0.0.0.0', '::', '0:0:0:0:0:0:0:0']);

type PaymentIntentParams = Stripe.PaymentIntentCreateParams;
type MethodParams = Pick<PaymentIntentParams, 'payment_method' | 'payment_method_data' | 'mandate_data'>;

function requestOptions(context: ProviderContext, idempotencyKey?: string, confirming = false): Stripe.RequestOptions {
  const account = context.profile.stripe_account;
  return {
    ...(idempotencyKey ? { idempotencyKey } : {}),
    ...(account ? { stripeAccount: account } : {}),
    // A confirmation may wait on the card's issuer: the longest timeout, no SDK re-send (see stripe-config).
    ...(confirming ? { timeout: STRIPE_CONFIRM_TIMEOUT_MS, maxNetworkRetries: STRIPE_CONFIRM_RETRIES } : {}),
  };
}

async function clientFor(context: ProviderContext): Promise<Stripe> {
  const client = await stripeClient(context.testMode);
  // unusableFor refused the payment before; a key removed since is an error of the deployment.
  if (!client)
    throw new Error(`No Stripe key for ${context.testMode ? 'test' : 'live'} payments (${keyName(context.testMode)})`);
  return client;
}

const missing = (field: string, message: string) =>
  ValidationError.field(`payment_information.${field}`, 'error.validation.not_blank', message);

/** The method-specific part of an intent, and what is safe to keep of the input. */
function methodParams(request: AuthoriseRequest): { params: MethodParams; masked: Record<string, unknown> } {
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
      // TWINT settles in CHF only (https://docs.stripe.com/payments/twint: "Currencies: CHF").
      if (request.amount.currency !== 'CHF') {
        throw ValidationError.field('amount.currency', 'error.validation.not_valid', 'TWINT takes CHF only');
      }
      return { params: { payment_method_data: { type: 'twint' } }, masked: {} };
    case 'sepa_dd':
      return sepaParams(request);
  }
}

/**
 * A SEPA Direct Debit as Stripe takes it (https://docs.stripe.com/payments/sepa-debit/accept-a-payment):
 * in EUR only; `billing_details.name` and `email` required; an address for IBANs outside the
 * EEA; and the mandate's acceptance from the donor's own IP address and browser, which the client
 * passes on (our caller is the charity's server, whose address is not the donor's).
 */
function sepaParams(request: AuthoriseRequest): { params: MethodParams; masked: Record<string, unknown> } {
  if (request.amount.currency !== 'EUR') {
    throw ValidationError.field('amount.currency', 'error.validation.not_valid', 'SEPA Direct Debit takes EUR only');
  }
  const sepa = parseOrThrow(sepaInput, request.paymentInformation ?? {}, 'payment_information');
  if (!isValidIban(sepa.iban)) {
    throw ValidationError.field('payment_information.iban', 'error.validation.not_valid', 'This IBAN is not valid');
  }
  const email = sepa.email ?? request.donor?.email;
  if (!email) {
    throw missing(
      'email',
      'Stripe needs the account holder’s e-mail for a SEPA mandate: payment_information.email or supporter.email',
    );
  }
  const iban = normaliseIban(sepa.iban);
  const address: BillingAddress | undefined = sepa.address ?? supporterAddress(request);
  if (!EEA.has(iban.slice(0, 2)) && !address) {
    throw missing(
      'address',
      `An IBAN from ${iban.slice(0, 2)} (outside the EEA) needs the account holder’s address: payment_information.address {line1, postal_code, city, country} or the supporter’s street, postal code, city and two-letter country`,
    );
  }
  return {
    params: {
      payment_method_data: {
        type: 'sepa_debit',
        sepa_debit: { iban },
        // Names our payment or source on the PaymentMethod, so its mandate's events find the source.
        metadata: { svc_reference: request.reference },
        billing_details: {
          name: sepa.account_holder,
          email,
          ...(address
            ? {
                address: {
                  line1: address.line1,
                  postal_code: address.postal_code,
                  city: address.city,
                  country: address.country,
                  ...(address.line2 ? { line2: address.line2 } : {}),
                },
              }
            : {}),
        },
      },
      mandate_data: {
        customer_acceptance: {
          type: 'online',
          online: { ip_address: sepa.donor_ip_address, user_agent: sepa.donor_user_agent },
        },
      },
    },
    masked: { iban: maskIban(iban), account_holder: sepa.account_holder },
  };
}

interface BillingAddress {
  line1: string;
  line2?: string | undefined;
  postal_code: string;
  city: string;
  country: string;
}

/** The supporter's address, where it is whole and has a two-letter country Stripe can take. */
function supporterAddress(request: AuthoriseRequest): BillingAddress | undefined {
  const given = request.donor?.address;
  const country = given?.country?.toUpperCase();
  if (!given?.line1 || !given.postalCode || !given.city || !country || !/^[A-Z]{2}$/.test(country)) return undefined;
  return { line1: given.line1, postal_code: given.postalCode, city: given.city, country };
}

/**
 * Our amount as Stripe takes it: "All API requests expect amounts to be provided in a currency's
 * smallest unit", which is not always ISO 4217's (https://docs.stripe.com/currencies: MGA is
 * zero-decimal, ISK and UGX are passed "with two decimals" and "must be evenly divisible by 100",
 * three-decimal currencies "require the least-significant (last) digit to be 0"), and the code "in
 * all lowercase letters". Routing refused an amount Stripe cannot take exactly before any call
 * (@svc/core currencies.ts); this throws rather than send another sum.
 */
function stripeAmount(money: Money): { amount: number; currency: string } {
  return { amount: providerAmount('stripe', money.currency, money.minor), currency: money.currency.toLowerCase() };
}

/**
 * What a Connect charge adds: the platform's fee (the profile's basis points of the amount plus
 * its fixed part, at most the amount) and the organisation's statement descriptor suffix (cards).
 * Stripe takes `application_fee_amount` on a direct charge made with `Stripe-Account`
 * (https://docs.stripe.com/connect/direct-charges#collect-fees), in the charge's minor units as
 * Stripe counts them: a fee finer than Stripe counts (0.37 MGA) is rounded down to what it can
 * take, never up.
 */
function connectParams(
  context: ProviderContext,
  method: PaymentMethod,
  amount: Money,
): Pick<PaymentIntentParams, 'application_fee_amount' | 'statement_descriptor_suffix'> {
  const { profile } = context;
  if (!profile.stripe_account) return {};
  const fee =
    Math.round((amount.minor * (profile.platform_fee_basis_points ?? 0)) / 10_000) + (profile.platform_fee_fixed ?? 0);
  const feeAtStripe = fee > 0 ? providerAmountAtMost('stripe', amount.currency, Math.min(fee, amount.minor)) : 0;
  return {
    ...(feeAtStripe > 0 ? { application_fee_amount: feeAtStripe } : {}),
    ...(method === 'card' && profile.statement_descriptor_suffix
      ? { statement_descriptor_suffix: profile.statement_descriptor_suffix }
      : {}),
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

/**
 * The Stripe Customer a saved instrument belongs to: the supporter's own (one per supporter,
 * per account and mode, made at its first saved instrument), or one for this payment alone when
 * it has no supporter record.
 */
async function customerFor(stripe: Stripe, request: AuthoriseRequest): Promise<string> {
  const { context, donor } = request;
  const scope = donor?.supporterUuid
    ? {
        provider: 'stripe',
        testMode: context.testMode,
        account: context.profile.stripe_account,
        supporterUuid: donor.supporterUuid,
      }
    : undefined;
  const known = scope ? await findProviderCustomer(scope) : undefined;
  if (known) return known;
  const created = await stripe.customers.create(
    {
      metadata: { ...request.metadata, ...(donor?.supporterUuid ? { svc_supporter_uuid: donor.supporterUuid } : {}) },
      ...(donor?.email ? { email: donor.email } : {}),
      ...(donor?.name ? { name: donor.name } : {}),
    },
    requestOptions(context, `${request.reference}:customer`),
  );
  return scope ? rememberProviderCustomer(scope, created.id) : created.id;
}

/** Logged, and counted (ProviderAnomalies, kind access_refused, alarmed), when Stripe refuses our key or account. */
export const STRIPE_ACCESS_REFUSED = 'Stripe refused the platform’s key or connected account';

function refusedAccess(failure: StripeFailure, context: ProviderContext): void {
  recordMetric(BUSINESS_METRICS.providerAnomalies, 1, { kind: 'access_refused' });
  logger.error(STRIPE_ACCESS_REFUSED, {
    reason: failure.kind === 'refused' ? failure.message : undefined,
    account: context.profile.stripe_account ?? 'platform',
    mode: context.testMode ? 'test' : 'live',
  });
}

async function authorise(request: AuthoriseRequest): Promise<Authorisation> {
  if (request.sourceOnly) return setUpSource(request);
  return withAttemptsCounted(`${request.reference}:payment_intent`, (sent) => authoriseIntent(request, sent));
}

async function authoriseIntent(request: AuthoriseRequest, sent: () => number): Promise<Authorisation> {
  const stripe = await clientFor(request.context);
  const { params, masked } = methodParams(request);
  const charged = stripeAmount(request.amount);
  let customer: string | undefined;
  try {
    customer = request.saveInstrument ? await customerFor(stripe, request) : undefined;
    const intent = await stripe.paymentIntents.create(
      {
        ...charged,
        confirm: true,
        // The donor may be sent to Stripe's page (3-D Secure, TWINT) and back here.
        return_url: request.approvalUrl,
        metadata: request.metadata,
        expand: ['payment_method'],
        ...params,
        ...connectParams(request.context, request.method, request.amount),
        ...(customer ? { customer, setup_future_usage: 'off_session' } : {}),
      },
      requestOptions(request.context, `${request.reference}:payment_intent`, true),
    );
    const paymentMethod = idOf(intent.payment_method);
    return {
      outcome: intentOutcome(intent),
      maskedInformation: { ...maskedPaymentMethod(intent.payment_method), ...masked },
      providerReference: intent.id,
      ...(customer ? { providerCustomer: customer } : {}),
      ...(customer && paymentMethod ? { instrumentToken: instrumentToken(customer, paymentMethod) } : {}),
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
    if (failure.kind === 'invalid') throw invalidInput(failure);
    if (failure.kind === 'refused') {
      // Refused before Stripe did anything: nothing was charged, and no retry will change it.
      refusedAccess(failure, request.context);
      return { outcome: { status: 'failed', reason: 'provider_unavailable' }, maskedInformation: masked };
    }
    const notReached = notReachedReason(error, sent());
    if (notReached) throw new ProviderNotReachedError('stripe', notReached, { cause: error });
    // The outcome is unknown: the payment waits, and background work reads Stripe's records.
    return {
      outcome: { status: 'pending', reason: 'provider_unavailable' },
      maskedInformation: masked,
      ...(customer ? { providerCustomer: customer } : {}),
    };
  }
}

/**
 * Whether a failed call provably did nothing at Stripe: a 429 (Stripe rejects a request over its
 * rate limit before processing it: "treat these as a signal to slow down", the request can be
 * retried, https://docs.stripe.com/rate-limits), or a connection that was never made (refused,
 * or a name that did not resolve), and either only when the request was sent once: the SDK
 * re-sends a closed socket once, and a re-sent request may have reached Stripe the first time.
 */
function notReachedReason(error: unknown, sent: number): 'rate_limited' | 'connection_refused' | undefined {
  const e = error as { type?: string; message?: string; detail?: { code?: string } };
  if (sent > 1) return undefined;
  if (e.type === 'StripeRateLimitError') return 'rate_limited';
  if (e.type !== 'StripeConnectionError' || e.message?.includes('retried')) return undefined;
  const code = e.detail?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'connection_refused' : undefined;
}

function invalidInput(failure: { param?: string | undefined; message: string }): ValidationError {
  return ValidationError.field(
    failure.param?.startsWith('payment_method') ? 'payment_information.payment_method' : 'payment_information',
    'error.validation.not_valid',
    failure.message,
  );
}

/**
 * A payment source without a charge: a Customer and a SetupIntent for off-session use
 * (https://docs.stripe.com/payments/save-and-reuse). A card that needs 3-D Secure, and TWINT,
 * answer with Stripe's redirect; the source stays pending until the donor returns, Stripe's
 * `setup_intent.*` event, or the resolver's check. A SEPA mandate is active at once. An answer
 * that does not come fails the request (500): nothing was charged, and the client's retry under
 * the same `Idempotency-Key` asks Stripe again under the same keys and gets the first answer.
 */
async function setUpSource(request: AuthoriseRequest): Promise<Authorisation> {
  const stripe = await clientFor(request.context);
  const { params, masked } = methodParams(request);
  try {
    const customer = await customerFor(stripe, request);
    const setup = await stripe.setupIntents.create(
      {
        customer,
        confirm: true,
        usage: 'off_session',
        // The donor may be sent to Stripe's page (3-D Secure, TWINT) and back here.
        return_url: request.approvalUrl,
        ...(params.payment_method ? { payment_method: params.payment_method } : {}),
        ...(params.payment_method_data
          ? { payment_method_data: params.payment_method_data as Stripe.SetupIntentCreateParams.PaymentMethodData }
          : {}),
        ...(params.mandate_data
          ? { mandate_data: params.mandate_data as Stripe.SetupIntentCreateParams.MandateData }
          : {}),
        metadata: request.metadata,
        expand: ['payment_method'],
      },
      requestOptions(request.context, `${request.reference}:setup_intent`, true),
    );
    const paymentMethod = idOf(setup.payment_method);
    return {
      outcome: setupOutcome(setup),
      maskedInformation: { ...maskedPaymentMethod(setup.payment_method), ...masked },
      providerReference: setup.id,
      providerCustomer: customer,
      ...(paymentMethod ? { instrumentToken: instrumentToken(customer, paymentMethod) } : {}),
    };
  } catch (error) {
    const failure = classifyError(error);
    if (failure.kind === 'declined')
      return { outcome: { status: 'failed', reason: failure.reason }, maskedInformation: masked };
    if (failure.kind === 'invalid') throw invalidInput(failure);
    if (failure.kind === 'refused') {
      refusedAccess(failure, request.context);
      return { outcome: { status: 'failed', reason: 'provider_unavailable' }, maskedInformation: masked };
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

function foundIntent(intent: Stripe.PaymentIntent): FoundOutcome {
  return { ...intentOutcome(intent), providerReference: intent.id, ...savedInstrument(intent) };
}

/**
 * Our intent among Stripe's records, by our reference in its metadata: the customer's intents
 * when the payment had one, else the intents created around `created`. `undefined`: Stripe's
 * records hold none; throws when they could not all be read.
 */
async function findIntent(
  stripe: Stripe,
  reference: string,
  payment: Pick<PaymentAtProvider, 'context' | 'created' | 'providerCustomer'>,
): Promise<Stripe.PaymentIntent | undefined> {
  const filter: Stripe.PaymentIntentListParams = payment.providerCustomer
    ? { customer: payment.providerCustomer, limit: 100 }
    : {
        created: {
          gte: (payment.created ?? now()) - CREATION_WINDOW_SECONDS,
          lte: (payment.created ?? now()) + CREATION_WINDOW_SECONDS,
        },
        limit: 100,
      };
  let read = 0;
  for await (const intent of stripe.paymentIntents.list(filter, requestOptions(payment.context))) {
    if (intent.metadata?.svc_reference === reference) return intent;
    read += 1;
    if (read >= LIST_LIMIT) throw new Error(`More than ${LIST_LIMIT} intents to read; looked no further`);
  }
  return undefined;
}

/**
 * Sends a creation again that Stripe did not answer before, once Stripe's records showed it was
 * not made. The key is the first one within KEY_REUSE_SECONDS of the first try, and past that one
 * per window (Stripe may have forgotten the first, so it is never re-used then). Stripe keeps a
 * 500 under its key and answers it again ("Retries with the same key return the saved response,
 * including 500 errors"; the answer says `Idempotent-Replayed: true`): such a key did nothing
 * (its creation is not in the records) and can do nothing more, so the next key is derived from
 * it. Every key is derived, never random: two resolvers that race send under the same key and
 * Stripe makes one.
 */
async function sendAgain<T>(base: string, firstTried: number, create: (key: string) => Promise<T>): Promise<T> {
  const window = Math.floor((now() - firstTried) / KEY_REUSE_SECONDS);
  let key = window === 0 ? base : `${base}:w${window}`;
  for (let replays = 1; ; replays += 1) {
    try {
      return await create(key);
    } catch (error) {
      const e = error as { statusCode?: number; headers?: Record<string, string> };
      const keptFailure = (e.statusCode ?? 0) >= 500 && e.headers?.['idempotent-replayed'] === 'true';
      if (!keptFailure || replays > 3) throw error;
      key = `${key}:r${replays}`;
    }
  }
}

async function chargeInstrument(
  token: string,
  amount: Parameters<PaymentProvider['chargeInstrument']>[1],
  reference: string,
  context: ProviderContext | undefined,
  firstTried?: number,
): Promise<FoundOutcome> {
  if (!context) throw new Error('A Stripe charge needs the profile it is made under');
  const stripe = await clientFor(context);
  const { customer, paymentMethod } = parseInstrument(token);
  // Outside the call's try: an amount Stripe cannot take is no unknown outcome at Stripe.
  const charged = stripeAmount(amount);
  try {
    // A retry: the first try's charge may exist though its answer was lost; it is found, not made again.
    const earlier =
      firstTried !== undefined
        ? await findIntent(stripe, reference, { context, providerCustomer: customer })
        : undefined;
    const charge = (key: string) =>
      stripe.paymentIntents.create(
        {
          ...charged,
          customer,
          payment_method: paymentMethod,
          automatic_payment_methods: WITHOUT_REDIRECTS,
          off_session: true,
          confirm: true,
          metadata: { svc_reference: reference },
          ...connectParams(context, context.profile.payment_method as PaymentMethod, amount),
        },
        requestOptions(context, key, true),
      );
    const base = `${reference}:payment_intent`;
    const intent = earlier ?? (await (firstTried === undefined ? charge(base) : sendAgain(base, firstTried, charge)));
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
    if (failure.kind === 'declined')
      return {
        status: 'failed',
        reason: failure.reason,
        ...(failure.intent ? { providerReference: failure.intent.id } : {}),
      };
    if (failure.kind === 'invalid') return { status: 'failed', reason: 'payment_source_unavailable' };
    if (failure.kind === 'refused') {
      refusedAccess(failure, context);
      // A first try refused did nothing. A retry refused cannot see whether its first try, whose
      // answer was lost, charged: the outcome stays unknown, never failed (dunning would charge again).
      if (firstTried === undefined) return { status: 'failed', reason: 'provider_unavailable' };
    }
    // Unknown: the charge attempt stays pending; its retry looks for this charge first.
    throw new ProviderUnavailableError(failure.message, { cause: error });
  }
}

/**
 * Refunds through Stripe. A retry of a refund Stripe did not answer first lists the intent's
 * refunds (https://docs.stripe.com/api/refunds/list, by `payment_intent`) and sends again only
 * when ours is not among them.
 */
async function refund(
  reference: string,
  amount: Parameters<PaymentProvider['refund']>[1],
  payment: PaymentAtProvider | undefined,
  firstTried?: number,
): Promise<RefundOutcome> {
  if (!payment?.providerReference) return { status: 'failed', reason: 'no_provider_payment' };
  const stripe = await clientFor(payment.context);
  const refunded = stripeAmount(amount).amount;
  try {
    if (firstTried !== undefined) {
      const earlier = await findRefund(stripe, reference, payment);
      if (earlier) return refundOutcome(earlier);
    }
    const send = (key: string) =>
      stripe.refunds.create(
        {
          payment_intent: payment.providerReference,
          amount: refunded,
          metadata: {
            svc_reference: reference,
            ...(payment.paymentUuid ? { svc_payment_uuid: payment.paymentUuid } : {}),
          },
        },
        requestOptions(payment.context, key),
      );
    const base = `${reference}:refund`;
    return refundOutcome(await (firstTried === undefined ? send(base) : sendAgain(base, firstTried, send)));
  } catch (error) {
    const failure = classifyError(error);
    // A retry refused its credentials cannot see whether the first try refunded: still unknown.
    if (failure.kind === 'unknown' || (failure.kind === 'refused' && firstTried !== undefined))
      throw unavailable(error, payment.context);
    if (failure.kind === 'refused') refusedAccess(failure, payment.context);
    return { status: 'failed', reason: failure.kind === 'declined' ? failure.reason : 'refund_refused' };
  }
}

async function findRefund(
  stripe: Stripe,
  reference: string,
  payment: PaymentAtProvider,
): Promise<Stripe.Refund | undefined> {
  for await (const made of stripe.refunds.list(
    { payment_intent: payment.providerReference, limit: 100 },
    requestOptions(payment.context),
  )) {
    if (made.metadata?.svc_reference === reference) return made;
  }
  return undefined;
}

/** A SetupIntent's outcome with the instrument it saved. */
function setupFound(setup: Stripe.SetupIntent): Outcome & { instrumentToken?: string } {
  const customer = idOf(setup.customer);
  const paymentMethod = idOf(setup.payment_method);
  return {
    ...setupOutcome(setup),
    ...(customer && paymentMethod ? { instrumentToken: instrumentToken(customer, paymentMethod) } : {}),
  };
}

type Outcome = ReturnType<typeof intentOutcome>;

function unavailable(error: unknown, context: ProviderContext): ProviderUnavailableError {
  const failure = classifyError(error);
  if (failure.kind === 'refused') refusedAccess(failure, context);
  return new ProviderUnavailableError(error instanceof Error ? error.message : String(error), {
    cause: error,
    accessRefused: failure.kind === 'refused',
  });
}

export const stripeProvider: PaymentProvider &
  Required<Pick<PaymentProvider, 'outcomeOf' | 'sourceOutcomeOf' | 'abandonSource'>> = {
  name: 'stripe',
  methods: PAYMENT_METHODS,

  async unusableFor(context, method, saving) {
    if (saving && !saveableOffSession(method)) {
      return `Stripe cannot save ${method} for later charges at API version ${STRIPE_API_VERSION}`;
    }
    if (await stripeClient(context.testMode)) return undefined;
    return `The stripe provider has no ${context.testMode ? 'test' : 'live'} key configured (${keyName(context.testMode)})`;
  },

  authorise,
  chargeInstrument,

  async completeApproval() {
    throw new Error('Stripe payments are approved on Stripe’s pages, not the simulated one');
  },

  refund,

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
      if (failure.kind === 'unknown' || failure.kind === 'refused') throw unavailable(error, payment.context);
      // Stripe will not cancel it (processing, or the donor just completed it): it stays pending.
      throw ValidationError.field(
        'status',
        'error.payment.not_cancellable',
        `Stripe did not cancel this payment: ${failure.kind === 'invalid' ? failure.message : failure.reason}`,
      );
    }
  },

  /**
   * Where a payment stands at Stripe: the intent by its id, or, when the answer to its creation
   * was lost, found among the customer's intents or those created around the request.
   * `absent` only when those lists were read whole and hold none of ours.
   */
  async outcomeOf(reference, payment) {
    const stripe = await clientFor(payment.context);
    try {
      if (payment.providerReference) {
        return foundIntent(
          await stripe.paymentIntents.retrieve(payment.providerReference, {}, requestOptions(payment.context)),
        );
      }
      const intent = await findIntent(stripe, reference, payment);
      return intent ? foundIntent(intent) : { status: 'pending', reason: 'provider_unavailable', absent: true };
    } catch (error) {
      throw unavailable(error, payment.context);
    }
  },

  async sourceOutcomeOf(source) {
    if (!source.providerReference) return { status: 'failed', reason: 'no_provider_payment' };
    const stripe = await clientFor(source.context);
    try {
      return setupFound(
        await stripe.setupIntents.retrieve(source.providerReference, {}, requestOptions(source.context)),
      );
    } catch (error) {
      throw unavailable(error, source.context);
    }
  },

  /**
   * Cancels a SetupIntent the donor never finished, so it cannot complete later; one that did
   * complete meanwhile (Stripe refuses the cancel) is read again and kept.
   */
  async abandonSource(reference, source) {
    if (!source.providerReference) return { status: 'failed', reason: 'approval_expired' };
    const stripe = await clientFor(source.context);
    try {
      const cancelled = await stripe.setupIntents.cancel(
        source.providerReference,
        {},
        requestOptions(source.context, `${reference}:cancel`),
      );
      return cancelled.status === 'canceled' ? { status: 'failed', reason: 'approval_expired' } : setupFound(cancelled);
    } catch (error) {
      if (classifyError(error).kind !== 'invalid') throw unavailable(error, source.context);
      return setupFound(
        await stripe.setupIntents.retrieve(source.providerReference, {}, requestOptions(source.context)),
      );
    }
  },
};
