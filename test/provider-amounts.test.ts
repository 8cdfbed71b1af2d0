import { freezeClock, logger } from '@svc/core';
import { forgetProviderHealth } from '@svc/payments';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CALLBACK_UNBOUND } from '../services/payments/src/domain/provider-binding';
import {
  ADYEN_PROFILES,
  type AdyenHarness,
  adyenCalls,
  adyenCard,
  DONOR_BROWSER,
  MERCHANT,
  useAdyen,
  useProfiles,
} from './support/adyen-harness';
import { ADYEN_TEST_CARDS } from './support/adyen-stand-in';
import type { ApiResponse } from './support/api';
import { type StripeHarness, stripeCalls, useStripe } from './support/stripe-harness';

/**
 * Amounts in each provider's minor units (issue 45, @svc/core currencies.ts), end to end through
 * the service against both stand-ins: our API speaks ISO 4217 minor units, Adyen and Stripe each
 * get the same money in theirs, and an amount a provider cannot take exactly is a 400 before any
 * call (or, on a route, passes that candidate over).
 */
const stripeHarness: StripeHarness = useStripe();
const adyenHarness: AdyenHarness = useAdyen();
const stripeApi = stripeCalls(stripeHarness);
const adyenApi = adyenCalls(adyenHarness);

// With the donor's browser: a route with Adyen takes what Adyen's 3-D Secure 2 needs, wherever it lands.
const RAW_VISA_STRIPE = {
  number: '4242424242424242',
  expiry_month: 12,
  expiry_year: 2034,
  cvv: '123',
  ...DONOR_BROWSER,
};

beforeAll(async () => {
  freezeClock(Math.floor(Date.now() / 1000));
  await useProfiles([
    ...ADYEN_PROFILES,
    { name: 'card-stripe', payment_method: 'card', provider: 'stripe' },
    // Adyen first, Stripe behind it: both take the contract's raw card fields.
    {
      name: 'card-adyen-stripe',
      payment_method: 'card',
      raw_card_data: true,
      route: [{ provider: 'adyen', merchant_account: MERCHANT }, { provider: 'stripe' }],
    },
  ]);
});
afterEach(() => {
  vi.restoreAllMocks();
  adyenHarness.adyen.fault(null);
  adyenHarness.adyen.takeNotifications();
  forgetProviderHealth();
});

// biome-ignore lint/suspicious/noExplicitAny: request bodies are read freely
const sentToAdyen = (uuid: string): any =>
  adyenHarness.adyen.requests.find((r) => r.path === '/v72/payments' && r.idempotencyKey === `${uuid}:payment`)?.body;
const intentOf = (uuid: string) => stripeApi.intentOf({ uuid });
/** The first problem of a 400, as the contract's Nested error shape names it. */
const problem = (response: ApiResponse): { property: string; message: string } => response.json.error.message[0];

describe('Adyen gets its own minor units', () => {
  it('charges 1234 ISK as 123400 (two decimals at Adyen, none in ISO 4217), binds its notifications, refunds in them', async () => {
    const unbound = vi.spyOn(logger, 'error');
    const paid = await adyenApi.pay({
      amount: { value: '1234', currency: 'ISK' },
      payment_information: adyenCard(ADYEN_TEST_CARDS.visa),
    });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.json).toMatchObject({ status: 'succeeded', amount: { value: '1234', currency: 'ISK' } });
    expect(sentToAdyen(paid.json.uuid).amount).toEqual({ currency: 'ISK', value: 123400 });
    expect(adyenHarness.adyen.byReference(paid.json.uuid)[0]?.amount).toEqual({ currency: 'ISK', value: 123400 });
    // Adyen's AUTHORISATION says 123400: the same money as our 1234, so it binds.
    expect((await adyenApi.notify()).status).toBe(200);
    const refund = await adyenApi.api('POST', `/payments/${paid.json.uuid}/refunds`, {
      amount: { value: '234', currency: 'ISK' },
    });
    expect(refund.status, refund.text).toBe(200);
    const refundAtAdyen = adyenHarness.adyen.requests.find((r) => r.path.endsWith('/refunds'))?.body as {
      amount: unknown;
    };
    expect(refundAtAdyen.amount).toEqual({ currency: 'ISK', value: 23400 });
    expect((await adyenApi.notify()).status).toBe(200);
    const payment = await adyenApi.getPayment(paid.json.uuid);
    expect(payment.refunded_amount).toEqual({ value: '234', currency: 'ISK' });
    expect(payment.refunds.map((r: { status: string }) => r.status)).toEqual(['succeeded']);
    expect(unbound.mock.calls.filter(([message]) => message === CALLBACK_UNBOUND)).toEqual([]);
  });

  it('refuses 123.45 IDR with a 400 on amount.value before any call: Adyen takes IDR in whole rupiah', async () => {
    const before = adyenHarness.adyen.requests.length;
    const refused = await adyenApi.pay({
      amount: { value: '12345', currency: 'IDR' },
      payment_information: adyenCard(ADYEN_TEST_CARDS.visa),
    });
    expect(refused.status, refused.text).toBe(400);
    expect(problem(refused).property).toBe('amount.value');
    expect(problem(refused).message).toMatch(/adyen takes IDR with 0 decimals/);
    expect(adyenHarness.adyen.requests.length).toBe(before);
    // 1000.00 IDR is 1000 rupiah at Adyen.
    const paid = await adyenApi.pay({
      amount: { value: '100000', currency: 'IDR' },
      payment_information: adyenCard(ADYEN_TEST_CARDS.visa),
    });
    expect(paid.json.status, paid.text).toBe('succeeded');
    expect(sentToAdyen(paid.json.uuid).amount).toEqual({ currency: 'IDR', value: 1000 });
  });

  it('refuses a currency that is no active ISO 4217 code with minor units', async () => {
    const refused = await adyenApi.pay({ amount: { value: '100', currency: 'XXX' } });
    expect(refused.status).toBe(400);
    expect(problem(refused).property).toBe('amount.currency');
  });
});

describe('Stripe gets its own minor units', () => {
  it('charges 10.00 MGA as 10 (zero-decimal at Stripe), and reads a dashboard refund back into ours', async () => {
    const paid = await stripeApi.pay({
      amount: { value: '1000', currency: 'MGA' },
      payment_information: { payment_method: 'pm_card_visa' },
    });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.json).toMatchObject({ status: 'succeeded', amount: { value: '1000', currency: 'MGA' } });
    const intent = intentOf(paid.json.uuid);
    expect(intent).toMatchObject({ amount: 10, currency: 'mga' });
    // 3 ariary refunded in Stripe's dashboard: 300 in ours.
    const charge = stripeHarness.stripe.dashboardRefund(String(intent?.id), 3);
    expect((await stripeApi.deliver('charge.refunded', charge)).json).toEqual({ received: true, applied: true });
    const payment = await stripeApi.getPayment(paid.json.uuid);
    expect(payment.refunded_amount).toEqual({ value: '300', currency: 'MGA' });
  });

  it('charges 1234 ISK as 123400 and refunds 234 ISK as 23400 (two decimals at Stripe, divisible by 100)', async () => {
    const paid = await stripeApi.pay({
      amount: { value: '1234', currency: 'ISK' },
      payment_information: { payment_method: 'pm_card_visa' },
    });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.json.status).toBe('succeeded');
    expect(intentOf(paid.json.uuid)).toMatchObject({ amount: 123400, currency: 'isk' });
    const refund = await stripeApi.api('POST', `/payments/${paid.json.uuid}/refunds`, {
      amount: { value: '234', currency: 'ISK' },
    });
    expect(refund.json.status, refund.text).toBe('succeeded');
    const made = [...stripeHarness.stripe.refunds.values()].find(
      (r) => (r.metadata as Record<string, string>)?.svc_reference === refund.json.uuid,
    );
    expect(made).toMatchObject({ amount: 23400, currency: 'isk' });
  });

  it('refuses 5.124 KWD with a 400 on amount.value before any call: Stripe takes three-decimal amounts in tens', async () => {
    const before = stripeHarness.stripe.requests.length;
    const refused = await stripeApi.pay({
      amount: { value: '5124', currency: 'KWD' },
      payment_information: { payment_method: 'pm_card_visa' },
    });
    expect(refused.status, refused.text).toBe(400);
    expect(problem(refused).property).toBe('amount.value');
    expect(stripeHarness.stripe.requests.length).toBe(before);
    const paid = await stripeApi.pay({
      amount: { value: '5120', currency: 'KWD' },
      payment_information: { payment_method: 'pm_card_visa' },
    });
    expect(intentOf(paid.json.uuid)).toMatchObject({ amount: 5120, currency: 'kwd' });
    const refund = await stripeApi.api('POST', `/payments/${paid.json.uuid}/refunds`, {
      amount: { value: '5', currency: 'KWD' },
    });
    expect(refund.status, refund.text).toBe(400);
    expect(problem(refund).property).toBe('amount.value');
  });
});

describe('a routed donation is the same money at every candidate', () => {
  const routed = (amount: { value: string; currency: string }, card: Record<string, unknown>) =>
    adyenApi.pay({ profile: 'card-adyen-stripe', amount, payment_information: card });

  it('sends 1000.00 IDR as 1000 to Adyen, and as 100000 to Stripe when Adyen was not reached', async () => {
    const atAdyen = await routed({ value: '100000', currency: 'IDR' }, adyenCard(ADYEN_TEST_CARDS.visa));
    expect(atAdyen.json).toMatchObject({ status: 'succeeded', provider: 'adyen' });
    expect(sentToAdyen(atAdyen.json.uuid).amount).toEqual({ currency: 'IDR', value: 1000 });

    adyenHarness.adyen.fault('refuse');
    const moved = await routed({ value: '100000', currency: 'IDR' }, RAW_VISA_STRIPE);
    expect(moved.json, moved.text).toMatchObject({
      status: 'succeeded',
      provider: 'stripe',
      providers_tried: [{ provider: 'adyen', reason: 'connection_refused' }],
    });
    expect(intentOf(moved.json.uuid)).toMatchObject({ amount: 100000, currency: 'idr' });
  });

  it('passes over the candidate that cannot take the amount exactly, as unusable: 123.45 IDR goes to Stripe', async () => {
    const before = adyenHarness.adyen.requests.length;
    const paid = await routed({ value: '12345', currency: 'IDR' }, RAW_VISA_STRIPE);
    expect(paid.json, paid.text).toMatchObject({
      status: 'succeeded',
      provider: 'stripe',
      amount: { value: '12345', currency: 'IDR' },
      providers_tried: [{ provider: 'adyen', reason: 'unusable' }],
    });
    expect(intentOf(paid.json.uuid)).toMatchObject({ amount: 12345, currency: 'idr' });
    expect(adyenHarness.adyen.requests.length).toBe(before);
  });
});
