import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { advanceClock, derivedUuid, freezeClock, newUuid } from '@svc/core';
import { db, tableName } from '@svc/table';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, DEMO, tokenFor } from './support/api';
import { streamEvents } from './support/stream';
import { ACCOUNT, CONNECTED, DONOR_MANDATE, stripeCalls, useStripe } from './support/stripe-harness';
import type { StripeStandIn } from './support/stripe-stand-in';

/**
 * Payments on Stripe, end to end through the service, against the Stripe stand-in
 * (test/support/stripe-harness.ts). What every provider must show is asserted for Stripe by the
 * conformance kit (test/provider-conformance.test.ts); this file keeps what is Stripe's own.
 */
const harness = useStripe();
const { pay, intentOf, setupOf, deliver, saveCard, getPayment, subscribe } = stripeCalls(harness);
let stripe: StripeStandIn;
let token: string;
beforeAll(() => {
  ({ stripe, token } = harness);
});

describe('card payments on Stripe', () => {
  it('charges a Stripe PaymentMethod: succeeded, masked from Stripe, one idempotent intent with our metadata', async () => {
    const response = await pay({ payment_information: { payment_method: 'pm_card_visa' } });
    expect(response.status, response.text).toBe(201);
    expect(response.json).toMatchObject({
      status: 'succeeded',
      provider: 'stripe',
      profile: 'card-stripe',
      payment_information: { brand: 'visa', last4: '4242', expiry_month: 12, expiry_year: 2034 },
    });
    const created = stripe.requests.find(
      (r) =>
        r.path === '/v1/payment_intents' &&
        (r.params.metadata as Record<string, string>)?.svc_reference === response.json.uuid,
    );
    expect(created).toMatchObject({
      method: 'POST',
      idempotencyKey: `${response.json.uuid}:payment_intent`,
      params: {
        amount: '2500',
        currency: 'chf',
        confirm: 'true',
        payment_method: 'pm_card_visa',
        return_url: expect.stringContaining(`/providers/stripe/return/payments/${response.json.uuid}?token=`),
        metadata: { svc_organisation_uuid: DEMO.org, svc_account_uuid: ACCOUNT },
      },
    });
    expect(created?.stripeAccount).toBeUndefined();
  });

  it('answers 400 on payment_information for an unknown PaymentMethod and for raw card data the profile does not allow', async () => {
    const unknown = await pay({ payment_information: { payment_method: 'pm_nope' } });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message[0].property).toBe('payment_information.payment_method');
    const raw = await pay({
      payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
    });
    expect(raw.status).toBe(400);
    expect(raw.json.error.message[0].message).toMatch(/raw card data/);
  });

  it('forwards raw card data where the profile allows it, and stores none of it', async () => {
    const response = await pay({
      profile: 'card-stripe-raw',
      payment_information: { number: '5555 5555 5555 4444', expiry_month: 3, expiry_year: 2031, cvv: '737' },
    });
    expect(response.status, response.text).toBe(201);
    expect(response.json).toMatchObject({
      status: 'succeeded',
      payment_information: { brand: 'mastercard', last4: '4444' },
    });
    const table = JSON.stringify((await db().send(new ScanCommand({ TableName: tableName() }))).Items);
    expect(table).not.toContain('5555555555554444');
    expect(table).not.toContain('"737"');
  });

  it('charges on the connected account of the profile (Stripe-Account)', async () => {
    const response = await pay({ profile: 'card-connect', payment_information: { payment_method: 'pm_card_visa' } });
    expect(response.status, response.text).toBe(201);
    const created = stripe.requests.find((r) => r.idempotencyKey === `${response.json.uuid}:payment_intent`);
    expect(created?.stripeAccount).toBe(CONNECTED);
  });

  it('sends the donor to Stripe for 3-D Secure and settles the payment when they come back', async () => {
    const approved = await pay({ payment_information: { payment_method: 'pm_card_threeDSecure2Required' } });
    expect(approved.json).toMatchObject({ status: 'pending', action: { action_type: 'redirect' } });
    const intent = intentOf(approved.json);
    expect(approved.json.action.url).toBe(`${stripe.url}/authorize/${intent?.id}`);
    stripe.decide(String(intent?.id), true);
    const returnUrl = String((intent as { return_url: string }).return_url).replace(/^https?:\/\/[^/]+/, '');
    const back = await call('GET', `${returnUrl}&payment_intent=${intent?.id}&redirect_status=succeeded`);
    expect(back.status).toBe(303);
    expect(back.headers.location).toBe(
      `https://charity.example.org/thanks?payment_uuid=${approved.json.uuid}&status=succeeded`,
    );
    expect((await getPayment(approved.json.uuid)).status).toBe('succeeded');

    const declined = await pay({ payment_information: { payment_method: 'pm_card_threeDSecure2Required' } });
    const other = intentOf(declined.json);
    stripe.decide(String(other?.id), false);
    const path = String((other as { return_url: string }).return_url).replace(/^https?:\/\/[^/]+/, '');
    expect((await call('GET', path)).status).toBe(303);
    expect(await getPayment(declined.json.uuid)).toMatchObject({
      status: 'failed',
      status_reason: 'payment_intent_authentication_failure',
    });
  });

  it('refuses the return without the payment’s token', async () => {
    const pending = await pay({ payment_information: { payment_method: 'pm_card_threeDSecure2Required' } });
    const response = await call('GET', `/providers/stripe/return/payments/${pending.json.uuid}?token=wrong`);
    expect(response.status).toBe(404);
    expect((await getPayment(pending.json.uuid)).status).toBe('pending');
  });
});

describe('TWINT and SEPA Direct Debit on Stripe', () => {
  it('redirects a TWINT payment in CHF and refuses other currencies', async () => {
    const response = await pay({ payment_method: 'twint', profile: 'twint-stripe' });
    expect(response.status, response.text).toBe(201);
    expect(response.json).toMatchObject({ status: 'pending', action: { action_type: 'redirect' } });
    const euro = await pay({
      payment_method: 'twint',
      profile: 'twint-stripe',
      amount: { value: '100', currency: 'EUR' },
    });
    expect(euro.status).toBe(400);
    expect(euro.json.error.message[0].property).toBe('amount.currency');
  });

  it('keeps a SEPA debit pending while Stripe processes it, then follows Stripe’s events', async () => {
    const sepa = (marker: string) =>
      pay({
        payment_method: 'sepa_dd',
        profile: 'sepa-stripe',
        amount: { value: '5000', currency: 'EUR' },
        payment_information: { ...DONOR_MANDATE, iban: 'DE89370400440532013000', account_holder: 'Ada Donor' },
        custom_parameters: { marker },
      });
    const good = await sepa('good');
    expect(good.status, good.text).toBe(201);
    expect(good.json).toMatchObject({
      status: 'pending',
      status_reason: 'processing',
      payment_information: { iban: 'DE89**************3000', country_code: 'DE', account_holder: 'Ada Donor' },
    });
    expect(good.json.action).toBeUndefined();
    const created = stripe.requests.find((r) => r.idempotencyKey === `${good.json.uuid}:payment_intent`);
    // The mandate's acceptance is the donor's own (given by the client), not our caller's.
    expect(created?.params.mandate_data).toEqual({
      customer_acceptance: { type: 'online', online: { ip_address: '203.0.113.7', user_agent: 'donor-browser/1.0' } },
    });

    const intent = intentOf(good.json) as Record<string, unknown>;
    // A late "processing" changes nothing; the settled debit moves the payment on.
    expect((await deliver('payment_intent.processing', intent)).status).toBe(200);
    expect((await getPayment(good.json.uuid)).status).toBe('pending');
    stripe.settle(String(intent.id), true);
    expect((await deliver('payment_intent.succeeded', intent)).json).toEqual({ received: true, applied: true });
    expect((await getPayment(good.json.uuid)).status).toBe('succeeded');
    // Out of order: a copy of the old "processing" after success does not move it back.
    expect((await deliver('payment_intent.processing', { ...intent, status: 'processing' })).status).toBe(200);
    expect((await getPayment(good.json.uuid)).status).toBe('succeeded');

    const bad = await sepa('bad');
    const badIntent = intentOf(bad.json) as Record<string, unknown>;
    stripe.settle(String(badIntent.id), false);
    await deliver('payment_intent.payment_failed', badIntent);
    expect(await getPayment(bad.json.uuid)).toMatchObject({ status: 'failed', status_reason: 'debit_not_authorized' });

    const names = (await streamEvents()).filter((e) => e.object_uuid === good.json.uuid).map((e) => e.name);
    expect(names).toEqual(['svc.payments.payment.succeeded']);
  });
});

describe('Stripe’s events', () => {
  it('refuses a bad or missing signature with 400 and changes nothing', async () => {
    const pending = await pay({ payment_information: { payment_method: 'pm_card_threeDSecure2Required' } });
    const intent = intentOf(pending.json) as Record<string, unknown>;
    stripe.decide(String(intent.id), true);
    const forged = await deliver('payment_intent.succeeded', intent, { signature: 't=1,v1=deadbeef' });
    expect(forged.status).toBe(400);
    expect(forged.json.error.message[0].property).toBe('Stripe-Signature');
    const unsigned = await call('POST', '/providers/stripe/events', {
      rawBody: stripe.event('payment_intent.succeeded', intent).body,
      headers: { 'content-type': 'application/json' },
    });
    expect(unsigned.status).toBe(400);
    expect((await getPayment(pending.json.uuid)).status).toBe('pending');
  });

  it('applies an event once, however often Stripe delivers it, and ignores unknown types with 200', async () => {
    const pending = await pay({ payment_information: { payment_method: 'pm_card_threeDSecure2Required' } });
    const intent = intentOf(pending.json) as Record<string, unknown>;
    stripe.decide(String(intent.id), true);
    const eventId = `evt_${newUuid().replace(/-/g, '')}`;
    const first = await deliver('payment_intent.succeeded', intent, { id: eventId });
    const again = await deliver('payment_intent.succeeded', intent, { id: eventId });
    expect(first.json).toEqual({ received: true, applied: true });
    expect(again.json).toEqual({ received: true, applied: false, duplicate: true });
    const events = (await streamEvents()).filter((e) => e.object_uuid === pending.json.uuid);
    expect(events.map((e) => e.name)).toEqual(['svc.payments.payment.succeeded']);
    expect((await deliver('customer.created', { id: 'cus_1', object: 'customer' })).json).toEqual({
      received: true,
      applied: false,
    });
  });
});

describe('refunds and disputes on Stripe', () => {
  it('refunds part and then the rest through Stripe, each under its own idempotency key', async () => {
    const paid = await pay({ payment_information: { payment_method: 'pm_card_visa' } });
    const part = await call('POST', `/payments/${paid.json.uuid}/refunds`, {
      token,
      body: { amount: { value: '1000', currency: 'CHF' } },
    });
    expect(part.status, part.text).toBe(200);
    const rest = await call('POST', `/payments/${paid.json.uuid}/refunds`, { token });
    expect(rest.json.amount.value).toBe('1500');
    const refunds = [...stripe.refunds.values()].filter((r) => r.payment_intent === intentOf(paid.json)?.id);
    expect(refunds.map((r) => r.amount)).toEqual([1000, 1500]);
    expect(stripe.requests.find((r) => r.idempotencyKey === `${part.json.uuid}:refund`)).toBeDefined();
    expect((await getPayment(paid.json.uuid)).refunded_amount.value).toBe('2500');
  });

  it('reflects and announces a refund Stripe fails later, and frees its amount', async () => {
    const paid = await pay({ payment_information: { payment_method: 'pm_card_visa' } });
    const refund = await call('POST', `/payments/${paid.json.uuid}/refunds`, {
      token,
      body: { amount: { value: '700', currency: 'CHF' } },
    });
    const atStripe = [...stripe.refunds.values()].find(
      (r) => (r.metadata as Record<string, string>).svc_reference === refund.json.uuid,
    ) as Record<string, unknown>;
    stripe.failRefund(String(atStripe.id));
    expect((await deliver('refund.updated', atStripe)).json.applied).toBe(true);
    const payment = await getPayment(paid.json.uuid);
    expect(payment.refunded_amount.value).toBe('0');
    expect(payment.refunds[0]).toMatchObject({ status: 'failed', failure_reason: 'expired_or_canceled_card' });
    const names = (await streamEvents()).filter((e) => e.object_uuid === refund.json.uuid).map((e) => e.name);
    expect(names).toEqual(['svc.payments.refund.succeeded', 'svc.payments.refund.failed']);
  });

  it('records a refund made in Stripe’s dashboard once, however often its event comes, beside ours', async () => {
    const paid = await pay({ payment_information: { payment_method: 'pm_card_visa' } });
    const ours = await call('POST', `/payments/${paid.json.uuid}/refunds`, {
      token,
      body: { amount: { value: '300', currency: 'CHF' } },
    });
    expect(ours.json.status, ours.text).toBe('succeeded');
    const charge = stripe.dashboardRefund(String(intentOf(paid.json)?.id), 700);
    expect((await deliver('charge.refunded', charge)).json).toEqual({ received: true, applied: true });
    await deliver('charge.refunded', charge);
    const payment = await getPayment(paid.json.uuid);
    expect(payment.refunded_amount).toEqual({ value: '1000', currency: 'CHF' });
    expect(payment.refunds.map((r: { amount: { value: string } }) => r.amount.value).sort()).toEqual(['300', '700']);
    const events = (await streamEvents()).filter((e) =>
      payment.refunds.some((r: { uuid: string }) => r.uuid === e.object_uuid),
    );
    expect(events.map((e) => e.name)).toEqual(['svc.payments.refund.succeeded', 'svc.payments.refund.succeeded']);
  });

  it('records a dispute and its close, announced once each', async () => {
    const paid = await pay({ payment_information: { payment_method: 'pm_card_visa' } });
    const dispute = stripe.dispute(String(intentOf(paid.json)?.id));
    await deliver('charge.dispute.created', dispute);
    await deliver('charge.dispute.created', dispute);
    expect((await getPayment(paid.json.uuid)).dispute).toEqual({
      status: 'needs_response',
      reason: 'fraudulent',
      amount: { value: '2500', currency: 'CHF' },
    });
    await deliver('charge.dispute.closed', stripe.closeDispute(String(dispute.id), 'lost'));
    expect((await getPayment(paid.json.uuid)).dispute.status).toBe('lost');
    const names = (await streamEvents()).filter((e) => e.object_uuid === paid.json.uuid).map((e) => e.name);
    expect(names).toEqual([
      'svc.payments.payment.succeeded',
      'svc.payments.payment.disputed',
      'svc.payments.payment.dispute_closed',
    ]);
  });
});

describe('saved instruments and recurring charges on Stripe', () => {
  it('saves a card on a Stripe customer and charges it off session in a billing run', async () => {
    const source = await saveCard('pm_card_visa');
    expect(source.status, source.text).toBe(201);
    expect(source.json).toMatchObject({ status: 'active', provider: 'stripe', payment_information: { last4: '4242' } });
    // Saved with a SetupIntent for off-session use: nothing charged, nothing to refund.
    const verification = stripe.requests.find((r) => r.idempotencyKey === `${source.json.uuid}:setup_intent`);
    expect(verification?.params).toMatchObject({
      usage: 'off_session',
      confirm: 'true',
      customer: expect.stringMatching(/^cus_/),
    });
    expect(stripe.requests.filter((r) => r.path === '/v1/payment_intents' || r.path === '/v1/refunds')).toEqual(
      stripe.requests.filter(
        (r) =>
          (r.path === '/v1/payment_intents' || r.path === '/v1/refunds') &&
          !r.idempotencyKey?.startsWith(source.json.uuid),
      ),
    );

    const subscription = await subscribe(source.json.uuid, 1800, 'CHF');
    const run = await call('POST', '/_local/billing-run');
    expect(run.json).toMatchObject({ succeeded: expect.any(Number) });
    const [invoice] = (await call('GET', `/subscriptions/${subscription.json.uuid}/invoices`, { token })).json;
    expect(invoice).toMatchObject({ status: 'paid' });
    const attempt = invoice.charge_attempts[0].uuid as string;
    const charge = stripe.requests.find((r) => r.idempotencyKey === `${attempt}:payment_intent`);
    expect(charge?.params).toMatchObject({
      amount: '1800',
      off_session: 'true',
      confirm: 'true',
      customer: verification?.params.customer,
      metadata: { svc_reference: attempt },
      // Confirmed without the donor: automatic payment methods that never redirect.
      automatic_payment_methods: { enabled: 'true', allow_redirects: 'never' },
    });
    expect(charge?.params.payment_method_types).toBeUndefined();
  });
});

describe('recurring SEPA Direct Debit on Stripe', () => {
  const IBAN = { ...DONOR_MANDATE, iban: 'DE89370400440532013000', account_holder: 'Ada Donor' };

  async function sepaSubscription(amount: number) {
    const charged = stripe.charges().length;
    const source = await call('POST', '/payment-sources', {
      token,
      headers: { 'user-agent': 'donor-browser/1.0' },
      body: {
        account_uuid: ACCOUNT,
        payment_method: 'sepa_dd',
        profile: 'sepa-stripe',
        amount: { value: String(amount), currency: 'EUR' },
        payment_information: IBAN,
        test_mode: true,
      },
    });
    expect(source.status, source.text).toBe(201);
    // A mandate, not a debit: a SetupIntent for off-session use, and no PaymentIntent.
    expect(stripe.charges().length).toBe(charged);
    const setup = stripe.requests.find((r) => r.idempotencyKey === `${source.json.uuid}:setup_intent`);
    expect(setup?.params).toMatchObject({
      confirm: 'true',
      usage: 'off_session',
      customer: expect.stringMatching(/^cus_/),
      mandate_data: {
        customer_acceptance: { type: 'online', online: { ip_address: '203.0.113.7', user_agent: 'donor-browser/1.0' } },
      },
    });
    expect(source.json).toMatchObject({
      status: 'active',
      provider: 'stripe',
      payment_information: { iban: 'DE89**************3000', account_holder: 'Ada Donor' },
    });
    const subscription = await subscribe(source.json.uuid, amount, 'EUR');
    return { source: source.json, subscription: subscription.json, customer: setup?.params.customer };
  }

  const invoicesOf = async (subscription: { uuid: string }, bearer = token) =>
    (await call('GET', `/subscriptions/${subscription.uuid}/invoices`, { token: bearer })).json;
  /** The payment of a charge attempt (its uuid is derived from the attempt's). */
  const paymentOf = async (attempt: { uuid: string }, bearer = token) =>
    (await call('GET', `/payments/${derivedUuid('payment', attempt.uuid)}`, { token: bearer })).json;
  const intentsOfAttempt = (attempt: string) =>
    stripe.charges().filter((intent) => (intent.metadata as Record<string, string>).svc_reference === attempt);

  it('saves a mandate without a debit; a billing run’s debit stays pending while Stripe processes it, and Stripe’s event pays the invoice', async () => {
    const { subscription, customer } = await sepaSubscription(2100);
    expect(await call('POST', '/_local/billing-run').then((r) => r.json)).toMatchObject({
      charge_attempts_created: 1,
      succeeded: 0,
      failed: 0,
    });
    const [invoice] = await invoicesOf(subscription);
    expect(invoice).toMatchObject({ status: 'open', charge_attempts: [{ status: 'pending' }] });
    const attempt = invoice.charge_attempts[0];
    const [intent] = intentsOfAttempt(attempt.uuid);
    expect(intent).toMatchObject({ status: 'processing', amount: 2100, customer, currency: 'eur' });
    expect(await paymentOf(attempt)).toMatchObject({
      status: 'pending',
      status_reason: 'processing',
      payment_method: 'sepa_dd',
    });
    // A manual charge meanwhile is refused, and later runs the same day ask nothing of Stripe.
    const manual = await call('POST', `/subscriptions/${subscription.uuid}/invoices/${invoice.uuid}/charge-attempts`, {
      token,
    });
    expect(manual.status).toBe(409);
    advanceClock(3600);
    const later = await tokenFor(DEMO.client);
    const requestsBefore = stripe.requests.length;
    await call('POST', '/_local/billing-run');
    expect(stripe.requests.length).toBe(requestsBefore);

    stripe.settle(String(intent?.id), true);
    const delivered = await deliver('payment_intent.succeeded', intent as Record<string, unknown>);
    expect(delivered.json).toEqual({ received: true, applied: true });
    const [paid] = await invoicesOf(subscription, later);
    expect(paid).toMatchObject({ status: 'paid', charge_attempts: [{ status: 'succeeded' }] });
    expect(await paymentOf(attempt, later)).toMatchObject({ status: 'succeeded' });
    // Delivered again under another event id: nothing moves twice, nothing is charged again.
    await deliver('payment_intent.succeeded', intent as Record<string, unknown>);
    expect(intentsOfAttempt(attempt.uuid)).toHaveLength(1);
    const events = (await streamEvents()).filter(
      (e) => e.object_uuid === derivedUuid('payment', attempt.uuid) || e.object_uuid === invoice.uuid,
    );
    // One each, written in one transaction with the invoice.
    const settledEvents = events
      .map((e) => e.name)
      .filter((name) => name.endsWith('succeeded') || name.endsWith('paid'));
    expect(settledEvents.sort()).toEqual(['svc.payments.payment.succeeded', 'svc.subscriptions.invoice.paid']);
  });

  it('finds a returned debit without an event at the next day’s check, fails the attempt and duns: never a second debit', async () => {
    const { subscription } = await sepaSubscription(2200);
    await call('POST', '/_local/billing-run');
    const [invoice] = await invoicesOf(subscription);
    const attempt = invoice.charge_attempts[0];
    const [intent] = intentsOfAttempt(attempt.uuid);
    // Returned by the bank, and Stripe's event is lost.
    stripe.settle(String(intent?.id), false);
    advanceClock(86_400 + 60);
    const later = await tokenFor(DEMO.client);
    const run = await call('POST', '/_local/billing-run');
    expect(run.json).toMatchObject({ failed: 1 });
    const [dunned] = (await invoicesOf(subscription, later)).filter((i: { uuid: string }) => i.uuid === invoice.uuid);
    expect(dunned).toMatchObject({
      status: 'open',
      failed_payment_attempts: 1,
      charge_attempts: [{ status: 'failed' }],
    });
    expect(await paymentOf(attempt, later)).toMatchObject({
      status: 'failed',
      status_reason: 'debit_not_authorized',
    });
    // Asked about by its id: the attempt's one intent, retrieved, not created again.
    expect(intentsOfAttempt(attempt.uuid)).toHaveLength(1);
    expect(stripe.requests.some((r) => r.method === 'GET' && r.path === `/v1/payment_intents/${intent?.id}`)).toBe(
      true,
    );
    // Stripe's late event changes nothing.
    await deliver('payment_intent.payment_failed', intent as Record<string, unknown>);
    expect(
      (await invoicesOf(subscription, later)).find((i: { uuid: string }) => i.uuid === invoice.uuid),
    ).toMatchObject({
      failed_payment_attempts: 1,
    });
  });

  it('records a debit once when Stripe’s event and the daily check race', async () => {
    const { subscription } = await sepaSubscription(2300);
    await call('POST', '/_local/billing-run');
    const [invoice] = await invoicesOf(subscription);
    const attempt = invoice.charge_attempts[0];
    const [intent] = intentsOfAttempt(attempt.uuid);
    stripe.settle(String(intent?.id), true);
    advanceClock(86_400 + 60);
    const later = await tokenFor(DEMO.client);
    const [run, first, second] = await Promise.all([
      call('POST', '/_local/billing-run'),
      deliver('payment_intent.succeeded', intent as Record<string, unknown>),
      deliver('payment_intent.succeeded', intent as Record<string, unknown>),
    ]);
    expect([run.status, first.status, second.status]).toEqual([200, 200, 200]);
    const [paid] = await invoicesOf(subscription, later);
    expect(paid).toMatchObject({
      status: 'paid',
      failed_payment_attempts: 0,
      charge_attempts: [{ status: 'succeeded' }],
    });
    const names = (await streamEvents())
      .filter((e) => e.object_uuid === derivedUuid('payment', attempt.uuid) || e.object_uuid === invoice.uuid)
      .map((e) => e.name);
    expect(names.filter((n) => n === 'svc.payments.payment.succeeded')).toHaveLength(1);
    expect(names.filter((n) => n === 'svc.subscriptions.invoice.paid')).toHaveLength(1);
    expect(intentsOfAttempt(attempt.uuid)).toHaveLength(1);
  });

  it('saves the mandate of a SEPA payment that asks for it once Stripe has debited it', async () => {
    const payment = await pay({
      payment_method: 'sepa_dd',
      profile: 'sepa-stripe',
      amount: { value: '3000', currency: 'EUR' },
      payment_information: IBAN,
      create_payment_source: true,
    });
    expect(payment.status, payment.text).toBe(201);
    expect(payment.json).toMatchObject({ status: 'pending', status_reason: 'processing' });
    const intent = intentOf(payment.json) as Record<string, unknown>;
    expect(intent).toMatchObject({ setup_future_usage: 'off_session', customer: expect.stringMatching(/^cus_/) });
    stripe.settle(String(intent.id), true);
    await deliver('payment_intent.succeeded', intent);
    const settled = await getPayment(payment.json.uuid);
    expect(settled.status).toBe('succeeded');
    expect(settled.created_payment_source_uuid).toEqual(expect.any(String));
    const source = await call('GET', `/payment-sources/${settled.created_payment_source_uuid}`, { token });
    expect(source.json).toMatchObject({ status: 'active', payment_method: 'sepa_dd', provider: 'stripe' });
  });
});

describe('recurring charges on a connected account', () => {
  it('saves the card on the organisation’s own Stripe account and charges it there in a billing run', async () => {
    const source = await call('POST', '/payment-sources', {
      token,
      body: {
        account_uuid: ACCOUNT,
        payment_method: 'card',
        profile: 'card-connect',
        amount: { value: '100', currency: 'CHF' },
        payment_information: { payment_method: 'pm_card_visa' },
        test_mode: true,
      },
    });
    expect(source.status, source.text).toBe(201);
    const saved = stripe.requests.filter((r) => r.idempotencyKey?.startsWith(`${source.json.uuid}:`));
    expect(saved.map((r) => [r.path, r.stripeAccount])).toEqual([
      ['/v1/customers', CONNECTED],
      ['/v1/setup_intents', CONNECTED],
    ]);
    const subscription = await subscribe(source.json.uuid, 1500, 'CHF');
    await call('POST', '/_local/billing-run');
    const [invoice] = (await call('GET', `/subscriptions/${subscription.json.uuid}/invoices`, { token })).json;
    expect(invoice).toMatchObject({ status: 'paid' });
    const attempt = invoice.charge_attempts[0].uuid as string;
    const charge = stripe.requests.find((r) => r.idempotencyKey === `${attempt}:payment_intent`);
    expect(charge?.stripeAccount).toBe(CONNECTED);
    expect(charge?.params).toMatchObject({ customer: expect.stringMatching(/^cus_/), off_session: 'true' });
    // Refunded on the same account, where the charge is.
    const payment = derivedUuid('payment', attempt);
    const refund = await call('POST', `/payments/${payment}/refunds`, { token, body: {} });
    expect(refund.json.status, refund.text).toBe('succeeded');
    expect(stripe.requests.at(-1)).toMatchObject({ path: '/v1/refunds', stripeAccount: CONNECTED });
  });
});

describe('a payment source that needs 3-D Secure on Stripe', () => {
  it('stays pending until the donor comes back from Stripe, then becomes active', async () => {
    const charges = stripe.charges().length;
    const source = await saveCard('pm_card_threeDSecure2Required');
    expect(source.json).toMatchObject({ status: 'pending', action: { action_type: 'redirect' } });
    const setup = setupOf(source.json) as { id: string; next_action: { redirect_to_url: { return_url: string } } };
    const returnUrl = setup.next_action.redirect_to_url.return_url;
    expect(returnUrl).toContain(`/providers/stripe/return/payment-sources/${source.json.uuid}?token=`);
    stripe.decideSetup(setup.id, true);
    const back = await call('GET', returnUrl.replace(/^https?:\/\/[^/]+/, ''));
    expect(back.status).toBe(200);
    expect(back.text).toContain('Payment method active');
    expect((await call('GET', `/payment-sources/${source.json.uuid}`, { token })).json.status).toBe('active');
    // Nothing was charged to save the card, so nothing is refunded either.
    expect(stripe.charges().length).toBe(charges);
  });
});

describe('cancelling on Stripe', () => {
  it('cancels the intent of a pending payment', async () => {
    const pending = await pay({ payment_information: { payment_method: 'pm_card_threeDSecure2Required' } });
    const cancelled = await call('POST', `/payments/${pending.json.uuid}/cancel`, { token });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.json.status).toBe('cancelled');
    expect(intentOf(pending.json)?.status).toBe('canceled');
  });

  it('keeps a payment Stripe will not cancel (the donor just completed it) as it is: 400', async () => {
    const pending = await pay({ payment_information: { payment_method: 'pm_card_threeDSecure2Required' } });
    stripe.decide(String(intentOf(pending.json)?.id), true);
    const refused = await call('POST', `/payments/${pending.json.uuid}/cancel`, { token });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json.error.message[0].code).toBe('error.payment.not_cancellable');
    expect((await getPayment(pending.json.uuid)).status).toBe('pending');
  });
});

describe('guards', () => {
  it('answers 404 on the Stripe return for a payment of another provider', async () => {
    const simulated = await pay({
      profile: 'card',
      payment_information: { number: '4000000000003220', expiry_month: 12, expiry_year: 2099, cvv: '123' },
    });
    expect(simulated.json.status).toBe('pending');
    const token = new URL(simulated.json.action.url).searchParams.get('token');
    const response = await call('GET', `/providers/stripe/return/payments/${simulated.json.uuid}?token=${token}`);
    expect(response.status).toBe(404);
    expect((await getPayment(simulated.json.uuid)).status).toBe('pending');
  });

  it('accepts events signed with any of the configured secrets (platform and Connect endpoints)', async () => {
    const previous = process.env.SVC_STRIPE_WEBHOOK_SECRET;
    process.env.SVC_STRIPE_WEBHOOK_SECRET = `whsec_connect_endpoint,${stripe.webhookSecret}`;
    try {
      expect((await deliver('customer.created', { id: 'cus_2', object: 'customer' })).status).toBe(200);
    } finally {
      process.env.SVC_STRIPE_WEBHOOK_SECRET = previous;
    }
  });
});

describe('profiles and keys', () => {
  it('answers 400 on profile for an unknown provider and for a missing key, naming which', async () => {
    const unknown = await pay({ profile: 'card-unknown', payment_information: { payment_method: 'pm_card_visa' } });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message[0]).toMatchObject({
      property: 'profile',
      message: expect.stringMatching(/worldpay, which is not a payment provider/),
    });
    const live = await pay({ test_mode: false, payment_information: { payment_method: 'pm_card_visa' } });
    expect(live.status).toBe(400);
    expect(live.json.error.message[0]).toMatchObject({
      property: 'profile',
      message: expect.stringMatching(/no live key.*SVC_STRIPE_LIVE_SECRET_KEY/),
    });
  });
});

describe('an answer that never comes', () => {
  const { settle } = stripeCalls(harness);

  it('leaves the payment pending as provider_unavailable until background work finds Stripe’s result: one charge', async () => {
    freezeClock(Math.floor(Date.now() / 1000));
    const before = stripe.charges().length;
    // Stripe charges, but neither the answer nor the SDK's retry's answer arrives.
    stripe.failNext(2, 'drop');
    const lost = await pay({ payment_information: { payment_method: 'pm_card_visa' } });
    expect(lost.status, lost.text).toBe(201);
    expect(lost.json).toMatchObject({ status: 'pending', status_reason: 'provider_unavailable' });
    expect(lost.json.action).toBeUndefined();
    expect(stripe.charges().length - before).toBe(1);
    await settle();
    expect((await getPayment(lost.json.uuid)).status).toBe('pending');
    advanceClock(61);
    await settle();
    const resolved = await getPayment(lost.json.uuid);
    expect(resolved.status).toBe('succeeded');
    expect(resolved.status_reason).toBeUndefined();
    expect(stripe.charges().length - before).toBe(1);
    const names = (await streamEvents()).filter((e) => e.object_uuid === lost.json.uuid).map((e) => e.name);
    expect(names).toEqual(['svc.payments.payment.succeeded']);
  });

  it('records the redirect of a payment whose answer was lost while it waited for the donor, and asks no more', async () => {
    freezeClock(Math.floor(Date.now() / 1000));
    stripe.failNext(2, 'drop');
    const lost = await pay({ payment_information: { payment_method: 'pm_card_threeDSecure2Required' } });
    expect(lost.json).toMatchObject({ status: 'pending', status_reason: 'provider_unavailable' });
    advanceClock(61);
    await settle();
    const waiting = await getPayment(lost.json.uuid);
    expect(waiting).toMatchObject({ status: 'pending', action: { action_type: 'redirect' } });
    expect(waiting.status_reason).toBeUndefined();
    // No longer in the resolver's work: later passes ask Stripe nothing about it.
    const asked = stripe.requests.length;
    advanceClock(120);
    await settle();
    expect(stripe.requests.length).toBe(asked);
    // The donor follows the recorded redirect and comes back: the payment settles as usual.
    const intent = intentOf(lost.json) as { id: string; return_url: string };
    stripe.decide(intent.id, true);
    const back = await call('GET', intent.return_url.replace(/^https?:\/\/[^/]+/, ''));
    expect(back.status).toBe(303);
    expect((await getPayment(lost.json.uuid)).status).toBe('succeeded');
  });

  it('asks Stripe again for a refund it did not answer, until it does: refunded once', async () => {
    freezeClock(Math.floor(Date.now() / 1000));
    const paid = await pay({ payment_information: { payment_method: 'pm_card_visa' } });
    const intentId = intentOf(paid.json)?.id;
    // Stripe answers 500 to the refund and to the SDK's retry: nothing was refunded.
    stripe.failNext(2, 'server_error');
    const refund = await call('POST', `/payments/${paid.json.uuid}/refunds`, {
      token,
      body: { amount: { value: '900', currency: 'CHF' } },
    });
    expect(refund.status, refund.text).toBe(200);
    const atStripe = () => [...stripe.refunds.values()].filter((r) => r.payment_intent === intentId);
    expect(atStripe()).toHaveLength(0);
    advanceClock(61);
    await settle();
    expect(atStripe().map((r) => [r.amount, (r.metadata as Record<string, string>).svc_reference])).toEqual([
      [900, refund.json.uuid],
    ]);
    // Confirmed: later passes do not ask again.
    advanceClock(61);
    await settle();
    expect(atStripe()).toHaveLength(1);
    expect((await getPayment(paid.json.uuid)).refunded_amount.value).toBe('900');
  });

  it('fails a payment Stripe never received, once it has looked for 15 minutes', async () => {
    freezeClock(Math.floor(Date.now() / 1000));
    const before = stripe.charges().length;
    // Stripe answers 500 to the request and to the SDK's retry: nothing was created.
    stripe.failNext(2, 'server_error');
    const lost = await pay({ payment_information: { payment_method: 'pm_card_visa' } });
    expect(lost.json).toMatchObject({ status: 'pending', status_reason: 'provider_unavailable' });
    advanceClock(61);
    await settle();
    expect((await getPayment(lost.json.uuid)).status).toBe('pending');
    advanceClock(15 * 60);
    await settle();
    expect(await getPayment(lost.json.uuid)).toMatchObject({ status: 'failed', status_reason: 'provider_unavailable' });
    expect(stripe.charges().length - before).toBe(0);
  });
});
