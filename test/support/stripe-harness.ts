import { now } from '@svc/core';
import { applySeed, DEMO_SEED, parseSeed } from '@svc/seed';
import { afterAll, beforeAll, expect } from 'vitest';
import { type ApiResponse, call, DEMO, seedDemo, tokenFor } from './api';
import { type StripeStandIn, type StripeStandInOptions, startStripeStandIn } from './stripe-stand-in';

/**
 * Payments on Stripe, end to end through the service, against a server speaking Stripe's
 * protocol (stripe-stand-in.ts) that the SDK reaches through SVC_STRIPE_API_BASE: one stand-in
 * per test file, its clock the service's, and the second demo account given Stripe profiles.
 * `useStripe()` in a test file's top level registers the hooks and returns the live handles.
 */
export const ACCOUNT = DEMO.secondAccount;
export const CONNECTED = 'acct_1Connected0001';

/** What a donation form passes on of the donor who accepted a SEPA mandate in their browser. */
export const DONOR_MANDATE = {
  email: 'ada@example.org',
  donor_ip_address: '203.0.113.7',
  donor_user_agent: 'donor-browser/1.0',
};

export interface StripeHarness {
  stripe: StripeStandIn;
  token: string;
}

export function useStripe(options: StripeStandInOptions = {}): StripeHarness {
  const harness = {} as StripeHarness;
  beforeAll(async () => {
    harness.stripe = await startStripeStandIn({ clock: now, ...options });
    process.env.SVC_STRIPE_API_BASE = harness.stripe.url;
    process.env.SVC_STRIPE_TEST_SECRET_KEY = harness.stripe.secretKey;
    process.env.SVC_STRIPE_WEBHOOK_SECRET = harness.stripe.webhookSecret;
    delete process.env.SVC_STRIPE_LIVE_SECRET_KEY;
    await seedDemo();
    const seed = structuredClone(DEMO_SEED) as {
      organisations: Array<{ accounts: Array<{ uuid: string; payment_method_profiles?: unknown[] }> }>;
    };
    for (const organisation of seed.organisations) {
      for (const account of organisation.accounts) {
        if (account.uuid !== ACCOUNT) continue;
        account.payment_method_profiles = [
          { name: 'card', payment_method: 'card', provider: 'simulated' },
          { name: 'card-stripe', payment_method: 'card', provider: 'stripe' },
          { name: 'card-stripe-raw', payment_method: 'card', provider: 'stripe', raw_card_data: true },
          { name: 'card-connect', payment_method: 'card', provider: 'stripe', stripe_account: CONNECTED },
          {
            name: 'card-connect-fee',
            payment_method: 'card',
            provider: 'stripe',
            stripe_account: CONNECTED,
            platform_fee_basis_points: 250,
            platform_fee_fixed: 30,
            statement_descriptor_suffix: 'SPRING APPEAL',
          },
          { name: 'twint-stripe', payment_method: 'twint', provider: 'stripe' },
          { name: 'sepa-stripe', payment_method: 'sepa_dd', provider: 'stripe' },
          { name: 'card-unknown', payment_method: 'card', provider: 'worldpay' },
        ];
      }
    }
    await applySeed(parseSeed(seed));
    harness.token = await tokenFor(DEMO.client);
  });
  afterAll(async () => {
    await harness.stripe.close();
    for (const name of ['SVC_STRIPE_API_BASE', 'SVC_STRIPE_TEST_SECRET_KEY', 'SVC_STRIPE_WEBHOOK_SECRET']) {
      delete process.env[name];
    }
  });
  return harness;
}

/** Calls made with the harness's token and stand-in. */
export function stripeCalls(harness: StripeHarness) {
  // A token lasts an hour of service time: tests that move the clock by days get a new one.
  let issuedAt = Number.NEGATIVE_INFINITY;
  const bearer = async () => {
    if (now() - issuedAt > 3000 || now() < issuedAt) {
      harness.token = await tokenFor(DEMO.client);
      issuedAt = now();
    }
    return harness.token;
  };
  /** An API call with a current token. */
  const api = async (method: string, path: string, body?: unknown): Promise<ApiResponse> =>
    call(method, path, { token: await bearer(), ...(body === undefined ? {} : { body }) });
  const pay = async (fields: Record<string, unknown>, headers: Record<string, string> = {}): Promise<ApiResponse> =>
    call('POST', '/payments', {
      token: await bearer(),
      headers: { 'user-agent': 'donor-browser/1.0', ...headers },
      body: {
        account_uuid: ACCOUNT,
        payment_method: 'card',
        profile: 'card-stripe',
        amount: { value: '2500', currency: 'CHF' },
        test_mode: true,
        return_url: 'https://charity.example.org/thanks',
        ...fields,
      },
    });
  const byReference = (objects: Map<string, Record<string, unknown>>, uuid: string) =>
    [...objects.values()].find((object) => (object.metadata as Record<string, string>)?.svc_reference === uuid);
  const intentOf = (payment: { uuid: string }) => byReference(harness.stripe.intents, payment.uuid);
  const setupOf = (source: { uuid: string }) => byReference(harness.stripe.setupIntents, source.uuid);
  const deliver = (
    type: string,
    object: Record<string, unknown>,
    options: { id?: string; signature?: string; account?: string; livemode?: boolean } = {},
  ): Promise<ApiResponse> => {
    // Signed at the service clock's time, as Stripe would sign it now.
    const { signature: _signature, ...eventOptions } = options;
    const event = harness.stripe.event(type, object, { createdAt: now(), ...eventOptions });
    return call('POST', '/providers/stripe/events', {
      rawBody: event.body,
      headers: { 'content-type': 'application/json', 'stripe-signature': options.signature ?? event.signature },
    });
  };
  /** A payment source on a Stripe card profile, saving the given payment method. */
  const saveCard = async (paymentMethod: string, fields: Record<string, unknown> = {}): Promise<ApiResponse> =>
    call('POST', '/payment-sources', {
      token: await bearer(),
      body: {
        account_uuid: ACCOUNT,
        payment_method: 'card',
        profile: 'card-stripe',
        amount: { value: '100', currency: 'CHF' },
        payment_information: { payment_method: paymentMethod },
        test_mode: true,
        ...fields,
      },
    });
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies freely
  const getPayment = async (uuid: string): Promise<any> => (await api('GET', `/payments/${uuid}`)).json;
  /** A supporter and an active monthly subscription charged from the source. */
  const subscribe = async (sourceUuid: string, amount: number, currency: string): Promise<ApiResponse> => {
    const supporter = await api('POST', '/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada' });
    const subscription = await call('POST', '/subscriptions', {
      token: await bearer(),
      body: {
        account_uuid: ACCOUNT,
        payment_source_uuid: sourceUuid,
        supporter_uuid: supporter.json.uuid,
        currency,
        amount,
        recurring_interval: 'monthly',
        status: 'active',
        test_mode: true,
      },
    });
    expect(subscription.status, subscription.text).toBe(201);
    return subscription;
  };
  const settle = () => call('POST', '/_local/settle');
  return { api, pay, intentOf, setupOf, deliver, saveCard, getPayment, subscribe, settle };
}
