import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { advanceClock, freezeClock, logger, newUuid } from '@svc/core';
import * as table from '@svc/table';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CAPTURE_FAILED, UNUSABLE_NOTIFICATION } from '../services/payments/src/providers/adyen/adyen-notifications';
import {
  ACCOUNT,
  type AdyenHarness,
  adyenCalls,
  adyenCard,
  DONOR_BROWSER,
  MERCHANT,
  useAdyen,
} from './support/adyen-harness';
import { ADYEN_DECLINE, ADYEN_HOLDER_NAMES, ADYEN_TEST_CARDS, type AdyenStandIn } from './support/adyen-stand-in';
import { call, DEMO, tokenFor } from './support/api';
import { streamEvents } from './support/stream';

/**
 * Payments on Adyen, end to end through the service, against the Adyen stand-in
 * (test/support/adyen-harness.ts): one test per flow of contract section 10. Fail-over between
 * providers is test/failover.test.ts; what every provider must show is asserted for Adyen by the
 * conformance kit (test/provider-conformance.test.ts).
 */
const harness: AdyenHarness = useAdyen();
const { api, pay, notify, getPayment, atAdyen } = adyenCalls(harness);
let adyen: AdyenStandIn;
beforeAll(() => {
  adyen = harness.adyen;
  freezeClock(Math.floor(Date.now() / 1000));
});
afterEach(() => {
  vi.restoreAllMocks();
  adyen.fault(null);
  // Each test delivers the notifications it is about, no others.
  adyen.takeNotifications();
});

type Batch = ReturnType<AdyenStandIn['takeNotifications']>;
type Item = Record<string, unknown> & { eventCode?: string; pspReference?: string };

const card = (number: string = ADYEN_TEST_CARDS.visa, holder?: string) => ({
  payment_information: adyenCard(number, holder),
});
/** Adyen Web's encrypted card fields as TEST takes them: plain values prefixed `test_`. */
const ENCRYPTED_FIELDS = {
  encryptedCardNumber: `test_${ADYEN_TEST_CARDS.mastercard}`,
  encryptedExpiryMonth: 'test_03',
  encryptedExpiryYear: 'test_2030',
  encryptedSecurityCode: 'test_737',
};
/** Adyen Web's state.data: the encrypted fields and its browserInfo; the rest in our words. */
const { browser_info: WEB_BROWSER_INFO, ...DONOR } = DONOR_BROWSER;
const ENCRYPTED = { ...ENCRYPTED_FIELDS, browserInfo: WEB_BROWSER_INFO, ...DONOR };
const sepa = () =>
  pay({
    payment_method: 'sepa_dd',
    profile: 'sepa-adyen',
    amount: { value: '5000', currency: 'EUR' },
    payment_information: { iban: 'DE89 3704 0044 0532 0130 00', account_holder: 'Ada Donor' },
  });
const twint = () => pay({ payment_method: 'twint', profile: 'twint-adyen' });

// biome-ignore lint/suspicious/noExplicitAny: request bodies are read freely
const sent = (reference: string): any =>
  adyen.requests.find((r) => r.path === '/v72/payments' && r.idempotencyKey === `${reference}:payment`)?.body;
/** The pspReference of our payment (or source) at Adyen: exactly one payment there. */
function pspOf(reference: string): string {
  const made = atAdyen(reference);
  expect(made).toHaveLength(1);
  return made[0]?.pspReference as string;
}
/** The donor back from Adyen's page: the returnUrl we sent Adyen, with the redirectResult Adyen appends. */
const comeBack = (reference: string, redirectResult: string) =>
  call(
    'GET',
    `${String(sent(reference).returnUrl).replace(/^https?:\/\/[^/]+/, '')}&redirectResult=${encodeURIComponent(redirectResult)}`,
  );
const deliver = (body: unknown, headers: Record<string, string> = {}) =>
  call('POST', '/providers/adyen/notifications', {
    rawBody: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
async function accepted(alter?: (body: Batch) => unknown): Promise<void> {
  const response = await notify(alter);
  expect(response.status, response.text).toBe(200);
  expect(response.text).toBe('[accepted]');
}
const itemsOf = (body: Batch): Item[] => body.notificationItems.map((entry) => entry.NotificationRequestItem as Item);
const batchOf = (items: Item[]) => ({
  live: 'false',
  notificationItems: items.map((i) => ({ NotificationRequestItem: i })),
});
const eventsOf = async (uuid: string) =>
  (await streamEvents()).filter((e) => e.object_uuid === uuid).map((e) => e.name);
/** A card payment under the client's Idempotency-Key (a retry names the same payment). */
const postPayment = (key: string, token: string) =>
  call('POST', '/payments', {
    token,
    headers: { 'idempotency-key': key },
    body: {
      account_uuid: ACCOUNT,
      payment_method: 'card',
      profile: 'card-adyen',
      amount: { value: '2500', currency: 'CHF' },
      test_mode: true,
      ...card(),
    },
  });
const refund = (uuid: string, body: unknown = {}) => api('POST', `/payments/${uuid}/refunds`, body);

describe('card payments on Adyen', () => {
  it('forwards raw card fields where the profile allows them and keeps only the brand and last four digits', async () => {
    const number = '4111111111111111';
    const paid = await pay(card(number));
    expect(paid.status, paid.text).toBe(201);
    expect(paid.json).toMatchObject({
      status: 'succeeded',
      provider: 'adyen',
      profile: 'card-adyen',
      payment_information: { brand: 'visa', last4: '1111', expiry_month: 3, expiry_year: 2030 },
    });
    expect(sent(paid.json.uuid)).toMatchObject({
      merchantAccount: MERCHANT,
      amount: { currency: 'CHF', value: 2500 },
      reference: paid.json.uuid,
      paymentMethod: { type: 'scheme', number, expiryMonth: '03', expiryYear: '2030', cvc: '737' },
      shopperInteraction: 'Ecommerce',
      metadata: { svc_reference: paid.json.uuid, svc_organisation: DEMO.org, svc_account: ACCOUNT },
    });
    // The number and CVC went to Adyen in that one request, and are nowhere else: not in our
    // table, our answer, another request, or Adyen's notification.
    const carrying = adyen.requests.filter((r) => JSON.stringify(r.body).includes(number));
    expect(carrying.map((r) => r.idempotencyKey)).toEqual([`${paid.json.uuid}:payment`]);
    const everything = JSON.stringify((await table.db().send(new ScanCommand({ TableName: table.tableName() }))).Items);
    for (const text of [everything, paid.text, JSON.stringify(adyen.takeNotifications())]) {
      expect(text).not.toContain(number);
      expect(text).not.toContain('"737"');
    }
  });

  it('asks for what 3-D Secure 2 needs of a browser payment, naming each missing field, before any call (issue 45, point 11)', async () => {
    const before = adyen.requests.length;
    const full = adyenCard(ADYEN_TEST_CARDS.visa);
    for (const field of ['browser_info', 'origin', 'donor_ip_address', 'email', 'billing_address']) {
      const { [field]: _dropped, ...without } = full;
      const refused = await pay({ payment_information: without });
      expect(refused.status, field).toBe(400);
      expect(refused.json.error.message[0]).toMatchObject({ property: `payment_information.${field}` });
    }
    const partial = await pay({
      payment_information: { ...full, billing_address: { street: 'Bahnhofstrasse', city: 'Zürich', country: 'CH' } },
    });
    expect(partial.status).toBe(400);
    expect(partial.json.error.message[0].property).toMatch(/^payment_information/);
    const path = await pay({ payment_information: { ...full, origin: 'https://charity.example.org/donate' } });
    expect(path.status).toBe(400);
    expect(adyen.requests.length).toBe(before);
    // The supporter's e-mail stands in for the card's.
    const { email: _email, ...noEmail } = full;
    const known = await pay({
      payment_information: noEmail,
      supporter: { first_name: 'Ada', email: 'ada@example.org' },
    });
    expect(known.status, known.text).toBe(201);
    expect(sent(known.json.uuid)).toMatchObject({ shopperEmail: 'ada@example.org', shopperIP: '203.0.113.7' });
  });

  it('refuses raw card fields on a profile that takes Adyen’s encrypted fields, and takes those', async () => {
    const before = adyen.requests.length;
    const raw = await pay({ profile: 'card-adyen-web', ...card() });
    expect(raw.status).toBe(400);
    expect(raw.json.error.message[0]).toMatchObject({
      property: 'payment_information',
      message: expect.stringMatching(/raw card data is not allowed/),
    });
    expect(adyen.requests.length).toBe(before);
    const paid = await pay({ profile: 'card-adyen-web', payment_information: ENCRYPTED });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.json).toMatchObject({ status: 'succeeded', provider: 'adyen' });
    expect(sent(paid.json.uuid).paymentMethod).toEqual({ type: 'scheme', ...ENCRYPTED_FIELDS });
    // Adyen Web's browserInfo passed through as sent, the rest of 3-D Secure 2 in Adyen's names.
    expect(sent(paid.json.uuid)).toMatchObject({
      browserInfo: WEB_BROWSER_INFO,
      origin: 'https://charity.example.org',
      shopperIP: '203.0.113.7',
      shopperEmail: 'ada@example.org',
      billingAddress: {
        street: 'Bahnhofstrasse',
        houseNumberOrName: '1',
        postalCode: '8001',
        city: 'Zürich',
        country: 'CH',
      },
    });
  });

  it.each([
    [ADYEN_DECLINE.holderName, 'declined'],
    [ADYEN_HOLDER_NAMES.notEnoughBalance, 'insufficient_funds'],
  ])('records Adyen’s refusal (holder %s) as a failed payment: %s', async (holder, reason) => {
    const refused = await pay(card(ADYEN_TEST_CARDS.visa, holder));
    expect(refused.status, refused.text).toBe(201);
    expect(refused.json).toMatchObject({ status: 'failed', status_reason: reason, provider: 'adyen' });
    expect(atAdyen(refused.json.uuid).map((p) => p.status)).toEqual(['refused']);
  });
});

describe('3-D Secure 2 by redirect', () => {
  const threeDS = () => pay(card(ADYEN_TEST_CARDS.threeDS2));

  it('sends the donor to Adyen and settles the payment with Adyen’s redirectResult when they come back', async () => {
    const pending = await threeDS();
    const uuid = pending.json.uuid;
    const psp = pspOf(uuid);
    expect(pending.json).toMatchObject({
      status: 'pending',
      action: { action_type: 'redirect', url: `${adyen.url}/redirect/${psp}` },
    });
    expect(sent(uuid).returnUrl).toContain(`/providers/adyen/return/payments/${uuid}?token=`);
    const redirectResult = adyen.approve(psp, true);
    const back = await comeBack(uuid, redirectResult);
    expect(back.status, back.text).toBe(303);
    expect(back.headers.location).toBe(`https://charity.example.org/thanks?payment_uuid=${uuid}&status=succeeded`);
    expect(adyen.requests.filter((r) => r.path === '/v72/payments/details').at(-1)?.body).toEqual({
      details: { redirectResult },
    });
    expect(await getPayment(uuid)).toMatchObject({ status: 'succeeded', payment_information: { last4: '0000' } });
    // A reload of the page, and Adyen's own notification after it, change nothing.
    const details = adyen.requests.length;
    expect((await comeBack(uuid, redirectResult)).status).toBe(303);
    expect(adyen.requests.length).toBe(details);
    await accepted();
    expect(await eventsOf(uuid)).toEqual(['svc.payments.payment.succeeded']);
  });

  it('sends the donor back with the payment pending when Adyen does not answer; their reload settles it', async () => {
    const pending = await threeDS();
    const redirectResult = adyen.approve(pspOf(pending.json.uuid), true);
    adyen.fault('error', { times: 1 });
    const back = await comeBack(pending.json.uuid, redirectResult);
    expect(back.status, back.text).toBe(303);
    expect(back.headers.location).toContain('status=pending');
    expect((await getPayment(pending.json.uuid)).status).toBe('pending');
    expect((await comeBack(pending.json.uuid, redirectResult)).headers.location).toContain('status=succeeded');
  });

  it('takes a redirectResult of 20,000 characters by POST; a GET past API Gateway’s 10,240 bytes never reaches us (issue 46, point 8)', async () => {
    const pending = await threeDS();
    const uuid = pending.json.uuid;
    const longest = adyen.approve(pspOf(uuid), true, { length: 20_000 });
    // As a GET the URL alone is over the HTTP API's limit of request line and headers: refused
    // before any function, nothing changes (in AWS the payment then settles by notification).
    const tooLong = await comeBack(uuid, longest);
    expect(tooLong.status).toBe(431);
    expect(tooLong.json.error.message[0].code).toBe('error.request.headers_too_large');
    expect((await getPayment(uuid)).status).toBe('pending');
    // By POST, as Adyen returns the donor when its redirect was a POST: the form carries it.
    const returnPath = String(sent(uuid).returnUrl).replace(/^https?:\/\/[^/]+/, '');
    const posted = await call('POST', returnPath, {
      rawBody: new URLSearchParams({ redirectResult: longest }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(posted.status, posted.text).toBe(303);
    expect(posted.headers.location).toContain('status=succeeded');
    expect(adyen.requests.filter((r) => r.path === '/v72/payments/details').at(-1)?.body).toEqual({
      details: { redirectResult: longest },
    });
    // One character more than Adyen's maximum is a 400 naming it; a GET just under the limit passes.
    const over = await call('POST', returnPath, {
      rawBody: new URLSearchParams({ redirectResult: `${longest}A` }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(over.status).toBe(400);
    expect(over.json.error.message[0].property).toBe('redirectResult');
    const next = await threeDS();
    const fits = adyen.approve(pspOf(next.json.uuid), true, { length: 9_000 });
    expect((await comeBack(next.json.uuid, fits)).status).toBe(303);
  });

  it('refuses a forged redirectResult and another payment’s (4xx, nothing changes); the donor’s own still settles it', async () => {
    const mine = await threeDS();
    const uuid = mine.json.uuid;
    const forged = await comeBack(uuid, 'forged-by-someone!AAAAAAAAAAAAAAAA');
    expect(forged.status).toBe(400);
    expect(forged.json.error.message[0].property).toBe('redirectResult');

    // A used one (of a payment already settled), and a fresh one of another pending payment.
    const other = await threeDS();
    const used = adyen.approve(pspOf(other.json.uuid), true);
    expect((await comeBack(other.json.uuid, used)).status).toBe(303);
    const third = await threeDS();
    const fresh = adyen.approve(pspOf(third.json.uuid), true);
    for (const stolen of [used, fresh]) {
      const response = await comeBack(uuid, stolen);
      expect(response.status, response.text).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
    }
    expect(await getPayment(uuid)).toMatchObject({ status: 'pending', action: { action_type: 'redirect' } });

    const own = await comeBack(uuid, adyen.approve(pspOf(uuid), true));
    expect(own.status, own.text).toBe(303);
    expect(await getPayment(uuid)).toMatchObject({ status: 'succeeded' });
    // The third payment is authorised at Adyen: its notification settles it.
    await accepted();
    expect((await getPayment(third.json.uuid)).status).toBe('succeeded');
  });
});

describe('TWINT and SEPA Direct Debit on Adyen', () => {
  it('sends a CHF donor to TWINT and settles on their return, or by Adyen’s notification when they never come back', async () => {
    const pending = await twint();
    expect(pending.status, pending.text).toBe(201);
    const uuid = pending.json.uuid;
    const psp = pspOf(uuid);
    expect(pending.json).toMatchObject({ status: 'pending', action: { url: `${adyen.url}/redirect/${psp}` } });
    expect(sent(uuid)).toMatchObject({ paymentMethod: { type: 'twint' }, amount: { currency: 'CHF' } });
    const back = await comeBack(uuid, adyen.approve(psp, true));
    expect(back.headers.location).toContain('status=succeeded');
    expect(await getPayment(uuid)).toMatchObject({ status: 'succeeded' });

    const gone = await twint();
    adyen.approve(pspOf(gone.json.uuid), true);
    const refused = await twint();
    adyen.approve(pspOf(refused.json.uuid), false);
    await accepted();
    expect((await getPayment(gone.json.uuid)).status).toBe('succeeded');
    expect((await getPayment(refused.json.uuid)).status).toBe('failed');
  });

  it('refuses TWINT in EUR with 400 on amount.currency, before Adyen', async () => {
    const before = adyen.requests.length;
    const euro = await pay({
      payment_method: 'twint',
      profile: 'twint-adyen',
      amount: { value: '100', currency: 'EUR' },
    });
    expect(euro.status).toBe(400);
    expect(euro.json.error.message[0].property).toBe('amount.currency');
    expect(adyen.requests.length).toBe(before);
  });

  it('keeps a SEPA debit processing until Adyen settles it and says so', async () => {
    const good = await sepa();
    expect(good.status, good.text).toBe(201);
    expect(good.json).toMatchObject({
      status: 'pending',
      status_reason: 'processing',
      payment_information: { iban: 'DE89**************3000', account_holder: 'Ada Donor' },
    });
    expect(good.json.action).toBeUndefined();
    expect(sent(good.json.uuid).paymentMethod).toEqual({
      type: 'sepadirectdebit',
      iban: 'DE89370400440532013000',
      ownerName: 'Ada Donor',
    });
    const bad = await sepa();
    adyen.settle(pspOf(good.json.uuid), 'success');
    adyen.settle(pspOf(bad.json.uuid), 'failure');
    await accepted();
    expect((await getPayment(good.json.uuid)).status).toBe('succeeded');
    expect(await getPayment(bad.json.uuid)).toMatchObject({ status: 'failed', status_reason: 'declined' });
  });
});

describe('saved instruments and recurring charges on Adyen', () => {
  /** A supporter, and an active monthly subscription charged from the source. */
  async function subscribe(sourceUuid: string, supporterUuid: string, amount: number) {
    const subscription = await api('POST', '/subscriptions', {
      account_uuid: ACCOUNT,
      payment_source_uuid: sourceUuid,
      supporter_uuid: supporterUuid,
      currency: 'CHF',
      amount,
      recurring_interval: 'monthly',
      status: 'active',
      test_mode: true,
    });
    expect(subscription.status, subscription.text).toBe(201);
    return subscription.json;
  }

  it('stores the card of a payment for its supporter and charges it in a billing run (ContAuth, Subscription)', async () => {
    const supporter = await api('POST', '/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada' });
    const paid = await pay({ ...card(), create_payment_source: true, supporter: { uuid: supporter.json.uuid } });
    expect(paid.json, paid.text).toMatchObject({
      status: 'succeeded',
      created_payment_source_uuid: expect.any(String),
    });
    expect(sent(paid.json.uuid)).toMatchObject({
      storePaymentMethod: true,
      shopperReference: supporter.json.uuid,
      recurringProcessingModel: 'Subscription',
      shopperInteraction: 'Ecommerce',
    });
    const stored = atAdyen(paid.json.uuid)[0]?.storedPaymentMethodId;
    expect(stored).toEqual(expect.any(String));
    const source = await api('GET', `/payment-sources/${paid.json.created_payment_source_uuid}`);
    expect(source.json).toMatchObject({ status: 'active', provider: 'adyen', payment_information: { last4: '1142' } });

    const subscription = await subscribe(source.json.uuid, supporter.json.uuid, 1800);
    expect((await call('POST', '/_local/billing-run')).json).toMatchObject({ succeeded: expect.any(Number) });
    const [invoice] = (await api('GET', `/subscriptions/${subscription.uuid}/invoices`)).json;
    expect(invoice).toMatchObject({ status: 'paid', charge_attempts: [{ status: 'succeeded' }] });
    const attempt = invoice.charge_attempts[0].uuid as string;
    expect(sent(attempt)).toMatchObject({
      merchantAccount: MERCHANT,
      amount: { currency: 'CHF', value: 1800 },
      paymentMethod: { type: 'scheme', storedPaymentMethodId: stored },
      shopperReference: supporter.json.uuid,
      shopperInteraction: 'ContAuth',
      recurringProcessingModel: 'Subscription',
    });
    expect(atAdyen(attempt).map((p) => p.status)).toEqual(['authorised']);
  });

  it('saves a card alone with a zero-value authorisation, and one that needs 3-D Secure once the donor is back', async () => {
    const save = (number: string) =>
      api('POST', '/payment-sources', {
        account_uuid: ACCOUNT,
        payment_method: 'card',
        profile: 'card-adyen',
        amount: { value: '1000', currency: 'CHF' },
        payment_information: adyenCard(number),
        test_mode: true,
      });
    const source = await save(ADYEN_TEST_CARDS.mastercard);
    expect(source.status, source.text).toBe(201);
    expect(source.json).toMatchObject({ status: 'active', provider: 'adyen' });
    expect(sent(source.json.uuid)).toMatchObject({
      amount: { currency: 'CHF', value: 0 },
      storePaymentMethod: true,
      recurringProcessingModel: 'Subscription',
    });

    const challenged = await save(ADYEN_TEST_CARDS.threeDS2Mastercard);
    expect(challenged.json).toMatchObject({ status: 'pending', action: { action_type: 'redirect' } });
    expect(sent(challenged.json.uuid).returnUrl).toContain(
      `/providers/adyen/return/payment-sources/${challenged.json.uuid}?token=`,
    );
    const redirectResult = adyen.approve(pspOf(challenged.json.uuid), true);
    // Adyen does not answer at first: the donor sees it pending, and their reload completes it.
    adyen.fault('error', { times: 1 });
    expect((await comeBack(challenged.json.uuid, redirectResult)).text).toContain('Payment method pending');
    const back = await comeBack(challenged.json.uuid, redirectResult);
    expect(back.status, back.text).toBe(200);
    expect(back.text).toContain('Payment method active');
    expect((await api('GET', `/payment-sources/${challenged.json.uuid}`)).json.status).toBe('active');

    // A return by POST (issue 46, point 8): the long redirectResult as a form field.
    const posted = await save(ADYEN_TEST_CARDS.threeDS2Mastercard);
    const longResult = adyen.approve(pspOf(posted.json.uuid), true, { length: 15_000 });
    const postBack = await call('POST', String(sent(posted.json.uuid).returnUrl).replace(/^https?:\/\/[^/]+/, ''), {
      rawBody: new URLSearchParams({ redirectResult: longResult }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(postBack.status, postBack.text).toBe(200);
    expect(postBack.text).toContain('Payment method active');
  });
});

describe('refunds on Adyen', () => {
  it('refunds part, then the rest, by pspReference: pending until Adyen’s REFUND; more than is left is refused before Adyen', async () => {
    const paid = await pay(card());
    const uuid = paid.json.uuid;
    const psp = pspOf(uuid);
    const part = await refund(uuid, { amount: { value: '1000', currency: 'CHF' } });
    expect(part.status, part.text).toBe(200);
    expect(part.json).toMatchObject({ status: 'pending', amount: { value: '1000' } });
    expect(adyen.requests.find((r) => r.idempotencyKey === `${part.json.uuid}:refund`)).toMatchObject({
      path: `/v72/payments/${psp}/refunds`,
      body: {
        merchantAccount: MERCHANT,
        amount: { currency: 'CHF', value: 1000 },
        reference: `${uuid}:${part.json.uuid}`,
      },
    });
    const before = adyen.requests.length;
    const over = await refund(uuid, { amount: { value: '1501', currency: 'CHF' } });
    expect(over.status).toBe(400);
    expect(over.json.error.message[0].property).toBe('amount.value');
    expect(adyen.requests.length).toBe(before);
    const rest = await refund(uuid);
    expect(rest.json).toMatchObject({ status: 'pending', amount: { value: '1500' } });

    await accepted();
    const payment = await getPayment(uuid);
    expect(payment.refunded_amount).toEqual({ value: '2500', currency: 'CHF' });
    expect(payment.refunds.map((r: { status: string }) => r.status)).toEqual(['succeeded', 'succeeded']);
    expect(await eventsOf(part.json.uuid)).toEqual(['svc.payments.refund.succeeded']);
    expect(await eventsOf(rest.json.uuid)).toEqual(['svc.payments.refund.succeeded']);
  });

  it('fails a refund Adyen reports REFUND_FAILED and frees its amount', async () => {
    const paid = await pay(card(ADYEN_TEST_CARDS.visa, ADYEN_HOLDER_NAMES.refundFails));
    const uuid = paid.json.uuid;
    const first = await refund(uuid, { amount: { value: '700', currency: 'CHF' } });
    const items = itemsOf(adyen.takeNotifications());
    expect(items.map((i) => i.eventCode)).toEqual(['AUTHORISATION', 'REFUND', 'REFUND_FAILED']);
    // Whichever of the two comes first, the refund ends failed.
    expect((await deliver(batchOf([...items].reverse()))).text).toBe('[accepted]');
    const payment = await getPayment(uuid);
    expect(payment.refunded_amount.value).toBe('0');
    expect(payment.refunds[0]).toMatchObject({ uuid: first.json.uuid, status: 'failed' });
    expect(await eventsOf(first.json.uuid)).toEqual(['svc.payments.refund.failed']);
    // Its amount is free again: all of the payment can be refunded.
    expect((await refund(uuid)).json.amount.value).toBe('2500');
  });
});

describe('a refund before capture is a cancel (issue 45, point 1)', () => {
  it('refunds the whole payment as a reversal: Adyen cancels it while uncaptured, refunds it after; either is the refund succeeding', async () => {
    for (const captured of [false, true]) {
      const paid = await pay(card());
      const uuid = paid.json.uuid;
      const psp = pspOf(uuid);
      if (!captured) adyen.holdCapture(psp);
      const whole = await refund(uuid);
      expect(whole.json).toMatchObject({ status: 'pending', amount: { value: '2500' } });
      expect(adyen.requests.find((r) => r.idempotencyKey === `${whole.json.uuid}:reversal`)).toMatchObject({
        path: `/v72/payments/${psp}/reversals`,
        body: { merchantAccount: MERCHANT, reference: `${uuid}:${whole.json.uuid}` },
      });
      expect(adyen.requests.some((r) => r.path === `/v72/payments/${psp}/refunds`)).toBe(false);
      await accepted();
      expect(adyen.payments.get(psp)?.status).toBe(captured ? 'authorised' : 'cancelled');
      const payment = await getPayment(uuid);
      expect(payment).toMatchObject({ status: 'succeeded', refunded_amount: { value: '2500', currency: 'CHF' } });
      expect(payment.refunds).toMatchObject([{ uuid: whole.json.uuid, status: 'succeeded' }]);
      expect(await eventsOf(whole.json.uuid)).toEqual(['svc.payments.refund.succeeded']);
    }
  });

  it('fails a part refunded before capture with Adyen’s reason and frees it; after the capture it goes through', async () => {
    const paid = await pay(card());
    const uuid = paid.json.uuid;
    const psp = pspOf(uuid);
    adyen.holdCapture(psp);
    const early = await refund(uuid, { amount: { value: '1000', currency: 'CHF' } });
    await accepted();
    const payment = await getPayment(uuid);
    expect(payment.refunded_amount.value).toBe('0');
    expect(payment.refunds).toMatchObject([
      {
        uuid: early.json.uuid,
        status: 'failed',
        failure_reason: "Transaction hasn't been captured, refund not possible",
      },
    ]);
    expect(await eventsOf(early.json.uuid)).toEqual(['svc.payments.refund.failed']);
    adyen.capture(psp);
    const later = await refund(uuid, { amount: { value: '1000', currency: 'CHF' } });
    await accepted();
    expect((await getPayment(uuid)).refunds[1]).toMatchObject({ uuid: later.json.uuid, status: 'succeeded' });
  });

  it('fails a reversal Adyen refuses, freeing the amount, and binds CANCEL_OR_REFUND like every item', async () => {
    const paid = await pay(card());
    const uuid = paid.json.uuid;
    const psp = pspOf(uuid);
    await accepted();
    const whole = await refund(uuid);
    const item = itemsOf(adyen.takeNotifications()).find((i) => i.eventCode === 'CANCEL_OR_REFUND') as Item;
    // Another merchant account's item about the same references changes nothing.
    const foreign = adyen.sign({ ...item, merchantAccountCode: 'SomeoneElse', additionalData: {} } as Item);
    expect((await deliver(batchOf([foreign]))).text).toBe('[accepted]');
    expect((await getPayment(uuid)).refunds[0].status).toBe('pending');
    const refused = adyen.sign({
      ...item,
      success: 'false',
      reason: 'Payment is partially refunded',
      additionalData: {},
    } as Item);
    expect((await deliver(batchOf([refused]))).text).toBe('[accepted]');
    const payment = await getPayment(uuid);
    expect(payment.refunded_amount.value).toBe('0');
    expect(payment.refunds[0]).toMatchObject({ uuid: whole.json.uuid, status: 'failed' });
    expect(adyen.payments.get(psp)?.status).toBe('authorised');
  });
});

describe('a redirect the donor abandons (issue 45, point 2)', () => {
  it('is cancelled at Adyen and failed (approval_expired) once the donor’s time is over, without OFFER_CLOSED', async () => {
    const pending = await pay(card(ADYEN_TEST_CARDS.threeDS2));
    expect(pending.json).toMatchObject({ status: 'pending', action: expect.any(Object) });
    const uuid = pending.json.uuid as string;
    adyen.takeNotifications();
    // The donor's whole window (recheck.ts APPROVAL_EXPIRES_SECONDS), the resolver's checks on the way.
    for (const seconds of [3600, 86_400, 86_400]) {
      advanceClock(seconds);
      expect((await call('POST', '/_local/settle', { token: await tokenFor(DEMO.client) })).status).toBe(200);
    }
    expect(await getPayment(uuid)).toMatchObject({ status: 'failed', status_reason: 'approval_expired' });
    // Cancelled at Adyen (by its pspReference where Adyen gave one, else by our reference), so it
    // cannot complete later; Adyen's own notifications (OFFER_CLOSED, the CANCELLATION) were never
    // delivered.
    const cancels = adyen.requests.filter((r) => r.path.endsWith('/cancels'));
    expect(cancels.some((r) => (r.body as { reference?: string }).reference === uuid)).toBe(true);
  });
});

describe('succeeded means captured (issue 45, point 1)', () => {
  it('asks Adyen to capture every payment at once, whatever the merchant account is set to', async () => {
    const paid = await pay(card());
    expect(paid.json.status).toBe('succeeded');
    expect(sent(paid.json.uuid)).toMatchObject({ captureDelayHours: 0 });
    // Captured, so a refund can be made (the stand-in leaves an authorisation without it uncaptured).
    const refunded = await refund(paid.json.uuid);
    expect(refunded.status, refunded.text).toBe(200);
    await accepted();
    expect((await getPayment(paid.json.uuid)).refunds).toMatchObject([{ status: 'succeeded' }]);
  });

  it.each([
    ['CAPTURE_FAILED', 'capture_failed'],
    ['EXPIRE', 'authorisation_expired'],
  ] as const)(
    'fails a payment recorded as paid when Adyen reports %s, announced and alarmed, once',
    async (eventCode, reason) => {
      const paid = await pay(card());
      expect(paid.json.status).toBe('succeeded');
      await accepted();
      const psp = pspOf(paid.json.uuid);
      const item = adyen.sign({
        eventCode,
        pspReference: `X${psp.slice(1)}`,
        originalReference: psp,
        merchantReference: paid.json.uuid,
        merchantAccountCode: MERCHANT,
        amount: { currency: 'CHF', value: 2500 },
        success: 'true',
        reason: '',
        eventDate: new Date().toISOString(),
      } as Item);
      const errors = vi.spyOn(logger, 'error');
      for (let i = 0; i < 2; i++) expect((await deliver(batchOf([item]))).text).toBe('[accepted]');
      expect(errors.mock.calls.filter(([message]) => message === CAPTURE_FAILED)).toHaveLength(1);
      errors.mockRestore();
      expect(await getPayment(paid.json.uuid)).toMatchObject({ status: 'failed', status_reason: reason });
      expect(await eventsOf(paid.json.uuid)).toEqual(['svc.payments.payment.succeeded', 'svc.payments.payment.failed']);
    },
  );

  it('fails it from the stand-in’s own CAPTURE_FAILED too, and an AUTHORISATION arriving after it revives nothing', async () => {
    const paid = await pay(card());
    const psp = pspOf(paid.json.uuid);
    const authorisation = itemsOf(adyen.takeNotifications()).find((i) => i.eventCode === 'AUTHORISATION') as Item;
    adyen.captureFails(psp);
    await accepted();
    expect((await getPayment(paid.json.uuid)).status).toBe('failed');
    // The payment's own AUTHORISATION, first delivered only now (Adyen's order is not guaranteed).
    expect((await deliver(batchOf([authorisation]))).text).toBe('[accepted]');
    expect(await getPayment(paid.json.uuid)).toMatchObject({ status: 'failed', status_reason: 'capture_failed' });
  });
});

describe('refunds made in Adyen’s Customer Area (issue 45, point 5)', () => {
  /** A refund as Adyen notifies one made in its Customer Area: the payment's own reference. */
  const made = (uuid: string, psp: string, refundPsp: string, value: number, eventCode = 'REFUND') =>
    adyen.sign({
      eventCode,
      pspReference: refundPsp,
      originalReference: psp,
      merchantReference: uuid,
      merchantAccountCode: MERCHANT,
      amount: { currency: 'CHF', value },
      success: 'true',
      reason: '',
      eventDate: new Date().toISOString(),
      additionalData: {},
    } as Item);

  it('records and announces a refund made elsewhere, once; REFUNDED_REVERSED reverses it and frees its amount', async () => {
    const paid = await pay(card());
    const uuid = paid.json.uuid;
    const psp = pspOf(uuid);
    adyen.takeNotifications();
    const refundPsp = `R${psp.slice(1)}`;
    for (let i = 0; i < 2; i++)
      expect((await deliver(batchOf([made(uuid, psp, refundPsp, 1000)]))).text).toBe('[accepted]');
    const refunded = await getPayment(uuid);
    expect(refunded.refunded_amount).toEqual({ value: '1000', currency: 'CHF' });
    expect(refunded.refunds).toMatchObject([{ status: 'succeeded', amount: { value: '1000' } }]);
    const refundUuid = refunded.refunds[0].uuid as string;
    expect(await eventsOf(refundUuid)).toEqual(['svc.payments.refund.succeeded']);
    // Only what is left can be refunded through us now.
    expect((await refund(uuid, { amount: { value: '1501', currency: 'CHF' } })).status).toBe(400);

    expect((await deliver(batchOf([made(uuid, psp, refundPsp, 1000, 'REFUNDED_REVERSED')]))).text).toBe('[accepted]');
    const reversed = await getPayment(uuid);
    expect(reversed.refunded_amount.value).toBe('0');
    expect(reversed.refunds[0]).toMatchObject({ uuid: refundUuid, status: 'failed' });
    expect(await eventsOf(refundUuid)).toEqual(['svc.payments.refund.succeeded', 'svc.payments.refund.failed']);
  });

  it('records nothing when the reversal comes before the refund it reverses; binds like every item', async () => {
    const paid = await pay(card());
    const uuid = paid.json.uuid;
    const psp = pspOf(uuid);
    adyen.takeNotifications();
    const refundPsp = `S${psp.slice(1)}`;
    await deliver(batchOf([made(uuid, psp, refundPsp, 500, 'REFUNDED_REVERSED'), made(uuid, psp, refundPsp, 500)]));
    expect((await getPayment(uuid)).refunds).toEqual([]);
    // Another payment's pspReference as originalReference: not this payment's refund.
    await deliver(batchOf([made(uuid, 'NOTTHEPAYMENT001', `T${psp.slice(1)}`, 500)]));
    expect((await getPayment(uuid)).refunded_amount.value).toBe('0');
  });
});

describe('cancelling on Adyen', () => {
  it('cancels a payment waiting on 3-D Secure by its pspReference; Adyen’s CANCELLATION changes nothing more', async () => {
    const pending = await pay(card(ADYEN_TEST_CARDS.threeDS2));
    const uuid = pending.json.uuid;
    const cancelled = await api('POST', `/payments/${uuid}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.json).toMatchObject({ status: 'cancelled', status_reason: 'cancelled_by_merchant' });
    expect(adyen.requests.at(-1)).toMatchObject({
      path: `/v72/payments/${pspOf(uuid)}/cancels`,
      body: { merchantAccount: MERCHANT, reference: uuid },
    });
    expect(atAdyen(uuid)[0]?.status).toBe('cancelled');
    await accepted();
    expect(await getPayment(uuid)).toMatchObject({ status: 'cancelled', status_reason: 'cancelled_by_merchant' });
    expect(await eventsOf(uuid)).toEqual(['svc.payments.payment.cancelled']);
  });

  it('records a TWINT payment the donor approved just before the merchant’s cancel as paid: Adyen had captured it', async () => {
    const pending = await twint();
    const uuid = pending.json.uuid;
    adyen.approve(pspOf(uuid), true);
    // Adyen takes the cancel ("received") and decides later: too late, the payment is captured.
    expect((await api('POST', `/payments/${uuid}/cancel`)).json.status).toBe('cancelled');
    expect(adyen.requests.at(-1)).toMatchObject({ path: '/v72/cancels', body: { paymentReference: uuid } });
    const items = itemsOf(adyen.takeNotifications());
    expect(items.map((i) => [i.eventCode, i.success])).toEqual([
      ['AUTHORISATION', 'true'],
      ['TECHNICAL_CANCEL', 'false'],
    ]);
    expect((await deliver(batchOf([...items].reverse()))).text).toBe('[accepted]');
    expect(await getPayment(uuid)).toMatchObject({ status: 'succeeded' });
    expect(await eventsOf(uuid)).toEqual(['svc.payments.payment.cancelled', 'svc.payments.payment.succeeded']);
    expect((await refund(uuid)).json).toMatchObject({ status: 'pending', amount: { value: '2500' } });
  });

  it('fails a TWINT payment the donor abandoned once Adyen closes the offer (OFFER_CLOSED)', async () => {
    const pending = await twint();
    advanceClock(12 * 3600 + 60);
    const items = itemsOf(adyen.takeNotifications());
    expect(items.map((i) => i.eventCode)).toContain('OFFER_CLOSED');
    expect((await deliver(batchOf(items))).text).toBe('[accepted]');
    expect(await getPayment(pending.json.uuid)).toMatchObject({ status: 'failed', status_reason: 'approval_expired' });
  });
});

describe('Adyen’s notifications', () => {
  it('refuses a batch with one bad HMAC signature (400) and applies none of it; applies the signed one once', async () => {
    const [first, second] = [await sepa(), await sepa()];
    adyen.settle(pspOf(first.json.uuid), 'success');
    adyen.settle(pspOf(second.json.uuid), 'success');
    const batch = adyen.takeNotifications();
    const items = itemsOf(batch);
    const tampered = batchOf([items[0] as Item, { ...items[1], amount: { currency: 'EUR', value: 1 } }]);
    const refused = await deliver(tampered);
    expect(refused.status).toBe(400);
    expect(refused.json.error.message[0].property).toBe('hmacSignature');
    expect((await getPayment(first.json.uuid)).status).toBe('pending');

    expect((await deliver(batch)).text).toBe('[accepted]');
    expect((await deliver(batch)).text).toBe('[accepted]');
    for (const payment of [first, second]) {
      expect((await getPayment(payment.json.uuid)).status).toBe('succeeded');
      expect(await eventsOf(payment.json.uuid)).toEqual(['svc.payments.payment.succeeded']);
    }
  });

  it('acknowledges a signed item it cannot read (alarmed, not applied) and applies the rest; reads additionalData objects (issue 45, point 7)', async () => {
    const [first, second] = [await sepa(), await sepa()];
    adyen.settle(pspOf(first.json.uuid), 'success');
    adyen.settle(pspOf(second.json.uuid), 'success');
    const items = itemsOf(adyen.takeNotifications());
    // Signed by Adyen (our key) but not something we can act on: `success` neither true nor false.
    const unreadable = adyen.sign({ ...items[0], success: 'maybe' } as Item);
    // Signed, with additionalData holding an object beside its strings, as Adyen's metadata is.
    const withMetadata = adyen.sign({
      ...items[1],
      additionalData: { ...(items[1]?.additionalData as object), metadata: { svc_organisation: DEMO.org } },
    } as Item);
    const errors = vi.spyOn(logger, 'error');
    const answer = await deliver(batchOf([unreadable, withMetadata]));
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).toBe('[accepted]');
    expect(errors).toHaveBeenCalledWith(
      UNUSABLE_NOTIFICATION,
      expect.objectContaining({ psp: unreadable.pspReference, problems: [expect.stringContaining('success')] }),
    );
    errors.mockRestore();
    expect((await getPayment(first.json.uuid)).status).toBe('pending');
    expect((await getPayment(second.json.uuid)).status).toBe('succeeded');
    // The real item for the first, when it comes, is applied: the unreadable one left no marker.
    expect((await deliver(batchOf([adyen.sign(items[0] as Item)]))).text).toBe('[accepted]');
    expect((await getPayment(first.json.uuid)).status).toBe('succeeded');
  });

  it('asks for basic auth when a user and password are configured: 401 without, [accepted] with', async () => {
    const debit = await sepa();
    adyen.settle(pspOf(debit.json.uuid), 'success');
    const batch = adyen.takeNotifications();
    process.env.SVC_ADYEN_NOTIFICATION_USERNAME = 'adyen-hook';
    process.env.SVC_ADYEN_NOTIFICATION_PASSWORD = 'correct horse';
    try {
      const basic = (secret: string) => ({
        authorization: `Basic ${Buffer.from(`adyen-hook:${secret}`).toString('base64')}`,
      });
      expect((await deliver(batch)).status).toBe(401);
      expect((await deliver(batch, basic('wrong'))).status).toBe(401);
      expect((await getPayment(debit.json.uuid)).status).toBe('pending');
      const ok = await deliver(batch, basic('correct horse'));
      expect([ok.status, ok.text]).toEqual([200, '[accepted]']);
    } finally {
      delete process.env.SVC_ADYEN_NOTIFICATION_USERNAME;
      delete process.env.SVC_ADYEN_NOTIFICATION_PASSWORD;
    }
    expect((await getPayment(debit.json.uuid)).status).toBe('succeeded');
  });

  it('ends in the same state whatever the order, however often: a debit returned (lost), or won with its funds back', async () => {
    const inOrder = (items: Item[]) => items;
    const reversedTwice = (items: Item[]) => [...items].reverse().flatMap((item) => [item, item]);
    const final = async (reversal: boolean, order: (items: Item[]) => Item[]) => {
      const payment = await sepa();
      const psp = pspOf(payment.json.uuid);
      adyen.settle(psp, 'success');
      adyen.chargeback(psp);
      if (reversal) adyen.reverseChargeback(psp);
      const [authorisation, chargeback, ...rest] = itemsOf(adyen.takeNotifications());
      expect([authorisation?.eventCode, chargeback?.eventCode]).toEqual(['AUTHORISATION', 'CHARGEBACK']);
      // Adyen's notice of the chargeback, which precedes it (the stand-in sends none), signed as Adyen does.
      const notice = adyen.sign({ ...chargeback, eventCode: 'NOTIFICATION_OF_CHARGEBACK' });
      const delivered = await deliver(batchOf(order([notice, authorisation as Item, chargeback as Item, ...rest])));
      expect(delivered.text).toBe('[accepted]');
      return getPayment(payment.json.uuid);
    };
    const amount = { value: '5000', currency: 'EUR' };
    const chargedBack = [await final(false, inOrder), await final(false, reversedTwice)];
    for (const payment of chargedBack) {
      // A SEPA chargeback is the bank's return: final, lost (issue 45, point 3).
      expect(payment).toMatchObject({
        status: 'succeeded',
        dispute: { status: 'lost', funds: 'withdrawn', amount },
      });
    }
    expect(chargedBack[1].dispute).toEqual(chargedBack[0].dispute);
    for (const payment of [await final(true, inOrder), await final(true, reversedTwice)]) {
      expect(payment).toMatchObject({ status: 'succeeded', dispute: { status: 'won', funds: 'reinstated', amount } });
    }
  });

  it('keeps a notification whose payment is not written yet (accepted, no retry needed); the retried request gets Adyen’s first answer', async () => {
    // Adyen charges, and our write of the payment fails: the request answers 500, and Adyen's
    // AUTHORISATION names a payment we do not have yet.
    const [key, token] = [newUuid(), await tokenFor(DEMO.client)];
    const post = () => postPayment(key, token);
    vi.spyOn(table, 'transactWrite').mockRejectedValueOnce(new Error('the store is unavailable'));
    expect((await post()).status).toBe(500);
    const batch = adyen.takeNotifications();
    const [item] = itemsOf(batch);
    // Kept and accepted (issue 45, point 6): Adyen need not send it again.
    const early = await deliver(batch);
    expect(early.text).toBe('[accepted]');
    expect(await getPayment(String(item?.merchantReference))).toMatchObject({ error: expect.anything() });

    // The client retries under its key: the same payment, Adyen's first answer, one charge.
    const retried = await post();
    expect(retried.status, retried.text).toBe(201);
    expect(retried.json).toMatchObject({ uuid: item?.merchantReference, status: 'succeeded' });
    expect(atAdyen(retried.json.uuid)).toHaveLength(1);
    expect((await deliver(batch)).text).toBe('[accepted]');
    expect(await eventsOf(retried.json.uuid)).toEqual(['svc.payments.payment.succeeded']);
  });
});

describe('chargebacks on Adyen', () => {
  it('records a chargeback with its funds withdrawn, and its reversal: won, funds reinstated, each announced once', async () => {
    const paid = await pay(card());
    const psp = pspOf(paid.json.uuid);
    adyen.chargeback(psp);
    await accepted();
    expect((await getPayment(paid.json.uuid)).dispute).toEqual({
      status: 'charged_back',
      reason: 'Other Fraud-Card Absent Environment',
      amount: { value: '2500', currency: 'CHF' },
      funds: 'withdrawn',
    });
    adyen.reverseChargeback(psp);
    // The reversal as in Adyen's own examples: without originalReference.
    const [reversal] = itemsOf(adyen.takeNotifications());
    const { originalReference: _payment, ...bare } = reversal as Item;
    expect((await deliver(batchOf([adyen.sign(bare)]))).text).toBe('[accepted]');
    expect((await getPayment(paid.json.uuid)).dispute).toEqual({
      status: 'won',
      reason: 'Other Fraud-Card Absent Environment',
      amount: { value: '2500', currency: 'CHF' },
      funds: 'reinstated',
    });
    expect(await eventsOf(paid.json.uuid)).toEqual([
      'svc.payments.payment.succeeded',
      'svc.payments.payment.disputed',
      'svc.payments.payment.dispute_funds_withdrawn',
      'svc.payments.payment.dispute_closed',
      'svc.payments.payment.dispute_funds_reinstated',
    ]);
  });
});

describe('a second chargeback', () => {
  it('reopens a dispute the reversal closed: lost, funds withdrawn again', async () => {
    const paid = await pay(card());
    const psp = pspOf(paid.json.uuid);
    adyen.chargeback(psp);
    adyen.reverseChargeback(psp);
    const items = itemsOf(adyen.takeNotifications()) as Item[];
    const [chargeback] = items;
    const second = adyen.sign({
      ...(chargeback as Item),
      eventCode: 'SECOND_CHARGEBACK',
      pspReference: `${psp.slice(0, 15)}Z`,
    });
    expect((await deliver(batchOf(items.map((item) => adyen.sign(item))))).text).toBe('[accepted]');
    expect((await getPayment(paid.json.uuid)).dispute).toMatchObject({ status: 'won', funds: 'reinstated' });
    expect((await deliver(batchOf([second]))).text).toBe('[accepted]');
    expect((await getPayment(paid.json.uuid)).dispute).toMatchObject({ status: 'lost', funds: 'withdrawn' });
  });
});

describe('an answer we do not understand (issue 45, point 9)', () => {
  it.each([
    ['a 200 whose body is no JSON', 'not_json'],
    ['PartiallyAuthorised (never asked for)', 'partially_authorised'],
  ] as const)(
    'takes %s as an unknown outcome, never a decline, and Adyen’s notification settles it',
    async (_name, fault) => {
      adyen.fault(fault, { times: 1 });
      const unknown = await pay(card());
      expect(unknown.status, unknown.text).toBe(201);
      expect(unknown.json).toMatchObject({
        status: 'pending',
        status_reason: 'provider_unavailable',
        provider: 'adyen',
      });
      // Resolved as an answer that never came: by our reference, not by a pspReference we were not sure of.
      expect(unknown.json.provider_reference).toBeUndefined();
      await accepted();
      expect(await getPayment(unknown.json.uuid)).toMatchObject({ status: 'succeeded' });
      expect(atAdyen(unknown.json.uuid)).toHaveLength(1);
    },
  );
});

describe('an instrument Adyen reports after the payment settled', () => {
  it('saves the source from RECURRING_CONTRACT when the authorisation that settled the payment lacked it', async () => {
    adyen.fault('lose_answer', { times: 1 });
    const lost = await pay({ ...card(), create_payment_source: true });
    expect(lost.json).toMatchObject({ status: 'pending', status_reason: 'provider_unavailable' });
    const items = itemsOf(adyen.takeNotifications()) as Item[];
    const authorised = items.find((item) => item.eventCode === 'AUTHORISATION') as Item;
    const contract = items.find((item) => item.eventCode === 'RECURRING_CONTRACT') as Item;
    expect(contract).toBeDefined();
    // Adyen's additional data without tokenization (a setting of the merchant's Customer Area).
    const bare = { ...authorised, additionalData: {} };
    expect((await deliver(batchOf([adyen.sign(bare)]))).text).toBe('[accepted]');
    const paid = await getPayment(lost.json.uuid);
    expect(paid.status).toBe('succeeded');
    expect(paid.created_payment_source_uuid).toBeUndefined();
    expect((await deliver(batchOf([contract]))).text).toBe('[accepted]');
    const saved = await getPayment(lost.json.uuid);
    expect(saved.created_payment_source_uuid).toEqual(expect.any(String));
    const source = await api('GET', `/payment-sources/${saved.created_payment_source_uuid}`);
    expect(source.json).toMatchObject({ status: 'active', provider: 'adyen' });
    // Once: the same contract again changes nothing.
    expect(
      (
        await deliver(
          batchOf([adyen.sign({ ...contract, pspReference: `${String(contract.pspReference).slice(0, 15)}Y` })]),
        )
      ).text,
    ).toBe('[accepted]');
    expect((await getPayment(lost.json.uuid)).created_payment_source_uuid).toBe(saved.created_payment_source_uuid);
  });
});

describe('a request Adyen is still processing', () => {
  it('is an unknown outcome, never a refusal: the retried request waits, and Adyen’s notification settles it once', async () => {
    // Adyen is slow on the first run, which then dies before its write (500).
    const [key, token] = [newUuid(), await tokenFor(DEMO.client)];
    const post = () => postPayment(key, token);
    adyen.fault('timeout', { times: 1, completesAtReset: true });
    vi.spyOn(table, 'transactWrite').mockRejectedValueOnce(new Error('the store is unavailable'));
    expect((await post()).status).toBe(500);
    // The client's retry reaches Adyen under the same key while the first is in progress (704).
    const retried = await post();
    expect(retried.status, retried.text).toBe(201);
    expect(retried.json).toMatchObject({ status: 'pending', status_reason: 'provider_unavailable' });
    expect(adyen.requests.at(-1)).toMatchObject({ status: 422, idempotencyKey: `${retried.json.uuid}:payment` });
    adyen.fault(null);
    await accepted();
    expect((await getPayment(retried.json.uuid)).status).toBe('succeeded');
    expect(atAdyen(retried.json.uuid)).toHaveLength(1);
  });
});

describe('profiles and keys', () => {
  it('answers 400 on profile without an Adyen API key, naming SVC_ADYEN_API_KEY', async () => {
    const key = process.env.SVC_ADYEN_API_KEY;
    delete process.env.SVC_ADYEN_API_KEY;
    try {
      const response = await pay(card());
      expect(response.status).toBe(400);
      expect(response.json.error.message[0]).toMatchObject({
        property: 'profile',
        message: expect.stringContaining('SVC_ADYEN_API_KEY'),
      });
    } finally {
      process.env.SVC_ADYEN_API_KEY = key;
    }
  });

  it('fails a payment on a merchant account Adyen refuses the key (403): provider_unavailable, nothing charged', async () => {
    const response = await pay({ profile: 'card-adyen-foreign', payment_information: ENCRYPTED });
    expect(response.status, response.text).toBe(201);
    expect(response.json).toMatchObject({ status: 'failed', status_reason: 'provider_unavailable', provider: 'adyen' });
    expect(adyen.requests.at(-1)).toMatchObject({ status: 403, body: { merchantAccount: 'SomeoneElses' } });
    expect(atAdyen(response.json.uuid)).toEqual([]);
  });
});
