import Stripe from 'stripe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type StripeStandIn, startStripeStandIn } from './support/stripe-stand-in';

/**
 * The Stripe stand-in (test/support/stripe-stand-in.ts) against the real SDK: each rule it keeps,
 * with where Stripe documents it. Where Stripe's exact wording or code is not published, the test
 * says so and holds the stand-in only to what is documented.
 */
type StripeError = InstanceType<typeof Stripe.errors.StripeError>;

const START = 1_900_000_000;
const DAY = 24 * 60 * 60;
const RETURN_URL = 'https://charity.example.org/thanks';
const ACCEPTANCE = {
  customer_acceptance: {
    type: 'online' as const,
    online: { ip_address: '203.0.113.7', user_agent: 'donor-browser/1.0' },
  },
};
const DONOR = { name: 'Ada Donor', email: 'ada@example.org' };
const GERMAN_IBAN = 'DE89370400440532013000';
const SWISS_IBAN = 'CH9300762011623852957';

let now: number;
let standIn: StripeStandIn;
let stripe: Stripe;

beforeEach(async () => {
  now = START;
  standIn = await startStripeStandIn({ clock: () => now });
  stripe = new Stripe(standIn.secretKey, {
    host: '127.0.0.1',
    port: Number(new URL(standIn.url).port),
    protocol: 'http',
    maxNetworkRetries: 0,
  });
});

afterEach(() => standIn.close());

async function failure(promise: Promise<unknown>): Promise<StripeError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Stripe.errors.StripeError) return error;
    throw error;
  }
  throw new Error('Stripe answered, where an error was expected');
}

/** A card PaymentIntent created and confirmed at once, as the adapter makes them. */
function cardPayment(params: Partial<Stripe.PaymentIntentCreateParams> = {}, options: Stripe.RequestOptions = {}) {
  return stripe.paymentIntents.create(
    { amount: 2500, currency: 'chf', confirm: true, payment_method: 'pm_card_visa', return_url: RETURN_URL, ...params },
    options,
  );
}

/** A SEPA Direct Debit PaymentIntent from an IBAN, confirmed with the donor's mandate. */
function sepaPayment(params: Record<string, unknown> = {}, options: Stripe.RequestOptions = {}) {
  return stripe.paymentIntents.create(
    {
      amount: 2500,
      currency: 'eur',
      confirm: true,
      return_url: RETURN_URL,
      payment_method_data: { type: 'sepa_debit', sepa_debit: { iban: GERMAN_IBAN }, billing_details: DONOR },
      mandate_data: ACCEPTANCE,
      ...params,
    } as Stripe.PaymentIntentCreateParams,
    options,
  );
}

function setUp(params: Record<string, unknown>, options: Stripe.RequestOptions = {}) {
  return stripe.setupIntents.create(
    { confirm: true, usage: 'off_session', return_url: RETURN_URL, ...params } as Stripe.SetupIntentCreateParams,
    options,
  );
}

const eventTypes = () => standIn.events.map((event) => String(event.type));

describe('the clock', () => {
  it('stamps every object and event with the time of the clock it is given', async () => {
    // `created` is "Time at which the object was created" in Stripe's time, e.g.
    // https://docs.stripe.com/api/payment_intents/object#payment_intent_object-created
    const customer = await stripe.customers.create({ email: 'ada@example.org' });
    now += 100;
    const intent = await cardPayment({ customer: customer.id });
    now += 100;
    const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 500 });
    expect([customer.created, intent.created, refund.created]).toEqual([START, START + 100, START + 200]);
    expect(standIn.events.at(-1)?.created).toBe(START + 200);
  });
});

describe('idempotency', () => {
  it('replays the first answer under a key, and refuses the key for other parameters', async () => {
    // "Subsequent requests with the same key return the same result ... The idempotency layer
    // compares incoming parameters to those of the original request and errors if they're not the
    // same": https://docs.stripe.com/api/idempotent_requests
    const first = await cardPayment({}, { idempotencyKey: 'pay-1' });
    const again = await cardPayment({}, { idempotencyKey: 'pay-1' });
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(standIn.charges()).toHaveLength(1);
    const other = await failure(cardPayment({ amount: 900 }, { idempotencyKey: 'pay-1' }));
    expect(other).toMatchObject({ type: 'StripeIdempotencyError', rawType: 'idempotency_error', statusCode: 400 });
    expect(other.message).toMatch(/Try using a key other than 'pay-1'/);
  });

  it('keeps no answer for a request whose parameters failed validation', async () => {
    // "If incoming parameters fail validation ... we don't save the idempotent result because no
    // API endpoint initiates the execution. You can retry these requests.":
    // https://docs.stripe.com/api/idempotent_requests
    const invalid = await failure(cardPayment({ bogus: 'x' } as never, { idempotencyKey: 'pay-2' }));
    expect(invalid).toMatchObject({ statusCode: 400, code: 'parameter_unknown' });
    const valid = await cardPayment({}, { idempotencyKey: 'pay-2' });
    expect(valid.status).toBe('succeeded');
    expect(valid.lastResponse.headers['idempotent-replayed']).toBeUndefined();
  });

  it('keeps a 500 from an endpoint that began, and replays it: nothing was done', async () => {
    // "Stripe saves the status code and body of the first request made with a given idempotency key
    // after endpoint execution begins. Retries with the same key return the saved response,
    // including 500 errors.": https://docs.stripe.com/api/idempotent_requests
    standIn.failNext(1, 'server_error');
    const first = await failure(cardPayment({}, { idempotencyKey: 'pay-3' }));
    expect(first).toMatchObject({ type: 'StripeAPIError', rawType: 'api_error', statusCode: 500 });
    const retry = await failure(cardPayment({}, { idempotencyKey: 'pay-3' }));
    expect(retry).toMatchObject({ statusCode: 500 });
    expect(retry.headers?.['idempotent-replayed']).toBe('true');
    expect(standIn.charges()).toHaveLength(0);
  });

  it('keeps a 500 answered after the work was done, and replays it: the charge exists once', async () => {
    // As above: the saved response is replayed whatever it is (https://docs.stripe.com/api/idempotent_requests).
    standIn.failNext(1, 'server_error_after_work');
    await failure(cardPayment({}, { idempotencyKey: 'pay-4' }));
    const retry = await failure(cardPayment({}, { idempotencyKey: 'pay-4' }));
    expect(retry).toMatchObject({ statusCode: 500 });
    expect(standIn.charges()).toHaveLength(1);
    expect(standIn.charges()[0]?.status).toBe('succeeded');
  });

  it('replays the work of a dropped connection to the retry under the same key', async () => {
    // stripe-node retries a closed connection once even with maxNetworkRetries 0, under the same
    // Idempotency-Key it gives every POST (stripe-node src/RequestSender.ts `_shouldRetry`,
    // `_defaultIdempotencyKey`); Stripe replays the kept answer (https://docs.stripe.com/api/idempotent_requests).
    standIn.failNext(1, 'drop');
    const paid = await cardPayment({}, { idempotencyKey: 'pay-5' });
    expect(paid.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(standIn.requests.map((request) => request.idempotencyKey)).toEqual(['pay-5', 'pay-5']);
    expect(standIn.charges()).toHaveLength(1);
    // Both answers lost: the SDK gives up, yet the work is done and the key still answers it.
    standIn.failNext(2, 'drop');
    const lost = await failure(cardPayment({}, { idempotencyKey: 'pay-6' }));
    expect(lost.type).toBe('StripeConnectionError');
    expect(standIn.charges()).toHaveLength(2);
    const asked = await cardPayment({}, { idempotencyKey: 'pay-6' });
    expect(asked.id).toBe(standIn.charges()[1]?.id);
    expect(asked.lastResponse.headers['idempotent-replayed']).toBe('true');
  });

  it('does nothing and keeps nothing for a request that never reached Stripe', async () => {
    // Stripe keeps results only once an endpoint begins (https://docs.stripe.com/api/idempotent_requests);
    // a request refused on the way never began.
    standIn.failNext(1, 'refuse');
    const paid = await cardPayment({}, { idempotencyKey: 'pay-7' });
    expect(paid.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    expect(standIn.requests).toHaveLength(1);
    standIn.failNext(2, 'refuse');
    const refused = await failure(cardPayment({}, { idempotencyKey: 'pay-8' }));
    expect(refused.type).toBe('StripeConnectionError');
    expect(standIn.charges()).toHaveLength(1);
    const retried = await cardPayment({}, { idempotencyKey: 'pay-8' });
    expect(retried.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    expect(standIn.charges()).toHaveLength(2);
  });

  it('answers 429 rate_limit before any endpoint, and keeps nothing under the key', async () => {
    // "If you send many requests in quick succession, you might receive 429 error responses":
    // https://docs.stripe.com/rate-limits; the limiter acts before an endpoint begins, so nothing is
    // kept (https://docs.stripe.com/api/idempotent_requests). Body: `invalid_request_error` with code
    // `rate_limit` (codes: https://docs.stripe.com/error-codes#rate-limit; stripe-node maps 429 to
    // StripeRateLimitError, src/Error.ts). Stripe's exact message is not published; the stand-in's is.
    standIn.failNext(1, 'rate_limit');
    const limited = await failure(cardPayment({}, { idempotencyKey: 'pay-9' }));
    expect(limited).toMatchObject({
      type: 'StripeRateLimitError',
      statusCode: 429,
      code: 'rate_limit',
      rawType: 'invalid_request_error',
    });
    expect(standIn.charges()).toHaveLength(0);
    const paid = await cardPayment({}, { idempotencyKey: 'pay-9' });
    expect(paid.lastResponse.headers['idempotent-replayed']).toBeUndefined();
  });

  it('forgets a key after 24 hours: the same key then executes anew', async () => {
    // "You can remove keys from the system automatically after they're at least 24 hours old. We
    // generate a new request if a key is reused after the original is pruned.":
    // https://docs.stripe.com/api/idempotent_requests
    const first = await cardPayment({}, { idempotencyKey: 'pay-10' });
    now += DAY - 1;
    expect((await cardPayment({}, { idempotencyKey: 'pay-10' })).id).toBe(first.id);
    now += 1;
    const later = await cardPayment({}, { idempotencyKey: 'pay-10' });
    expect(later.id).not.toBe(first.id);
    expect(standIn.charges()).toHaveLength(2);
  });

  it('fails only the requests a predicate picks', async () => {
    // A test control: only POST /v1/refunds meets the fault (kept, as above).
    standIn.failNextMatching((request) => request.method === 'POST' && request.path === '/v1/refunds', 'server_error');
    const paid = await cardPayment();
    expect(await failure(stripe.refunds.create({ payment_intent: paid.id }))).toMatchObject({ statusCode: 500 });
    expect(standIn.refunds.size).toBe(0);
    expect((await stripe.refunds.create({ payment_intent: paid.id })).status).toBe('succeeded');
  });
});

describe('confirmation', () => {
  it('requires a return_url on confirmation with automatic payment methods, unless off session or redirects are off', async () => {
    // API versions from 2023-08-16 turn automatic payment methods on by default: "When confirming a
    // PaymentIntent, you're now required to provide a return_url, unless off_session=true ... You
    // can bypass the return_url requirement using automatic_payment_methods[allow_redirects]=never":
    // https://docs.stripe.com/changelog/2023-08-16/automatic-payment-methods. The message is the one
    // Stripe answers (quoted in github.com/woocommerce/woocommerce-gateway-stripe/issues/2982); its
    // code and param are not published, and the stand-in gives none.
    const missing = await failure(cardPayment({ return_url: undefined }));
    expect(missing).toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 400 });
    expect(missing.message).toMatch(/^A `return_url` must be specified because this Payment Intent is configured/);
    const noRedirects = await cardPayment({
      return_url: undefined,
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    });
    expect(noRedirects).toMatchObject({
      status: 'succeeded',
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    });
    const offSession = await cardPayment({ return_url: undefined, off_session: true });
    expect(offSession.status).toBe('succeeded');
    // Nothing documents a refusal of return_url with off_session=true: Stripe takes both.
    expect((await cardPayment({ off_session: true })).status).toBe('succeeded');
    expect((await cardPayment()).automatic_payment_methods).toEqual({ enabled: true, allow_redirects: 'always' });
  });

  it('requires a return_url to confirm a SetupIntent, off-session usage or not', async () => {
    // "When confirming a SetupIntent, you're now required to provide a return_url" (no off-session
    // exception): https://docs.stripe.com/changelog/2023-08-16/automatic-payment-methods; the
    // SetupIntent wording is in github.com/woocommerce/woocommerce-gateway-stripe/issues/3284.
    const missing = await failure(setUp({ payment_method: 'pm_card_visa', return_url: undefined }));
    expect(missing.message).toMatch(/^A `return_url` must be specified because this Setup Intent is configured/);
    const noRedirects = await setUp({
      payment_method: 'pm_card_visa',
      return_url: undefined,
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    });
    expect(noRedirects.status).toBe('succeeded');
  });

  it('refuses payment_method_types from API version 2026-09-30, and takes them before', async () => {
    // "Passing payment_method_types on this API version returns a 400 error with the code
    // payment_method_types_no_longer_supported":
    // https://docs.stripe.com/changelog/endive/2026-09-30/removes-the-payment-method-types-parameter-from-payment-intents-and-setup-intents
    // (stripe-node 23.0.0 CHANGELOG: "Remove support for payment_method_types on ...
    // PaymentIntentCreateParams"). Its message is not published.
    const removed = await failure(cardPayment({ payment_method_types: ['card'] } as never));
    expect(removed).toMatchObject({
      statusCode: 400,
      code: 'payment_method_types_no_longer_supported',
      param: 'payment_method_types',
    });
    // Listed types turn automatic payment methods off: no return_url needed
    // (https://docs.stripe.com/upgrades/manage-payment-methods).
    const listed = await cardPayment({ payment_method_types: ['card'], return_url: undefined } as never, {
      apiVersion: '2026-05-27.dahlia',
    });
    expect(listed).toMatchObject({
      status: 'succeeded',
      payment_method_types: ['card'],
      automatic_payment_methods: null,
    });
    // allowed_payment_method_types "is mutually exclusive with payment_method_types,
    // excluded_payment_method_types, automatic_payment_methods, and payment_method_configuration":
    // https://docs.stripe.com/changelog/dahlia/2026-07-29/allowed-payment-method-types-parameter
    const both = await failure(
      cardPayment({ allowed_payment_method_types: ['card'], automatic_payment_methods: { enabled: true } }),
    );
    expect(both).toMatchObject({ statusCode: 400, code: 'parameters_exclusive' });
    expect((await cardPayment({ allowed_payment_method_types: ['card'] })).payment_method_types).toEqual(['card']);
  });

  it('takes confirmation-only parameters only with confirm=true', async () => {
    // return_url, off_session, mandate_data, error_on_requires_action: "This parameter can only be
    // used with confirm=true" (https://docs.stripe.com/api/payment_intents/create). Stripe's message
    // for it is not published; the stand-in names the parameter.
    const early = await failure(
      stripe.paymentIntents.create({
        amount: 2500,
        currency: 'chf',
        payment_method: 'pm_card_visa',
        off_session: true,
      }),
    );
    expect(early).toMatchObject({ statusCode: 400, param: 'off_session' });
    const later = await stripe.paymentIntents.create({ amount: 2500, currency: 'chf', payment_method: 'pm_card_visa' });
    expect(later.status).toBe('requires_confirmation');
  });

  it('takes an application fee only on a direct or destination charge', async () => {
    // The message Stripe answers (github.com/Sylius/PayumStripe/issues/14); "To use an application
    // fee, the request must be made on behalf of another account, using the Stripe-Account header
    // ... or the destination parameter" (github.com/stripe-archive/stripe-payments-demo/issues/18).
    const platform = await failure(cardPayment({ application_fee_amount: 100 }));
    expect(platform).toMatchObject({ statusCode: 400, param: 'application_fee_amount' });
    expect(platform.message).toMatch(/^Can only apply an application_fee_amount when the PaymentIntent is attempting/);
    const direct = await cardPayment({ application_fee_amount: 100 }, { stripeAccount: 'acct_1Connected' });
    expect(direct.application_fee_amount).toBe(100);
    const destination = await cardPayment({
      application_fee_amount: 100,
      transfer_data: { destination: 'acct_1Destination' },
    });
    expect(destination.transfer_data).toEqual({ destination: 'acct_1Destination' });
  });

  it('takes ISK and UGX in hundredths of whole units, three-decimal currencies in tens, charges and refunds (https://docs.stripe.com/currencies)', async () => {
    // #special-cases: "to charge 5 ISK, provide an amount value of 500. The amount value must be
    // evenly divisible by 100"; the same for UGX. Stripe's answer to anything else is documented
    // (support.stripe.com, deprecation of fractional ISK charges): 400 invalid_charge_amount_no_decimal_compatible.
    for (const currency of ['isk', 'ugx']) {
      const fraction = await failure(cardPayment({ amount: 1234, currency }));
      expect(fraction, currency).toMatchObject({
        statusCode: 400,
        code: 'invalid_charge_amount_no_decimal_compatible',
        param: 'amount',
      });
      expect(fraction.message).toMatch(/evenly divisible by 100/);
      expect((await cardPayment({ amount: 123400, currency })).status).toBe('succeeded');
    }
    // #three-decimal: "the least-significant (last) digit to be 0" (the error's code is not documented).
    expect(await failure(cardPayment({ amount: 5124, currency: 'kwd' }))).toMatchObject({
      statusCode: 400,
      param: 'amount',
    });
    const kwd = await cardPayment({ amount: 5120, currency: 'kwd' });
    expect(kwd.status).toBe('succeeded');
    expect(await failure(stripe.refunds.create({ payment_intent: kwd.id, amount: 1005 }))).toMatchObject({
      statusCode: 400,
      param: 'amount',
    });
    expect((await stripe.refunds.create({ payment_intent: kwd.id, amount: 1000 })).amount).toBe(1000);
    // #zero-decimal: any whole number of yen (or ariary) is an amount.
    expect((await cardPayment({ amount: 1234, currency: 'jpy' })).status).toBe('succeeded');
  });

  it('records what the intent was created with, and saves the method to the customer', async () => {
    // PaymentIntent fields (https://docs.stripe.com/api/payment_intents/object); with a customer and
    // setup_future_usage "the payment method attaches to the Customer after the PaymentIntent has
    // been confirmed" (https://docs.stripe.com/api/payment_intents/create#create_payment_intent-customer).
    const customer = await stripe.customers.create({ email: 'ada@example.org' });
    const paid = await cardPayment({
      customer: customer.id,
      setup_future_usage: 'off_session',
      statement_descriptor_suffix: 'DONATION',
      expand: ['payment_method'],
    });
    expect(paid).toMatchObject({
      customer: customer.id,
      setup_future_usage: 'off_session',
      statement_descriptor_suffix: 'DONATION',
      application_fee_amount: null,
      payment_method: { customer: customer.id, card: { last4: '4242' } },
    });
    const unknown = await failure(cardPayment({ customer: 'cus_unknown' }));
    expect(unknown).toMatchObject({ code: 'resource_missing', param: 'customer' });
  });
});

describe('SEPA Direct Debit', () => {
  it('debits euros only', async () => {
    // "Supported currencies: eur": https://docs.stripe.com/payments/sepa-debit/accept-a-payment; the
    // message is the one Stripe answers (github.com/Automattic/woocommerce-payments/issues/3232).
    const francs = await failure(sepaPayment({ currency: 'chf' }));
    expect(francs).toMatchObject({ statusCode: 400, param: 'currency' });
    expect(francs.message).toMatch(/The payment method type sepa_debit only supports the following currencies: eur/);
  });

  it('needs the account holder name and email', async () => {
    // "The customer's billing_details. name and email are required.":
    // https://docs.stripe.com/js/payment_intents/confirm_sepa_debit_payment; Stripe answers
    // "Missing required param: billing_details[name]." (github.com/Automattic/woocommerce-payments/issues/1538).
    for (const [field, billing] of [
      ['email', { name: DONOR.name }],
      ['name', { email: DONOR.email }],
    ] as const) {
      const missing = await failure(
        sepaPayment({
          payment_method_data: { type: 'sepa_debit', sepa_debit: { iban: GERMAN_IBAN }, billing_details: billing },
        }),
      );
      expect(missing).toMatchObject({
        statusCode: 400,
        code: 'parameter_missing',
        param: `payment_method_data[billing_details][${field}]`,
        message: `Missing required param: payment_method_data[billing_details][${field}].`,
      });
    }
  });

  it('needs the holder address for IBANs of SEPA countries outside the EEA', async () => {
    // "addressCountry and addressLine1 must be provided in the billingDetails for IBANs with the
    // following country codes: AD, PF, TF, GI, GB, GG, VA, IM, JE, MC, NC, BL, PM, SM, CH, WF"
    // (https://docs.stripe.com/payments/sepa-debit/accept-a-payment, mobile variant), and from
    // 2026-09-30 "You must provide city and postal_code in addition to line1 and country":
    // https://docs.stripe.com/changelog/endive/2026-09-30/require-sepa-direct-debit-address-fields.
    // The code is Stripe's `payment_method_billing_details_address_missing` (stripe-node
    // PaymentIntent.LastPaymentError.Code); the message is the stand-in's.
    const data = (iban: string, address?: Record<string, string>) => ({
      payment_method_data: {
        type: 'sepa_debit',
        sepa_debit: { iban },
        billing_details: { ...DONOR, ...(address ? { address } : {}) },
      },
    });
    const ibans = [
      SWISS_IBAN,
      'GB33BUKB20201555555555',
      'SM86U0322509800000000270100',
      'VA59001123000012345678',
      'AD1200012030200359100100',
      'MC5811222000010123456789030',
    ];
    for (const iban of ibans) {
      expect(await failure(sepaPayment(data(iban)))).toMatchObject({
        statusCode: 400,
        code: 'payment_method_billing_details_address_missing',
        param: 'payment_method_data[billing_details][address][country]',
      });
    }
    const street = { country: 'CH', line1: 'Bahnhofstrasse 1' };
    expect(await failure(sepaPayment(data(SWISS_IBAN, street)))).toMatchObject({
      param: 'payment_method_data[billing_details][address][city]',
    });
    const full = await sepaPayment(data(SWISS_IBAN, { ...street, city: 'Zürich', postal_code: '8001' }));
    expect(full.status).toBe('processing');
    const before = await sepaPayment(data(SWISS_IBAN, street), { apiVersion: '2026-05-27.dahlia' });
    expect(before.status).toBe('processing');
    expect((await sepaPayment()).status).toBe('processing');
  });

  it('needs the mandate the donor accepted online: from their IP address and user agent', async () => {
    // "mandate_data ... customer_acceptance.online.ip_address (Required) ... user_agent (Required)":
    // https://docs.stripe.com/api/payment_intents/create#create_payment_intent-mandate_data; SEPA
    // debits need an accepted mandate (https://docs.stripe.com/payments/sepa-debit). Stripe refuses
    // an address that is not an IP address ("Invalid IP address",
    // github.com/woocommerce/woocommerce-gateway-stripe/issues/3543); nothing documents refusing
    // 0.0.0.0, so the stand-in takes it.
    const none = await failure(sepaPayment({ mandate_data: undefined }));
    expect(none).toMatchObject({ statusCode: 400, code: 'parameter_missing', param: 'mandate_data' });
    const noAgent = await failure(
      sepaPayment({ mandate_data: { customer_acceptance: { type: 'online', online: { ip_address: '203.0.113.7' } } } }),
    );
    expect(noAgent).toMatchObject({ param: 'mandate_data[customer_acceptance][online][user_agent]' });
    const notAnAddress = await failure(
      sepaPayment({
        mandate_data: { customer_acceptance: { type: 'online', online: { ip_address: 'unknown', user_agent: 'x' } } },
      }),
    );
    expect(notAnAddress).toMatchObject({ statusCode: 400, message: 'Invalid IP address' });
    const anyAddress = await sepaPayment({
      mandate_data: { customer_acceptance: { type: 'online', online: { ip_address: '0.0.0.0', user_agent: 'x' } } },
    });
    expect(anyAddress.status).toBe('processing');
    const [mandate] = [...standIn.mandates.values()];
    expect(mandate).toMatchObject({
      object: 'mandate',
      status: 'active',
      payment_method: anyAddress.payment_method,
      customer_acceptance: { type: 'online', online: { ip_address: '0.0.0.0', user_agent: 'x' } },
    });
  });
});

describe('SetupIntents', () => {
  let customer: Stripe.Customer;
  beforeEach(async () => {
    customer = await stripe.customers.create({ email: 'ada@example.org' });
  });

  it('saves a card to the customer at once', async () => {
    // A confirmed SetupIntent "attaches the payment method to the Customer on successful setup":
    // https://docs.stripe.com/api/setup_intents/create#create_setup_intent-customer
    const setup = await setUp({
      customer: customer.id,
      payment_method: 'pm_card_visa',
      metadata: { ref: 'a' },
      expand: ['payment_method'],
    });
    expect(setup).toMatchObject({
      object: 'setup_intent',
      status: 'succeeded',
      usage: 'off_session',
      metadata: { ref: 'a' },
      payment_method: { customer: customer.id },
    });
    const method = await stripe.paymentMethods.retrieve((setup.payment_method as Stripe.PaymentMethod).id);
    expect(method).toMatchObject({ object: 'payment_method', type: 'card', customer: customer.id });
    // payment_method_data[metadata] is kept on the PaymentMethod it creates
    // (https://docs.stripe.com/api/setup_intents/create#create_setup_intent-payment_method_data-metadata).
    const raw = await setUp({
      customer: customer.id,
      payment_method_data: {
        type: 'card',
        card: { number: '5555555555554444', exp_month: 12, exp_year: 2034 },
        metadata: { svc_reference: 'r-1' },
      },
      expand: ['payment_method'],
    });
    expect(raw).toMatchObject({
      status: 'succeeded',
      payment_method: { card: { brand: 'mastercard' }, metadata: { svc_reference: 'r-1' } },
    });
  });

  it('redirects for 3-D Secure, then settles on the donor’s decision', async () => {
    // Test card 4000 0027 6000 3184 / pm_card_threeDSecure2Required always requires authentication
    // (https://docs.stripe.com/testing#regulatory-cards); a SetupIntent then is `requires_action`
    // with a `next_action` (https://docs.stripe.com/api/setup_intents/object#setup_intent_object-next_action).
    const setup = await setUp({ customer: customer.id, payment_method: 'pm_card_threeDSecure2Required' });
    expect(setup.status).toBe('requires_action');
    expect(setup.next_action?.redirect_to_url?.url).toBe(`${standIn.url}/authorize/${setup.id}`);
    standIn.decideSetup(setup.id, true);
    const approved = await stripe.setupIntents.retrieve(setup.id, { expand: ['payment_method'] });
    expect(approved).toMatchObject({ status: 'succeeded', payment_method: { customer: customer.id } });
    const other = await setUp({
      customer: customer.id,
      payment_method_data: { type: 'card', card: { number: '4000002760003184', exp_month: 12, exp_year: 2034 } },
    });
    standIn.decideSetup(other.id, false);
    expect(await stripe.setupIntents.retrieve(other.id)).toMatchObject({
      status: 'requires_payment_method',
      last_setup_error: { code: 'setup_intent_authentication_failure' },
    });
    expect(eventTypes()).toEqual(expect.arrayContaining(['setup_intent.succeeded', 'setup_intent.setup_failed']));
  });

  it('answers a declined card with 402 and the SetupIntent', async () => {
    // Card errors are 402 and carry the `setup_intent` they failed (https://docs.stripe.com/api/errors,
    // "setup_intent: The SetupIntent object for errors returned on a request involving a SetupIntent").
    const declined = await failure(setUp({ customer: customer.id, payment_method: 'pm_card_chargeDeclined' }));
    expect(declined).toMatchObject({
      type: 'StripeCardError',
      statusCode: 402,
      code: 'card_declined',
      decline_code: 'generic_decline',
    });
    expect(declined.setup_intent).toMatchObject({
      status: 'requires_payment_method',
      last_setup_error: { code: 'card_declined' },
    });
  });

  it('sets TWINT up with a redirect from API version 2026-05-27, and refuses it before', async () => {
    // "SetupIntents: Create a Mandate without an initial payment" for TWINT, with API version
    // 2026-05-27.dahlia: https://docs.stripe.com/changelog/dahlia/2026-05-27/recurring-payments-twint
    // (stripe-node 22.2.0 CHANGELOG: `twint` on Mandate.payment_method_details). Before, Stripe
    // answers as for any type it cannot set up (wording from github.com/stripe/stripe-node/issues/1472);
    // whether Stripe gates this by version or by account is not published.
    const setup = await setUp({ customer: customer.id, payment_method_data: { type: 'twint' } });
    expect(setup).toMatchObject({ status: 'requires_action', next_action: { type: 'redirect_to_url' } });
    standIn.decideSetup(setup.id, true);
    const saved = await stripe.setupIntents.retrieve(setup.id);
    expect(saved.status).toBe('succeeded');
    expect(standIn.mandates.get(String(saved.mandate))).toMatchObject({ payment_method_details: { type: 'twint' } });
    const older = await failure(
      setUp({ customer: customer.id, payment_method_data: { type: 'twint' } }, { apiVersion: '2026-04-22.dahlia' }),
    );
    expect(older).toMatchObject({ statusCode: 400 });
    expect(older.message).toMatch(/The payment method type "twint" is invalid/);
  });

  it('is retrieved and canceled as Stripe answers', async () => {
    // Cancel "when in requires_payment_method, requires_confirmation, or requires_action":
    // https://docs.stripe.com/api/setup_intents/cancel; otherwise `setup_intent_unexpected_state`
    // (https://docs.stripe.com/error-codes#setup-intent-unexpected-state).
    const waiting = await setUp({ customer: customer.id, payment_method: 'pm_card_threeDSecure2Required' });
    const canceled = await stripe.setupIntents.cancel(waiting.id, { cancellation_reason: 'abandoned' });
    expect(canceled).toMatchObject({ status: 'canceled', cancellation_reason: 'abandoned', next_action: null });
    const done = await setUp({ customer: customer.id, payment_method: 'pm_card_visa' });
    expect(await failure(stripe.setupIntents.cancel(done.id))).toMatchObject({
      statusCode: 400,
      code: 'setup_intent_unexpected_state',
    });
    expect(await failure(stripe.setupIntents.retrieve('seti_unknown'))).toMatchObject({
      statusCode: 404,
      code: 'resource_missing',
    });
  });
});

describe('lists', () => {
  it('pages PaymentIntents newest first with limit, cursors and created filters', async () => {
    // "limit ... between 1 and 100, and the default is 10", `starting_after`/`ending_before`
    // cursors, `has_more`, "sorted in reverse chronological order": https://docs.stripe.com/api/pagination;
    // `customer` and `created[gt|gte|lt|lte]` filters: https://docs.stripe.com/api/payment_intents/list.
    // Lists are read-after-write consistent (https://docs.stripe.com/search#data-freshness).
    const customer = await stripe.customers.create({ email: 'ada@example.org' });
    const paid = [];
    for (let i = 0; i < 3; i++) {
      paid.push(await cardPayment({ customer: customer.id }));
      now += 10;
    }
    await cardPayment();
    const ids = (list: Stripe.ApiList<Stripe.PaymentIntent>) => list.data.map((intent) => intent.id);
    const [first, second, third] = paid.map((intent) => intent.id);
    const page = await stripe.paymentIntents.list({ customer: customer.id, limit: 2 });
    expect([ids(page), page.has_more]).toEqual([[third, second], true]);
    const older = await stripe.paymentIntents.list({ customer: customer.id, limit: 2, starting_after: second });
    expect([ids(older), older.has_more]).toEqual([[first], false]);
    const newer = await stripe.paymentIntents.list({ customer: customer.id, limit: 1, ending_before: first });
    expect([ids(newer), newer.has_more]).toEqual([[second], true]);
    const since = await stripe.paymentIntents.list({ customer: customer.id, created: { gte: START + 10 } });
    expect(ids(since)).toEqual([third, second]);
    const until = await stripe.paymentIntents.list({ customer: customer.id, created: { lt: START + 10 } });
    expect(ids(until)).toEqual([first]);
    const between = await stripe.paymentIntents.list({ created: { gt: START, lte: START + 10 } });
    expect(ids(between)).toEqual([second]);
    for (let i = 0; i < 9; i++) await cardPayment();
    const all = await stripe.paymentIntents.list();
    expect([all.data.length, all.has_more]).toEqual([10, true]);
    expect(await failure(stripe.paymentIntents.list({ limit: 101 }))).toMatchObject({
      statusCode: 400,
      param: 'limit',
    });
    // "You may only specify one of these parameters: ids, starting_after." is Stripe's wording for
    // exclusive parameters (github.com/stripe/stripe-node/issues/1464).
    expect(
      await failure(stripe.paymentIntents.list({ starting_after: first, ending_before: third } as never)),
    ).toMatchObject({ statusCode: 400, code: 'parameters_exclusive' });
  });

  it('lists the refunds of a PaymentIntent', async () => {
    // `payment_intent` filter: https://docs.stripe.com/api/refunds/list
    const paid = await cardPayment();
    const other = await cardPayment();
    const part = await stripe.refunds.create({ payment_intent: paid.id, amount: 1000 });
    await stripe.refunds.create({ payment_intent: other.id });
    const rest = await stripe.refunds.create({ payment_intent: paid.id });
    const listed = await stripe.refunds.list({ payment_intent: paid.id });
    expect(listed.data.map((refund) => [refund.id, refund.amount])).toEqual([
      [rest.id, 1500],
      [part.id, 1000],
    ]);
  });

  it('lists the events of every change, by type, types and time', async () => {
    // `type` ("using * as a wildcard"), `types` ("You may pass either type or types, but not
    // both"), `created`: https://docs.stripe.com/api/events/list; event objects:
    // https://docs.stripe.com/api/events/object
    const paid = await cardPayment();
    now += 60;
    await stripe.refunds.create({ payment_intent: paid.id, amount: 500 });
    const succeeded = await stripe.events.list({ type: 'payment_intent.succeeded' });
    expect(succeeded.data).toHaveLength(1);
    expect(succeeded.data[0]).toMatchObject({
      object: 'event',
      created: START,
      data: { object: { id: paid.id, status: 'succeeded' } },
      request: { id: expect.stringMatching(/^req_/), idempotency_key: expect.any(String) },
    });
    const intentEvents = await stripe.events.list({ type: 'payment_intent.*' });
    expect(intentEvents.data.map((event) => event.type)).toEqual([
      'payment_intent.succeeded',
      'payment_intent.created',
    ]);
    const refundEvents = await stripe.events.list({ types: ['refund.created', 'charge.refunded'] });
    expect(refundEvents.data.map((event) => event.type)).toEqual(['charge.refunded', 'refund.created']);
    const recent = await stripe.events.list({ created: { gte: START + 60 } });
    expect(recent.data).toHaveLength(2);
    expect(await failure(stripe.events.list({ type: 'refund.created', types: ['refund.created'] }))).toMatchObject({
      statusCode: 400,
      code: 'parameters_exclusive',
    });
  });
});

describe('events', () => {
  it('records an event for each change Stripe makes, as GET /v1/events replays them', async () => {
    // Event types payment_intent.created/.processing/.requires_action/.succeeded/.payment_failed/
    // .canceled, setup_intent.*, customer.created: https://docs.stripe.com/api/events/types
    const typesOf = async () => (await stripe.events.list({ limit: 100 })).data.map((event) => event.type).reverse();
    await failure(cardPayment({ payment_method: 'pm_card_chargeDeclined' }));
    expect(await typesOf()).toEqual(['payment_intent.created', 'payment_intent.payment_failed']);
    const waiting = await cardPayment({ payment_method: 'pm_card_threeDSecure2Required' });
    await stripe.paymentIntents.cancel(waiting.id);
    await sepaPayment();
    expect((await typesOf()).slice(2)).toEqual([
      'payment_intent.created',
      'payment_intent.requires_action',
      'payment_intent.canceled',
      'payment_intent.created',
      'payment_intent.processing',
    ]);
    const declined = (await stripe.events.list({ type: 'payment_intent.payment_failed' })).data[0];
    expect(declined?.data.object).toMatchObject({
      status: 'requires_payment_method',
      last_payment_error: { code: 'card_declined', decline_code: 'generic_decline' },
    });
    // A canceled or succeeded intent is not canceled again (https://docs.stripe.com/api/payment_intents/cancel).
    expect(await failure(stripe.paymentIntents.cancel(waiting.id))).toMatchObject({
      code: 'payment_intent_unexpected_state',
    });
  });
});

describe('search', () => {
  it('finds a PaymentIntent only once it has been searchable for the lag, paging with next_page', async () => {
    // "Don't use search for read-after-write flows ... Under normal operating conditions, data is
    // searchable in under 1 minute. Propagation of new or updated data could be delayed during an
    // outage.": https://docs.stripe.com/search#data-freshness; `page`/`next_page`:
    // https://docs.stripe.com/api/pagination/search
    const paid = await cardPayment({ metadata: { ref: 'r-1' } });
    const query = "metadata['ref']:'r-1'";
    expect((await stripe.paymentIntents.search({ query })).data).toEqual([]);
    now += 59;
    expect((await stripe.paymentIntents.search({ query })).data).toEqual([]);
    now += 1;
    const found = await stripe.paymentIntents.search({ query });
    expect(found).toMatchObject({ object: 'search_result', has_more: false, next_page: null });
    expect(found.data.map((intent) => intent.id)).toEqual([paid.id]);
    await cardPayment({ metadata: { ref: 'r-1' } });
    await cardPayment({ metadata: { ref: 'r-1' } });
    now += 60;
    const first = await stripe.paymentIntents.search({ query, limit: 2 });
    expect([first.data.length, first.has_more]).toEqual([2, true]);
    const next = await stripe.paymentIntents.search({ query, limit: 2, page: String(first.next_page) });
    expect([next.data.length, next.has_more, next.data[0]?.id]).toEqual([1, false, paid.id]);
  });

  it('shows a change to search only after the lag, while retrieval shows it at once', async () => {
    // Updated data propagates to search with the same delay (https://docs.stripe.com/search#data-freshness).
    const waiting = await cardPayment({ payment_method: 'pm_card_threeDSecure2Required', metadata: { ref: 'r-2' } });
    now += 60;
    const query = "metadata['ref']:'r-2'";
    expect((await stripe.paymentIntents.search({ query })).data[0]?.status).toBe('requires_action');
    standIn.decide(waiting.id, true);
    expect((await stripe.paymentIntents.retrieve(waiting.id)).status).toBe('succeeded');
    expect((await stripe.paymentIntents.search({ query })).data[0]?.status).toBe('requires_action');
    now += 60;
    expect((await stripe.paymentIntents.search({ query })).data[0]?.status).toBe('succeeded');
  });
});

describe('disputes', () => {
  it('withdraws and reinstates the funds of a dispute, which keeps its status, and closes it', async () => {
    // Dispute object (`balance_transactions`, `status`) and its events charge.dispute.created,
    // .updated, .funds_withdrawn, .funds_reinstated, .closed: https://docs.stripe.com/api/disputes/object,
    // https://docs.stripe.com/api/events/types
    const paid = await cardPayment();
    const opened = standIn.dispute(paid.id);
    standIn.withdrawDisputeFunds(String(opened.id));
    const withdrawn = await stripe.disputes.retrieve(String(opened.id));
    expect(withdrawn).toMatchObject({ status: 'needs_response', payment_intent: paid.id, amount: 2500 });
    expect(withdrawn.balance_transactions.map((transaction) => transaction.amount)).toEqual([-2500]);
    standIn.updateDispute(String(opened.id), 'under_review');
    standIn.closeDispute(String(opened.id), 'won');
    const won = await stripe.disputes.retrieve(String(opened.id));
    expect(won.status).toBe('won');
    expect(won.balance_transactions.map((transaction) => transaction.amount)).toEqual([-2500, 2500]);
    expect(eventTypes().filter((type) => type.startsWith('charge.dispute'))).toEqual([
      'charge.dispute.created',
      'charge.dispute.funds_withdrawn',
      'charge.dispute.updated',
      'charge.dispute.funds_reinstated',
      'charge.dispute.closed',
    ]);
    // A disputed charge cannot be refunded (code `charge_disputed`: https://docs.stripe.com/error-codes#charge-disputed).
    expect(await failure(stripe.refunds.create({ payment_intent: paid.id }))).toMatchObject({
      code: 'charge_disputed',
    });
  });

  it('turns a SEPA return into a lost dispute with its funds withdrawn', async () => {
    // "Unlike credit card disputes, all SEPA Direct Debit disputes are final and there is no appeals
    // process": https://support.stripe.com/questions/sepa-direct-debit-payment-disputes. Whether
    // Stripe also sends charge.dispute.closed for it is not published; the stand-in does not.
    const debit = await sepaPayment();
    standIn.settle(debit.id, true);
    const returned = standIn.sepaReturn(debit.id);
    const dispute = await stripe.disputes.retrieve(String(returned.id));
    expect(dispute).toMatchObject({ status: 'lost', payment_intent: debit.id });
    expect(dispute.balance_transactions.map((transaction) => transaction.amount)).toEqual([-2500]);
    expect(eventTypes().slice(-2)).toEqual(['charge.dispute.created', 'charge.dispute.funds_withdrawn']);
  });
});

describe('authentication and Connect', () => {
  it('answers 401 to every request once the key is revoked', async () => {
    // "401 Unauthorized: No valid API key provided": https://docs.stripe.com/api/errors; Stripe
    // answers `invalid_request_error` "Invalid API Key provided: sk_test_****…Aso0" (the key masked
    // but its last four; github.com/stripe/stripe-node/issues/361), which stripe-node raises as
    // StripeAuthenticationError (src/Error.ts: 401).
    await cardPayment();
    standIn.revokeKey();
    const refused = await failure(cardPayment());
    expect(refused).toMatchObject({
      type: 'StripeAuthenticationError',
      statusCode: 401,
      rawType: 'invalid_request_error',
    });
    expect(refused.message).toBe(
      `Invalid API Key provided: sk_test_${'*'.repeat(standIn.secretKey.length - 12)}${standIn.secretKey.slice(-4)}`,
    );
    expect(await failure(stripe.customers.list())).toMatchObject({ statusCode: 401 });
  });

  it('answers 403 account_invalid for an account that revoked the platform’s access', async () => {
    // "account_invalid: The account ID provided as a value for the Stripe-Account header is
    // invalid": https://docs.stripe.com/error-codes#account-invalid; 403 with "The provided key
    // '…' does not have access to account '…' (or that account does not exist). Application access
    // may have been revoked." (stripe-php tests/Stripe/ApiRequestorTest.php
    // testRaisesPermissionErrorOn403); stripe-node raises 403 as StripePermissionError.
    standIn.disconnectAccount('acct_1Gone');
    const gone = await failure(cardPayment({}, { stripeAccount: 'acct_1Gone' }));
    expect(gone).toMatchObject({ type: 'StripePermissionError', statusCode: 403, code: 'account_invalid' });
    expect(gone.message).toMatch(/does not have access to account 'acct_1Gone' \(or that account does not exist\)/);
    expect((await cardPayment({}, { stripeAccount: 'acct_1Still' })).status).toBe('succeeded');
    expect((await cardPayment()).status).toBe('succeeded');
  });

  it('keeps each connected account’s objects its own', async () => {
    // With Stripe-Account the request acts as the connected account
    // (https://docs.stripe.com/connect/authentication): its objects are not the platform's.
    const theirs = await cardPayment({}, { stripeAccount: 'acct_1Connected' });
    expect(await failure(stripe.paymentIntents.retrieve(theirs.id))).toMatchObject({
      statusCode: 404,
      code: 'resource_missing',
    });
    expect((await stripe.paymentIntents.retrieve(theirs.id, {}, { stripeAccount: 'acct_1Connected' })).id).toBe(
      theirs.id,
    );
    expect(standIn.events.at(-1)).toMatchObject({ account: 'acct_1Connected' });
  });
});

describe('customers', () => {
  it('creates, retrieves and lists customers by exact email', async () => {
    // Customer create/retrieve/list; "email: A case-sensitive filter on the list based on the
    // customer's email field": https://docs.stripe.com/api/customers/list
    const created = await stripe.customers.create({ email: 'ada@example.org', name: 'Ada', metadata: { ref: 'c-1' } });
    await stripe.customers.create({ email: 'bob@example.org' });
    expect(await stripe.customers.retrieve(created.id)).toMatchObject({
      object: 'customer',
      email: 'ada@example.org',
      name: 'Ada',
      metadata: { ref: 'c-1' },
    });
    expect((await stripe.customers.list({ email: 'ada@example.org' })).data.map((customer) => customer.id)).toEqual([
      created.id,
    ]);
    expect((await stripe.customers.list({ email: 'ADA@example.org' })).data).toEqual([]);
    expect(standIn.customers.get(created.id)).toBeDefined();
  });
});

describe('mandates', () => {
  it('records a SEPA mandate, charges it off session, and refuses it once deactivated', async () => {
    // Mandate object and retrieval: https://docs.stripe.com/api/mandates; `mandate.updated` when it
    // changes (https://docs.stripe.com/api/events/types#event_types-mandate.updated); a mandate no
    // longer usable is `payment_intent_mandate_invalid` ("The provided mandate is invalid and can no
    // longer be used for the payment or setup intent": https://docs.stripe.com/error-codes).
    const customer = await stripe.customers.create({ email: DONOR.email });
    const setup = await setUp({
      customer: customer.id,
      payment_method_data: { type: 'sepa_debit', sepa_debit: { iban: GERMAN_IBAN }, billing_details: DONOR },
      mandate_data: ACCEPTANCE,
    });
    expect(setup.status).toBe('succeeded');
    const mandate = await stripe.mandates.retrieve(String(setup.mandate));
    expect(mandate).toMatchObject({ status: 'active', payment_method: setup.payment_method, type: 'multi_use' });
    const charge = () =>
      stripe.paymentIntents.create({
        amount: 1000,
        currency: 'eur',
        customer: customer.id,
        payment_method: String(setup.payment_method),
        off_session: true,
        confirm: true,
      });
    expect((await charge()).status).toBe('processing');
    standIn.deactivateMandate(mandate.id);
    expect((await stripe.mandates.retrieve(mandate.id)).status).toBe('inactive');
    expect(standIn.events.at(-1)).toMatchObject({ type: 'mandate.updated', data: { object: { status: 'inactive' } } });
    expect(await failure(charge())).toMatchObject({ statusCode: 400, code: 'payment_intent_mandate_invalid' });
  });
});

describe('webhook endpoints', () => {
  it('shows the secret on creation only, and does not update the API version', async () => {
    // "secret: The endpoint's secret, used to generate webhook signatures. Only returned at
    // creation.": https://docs.stripe.com/api/webhook_endpoints/object; the update endpoint takes no
    // `api_version` (https://docs.stripe.com/api/webhook_endpoints/update), so Stripe answers
    // "Received unknown parameter" (e.g. github.com/wyyerd/stripe-rs/issues/61).
    const endpoint = await stripe.webhookEndpoints.create({
      url: 'https://svc.example.org/providers/stripe/events',
      enabled_events: ['payment_intent.succeeded'],
      api_version: '2026-10-28.endive',
    });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const updated = await stripe.webhookEndpoints.update(endpoint.id, {
      url: 'https://svc.example.org/v2/stripe',
      enabled_events: ['payment_intent.succeeded', 'charge.refunded'],
    });
    expect(updated).toMatchObject({ url: 'https://svc.example.org/v2/stripe', api_version: '2026-10-28.endive' });
    expect(updated.secret).toBeUndefined();
    const version = await failure(
      stripe.webhookEndpoints.update(endpoint.id, { api_version: '2026-09-30.endive' } as never),
    );
    expect(version).toMatchObject({
      statusCode: 400,
      code: 'parameter_unknown',
      param: 'api_version',
      message: 'Received unknown parameter: api_version',
    });
    const listed = await stripe.webhookEndpoints.list();
    expect(listed.data.map((item) => [item.id, item.secret])).toEqual([[endpoint.id, undefined]]);
  });

  it('signs recorded events as Stripe signs deliveries', async () => {
    // Stripe-Signature: https://docs.stripe.com/webhooks#verify-events; verified with the SDK.
    const paid = await cardPayment();
    const delivered = standIn.signed(standIn.events.at(-1) as Record<string, unknown>);
    const event = stripe.webhooks.constructEvent(
      delivered.body,
      delivered.signature,
      standIn.webhookSecret,
      undefined,
      undefined,
      now,
    );
    expect(event).toMatchObject({ type: 'payment_intent.succeeded', data: { object: { id: paid.id } } });
    const made = standIn.event('charge.refunded', { id: 'ch_1' });
    expect(
      stripe.webhooks.constructEvent(made.body, made.signature, standIn.webhookSecret, undefined, undefined, now).type,
    ).toBe('charge.refunded');
  });
});

describe('refunds', () => {
  it('refunds a card at once, never beyond what is left', async () => {
    // Refund events refund.created / charge.refunded (https://docs.stripe.com/changelog/acacia/2024-10-28/refund-webhook-update);
    // `charge_already_refunded` and `amount_too_large` (https://docs.stripe.com/error-codes). Stripe's
    // exact messages for them are not published.
    const paid = await cardPayment();
    expect((await stripe.refunds.create({ payment_intent: paid.id, amount: 2000 })).status).toBe('succeeded');
    expect(eventTypes().slice(-2)).toEqual(['refund.created', 'charge.refunded']);
    expect(standIn.events.at(-1)).toMatchObject({ data: { object: { amount_refunded: 2000, refunded: false } } });
    expect(await failure(stripe.refunds.create({ payment_intent: paid.id, amount: 501 }))).toMatchObject({
      code: 'amount_too_large',
    });
    await stripe.refunds.create({ payment_intent: paid.id });
    expect(await failure(stripe.refunds.create({ payment_intent: paid.id }))).toMatchObject({
      code: 'charge_already_refunded',
    });
  });

  it('keeps a SEPA refund pending until it reaches the donor, dashboard refunds too', async () => {
    // Refund `status`: "pending, requires_action, succeeded, failed, or canceled"
    // (https://docs.stripe.com/api/refunds/object); SEPA refunds take days to reach the customer
    // (https://support.stripe.com/topics/refunds). A debit still processing has no successful charge
    // to refund yet: Stripe's Sources-era SEPA guide let such a refund wait for the debit
    // (web.archive.org/web/20190710133342/https://stripe.com/docs/sources/sepa-debit); the current
    // guides do not say, so the stand-in refuses it, the stricter reading (its message and code,
    // `charge_not_refundable`, are the stand-in's).
    const debit = await sepaPayment();
    expect(await failure(stripe.refunds.create({ payment_intent: debit.id }))).toMatchObject({
      statusCode: 400,
      code: 'charge_not_refundable',
    });
    standIn.settle(debit.id, true);
    const early = await stripe.refunds.create({ payment_intent: debit.id, amount: 500 });
    expect(early.status).toBe('pending');
    standIn.settleRefund(early.id);
    expect((await stripe.refunds.retrieve(early.id)).status).toBe('succeeded');
    expect(standIn.events.at(-1)).toMatchObject({ type: 'refund.updated', data: { object: { status: 'succeeded' } } });
    const charge = standIn.dashboardRefund(debit.id, 700);
    expect(charge).toMatchObject({ object: 'charge', amount_refunded: 1200, refunded: false });
    expect((await stripe.refunds.list({ payment_intent: debit.id })).data[0]).toMatchObject({
      amount: 700,
      status: 'pending',
      metadata: {},
    });
    const failing = await sepaPayment();
    standIn.settle(failing.id, false);
    expect(await stripe.paymentIntents.retrieve(failing.id)).toMatchObject({
      status: 'requires_payment_method',
      last_payment_error: { code: 'debit_not_authorized' },
    });
  });

  it('reports a refund that fails later', async () => {
    // refund.failed "Occurs whenever a refund has failed" (https://docs.stripe.com/api/events/types).
    const paid = await cardPayment();
    const refund = await stripe.refunds.create({ payment_intent: paid.id });
    standIn.failRefund(refund.id);
    expect(await stripe.refunds.retrieve(refund.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'expired_or_canceled_card',
    });
    expect(eventTypes().slice(-2)).toEqual(['refund.updated', 'refund.failed']);
    expect(standIn.dashboardRefund(paid.id, 100, 'succeeded')).toMatchObject({ amount_refunded: 100 });
  });
});

describe('unknown parameters', () => {
  it('are refused by every create endpoint, naming the parameter', async () => {
    // "Received unknown parameter: allowed_source_types" with code parameter_unknown
    // (github.com/wyyerd/stripe-rs/issues/61); "parameter_unknown: The request contains one or more
    // unexpected parameters": https://docs.stripe.com/error-codes#parameter-unknown
    const paid = await cardPayment();
    const waiting = await cardPayment({ payment_method: 'pm_card_threeDSecure2Required' });
    const bogus = { bogus: 'x' } as never;
    const calls = [
      stripe.customers.create(bogus),
      stripe.paymentIntents.create({ amount: 100, currency: 'chf', ...(bogus as object) }),
      stripe.setupIntents.create(bogus),
      stripe.refunds.create({ payment_intent: paid.id, ...(bogus as object) }),
      stripe.webhookEndpoints.create({ url: 'https://x.example', enabled_events: ['*'], ...(bogus as object) }),
      stripe.paymentIntents.cancel(waiting.id, bogus),
    ];
    for (const call of calls) {
      expect(await failure(call)).toMatchObject({
        type: 'StripeInvalidRequestError',
        statusCode: 400,
        code: 'parameter_unknown',
        param: 'bogus',
        message: 'Received unknown parameter: bogus',
      });
    }
    expect(await failure(stripe.paymentIntents.create({ currency: 'chf' } as never))).toMatchObject({
      code: 'parameter_missing',
      param: 'amount',
      message: 'Missing required param: amount.',
    });
  });
});
