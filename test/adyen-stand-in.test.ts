// The library is a dependency of services/payments only: test code reaches it through that package.
import * as adyen from '@adyen/api-library';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AdyenCallError, adyenHttpClient } from '../services/payments/src/providers/adyen/adyen-http';
import {
  ADYEN_DECLINE,
  ADYEN_HOLDER_NAMES,
  ADYEN_TEST_CARDS,
  type AdyenStandIn,
  startAdyenStandIn,
} from './support/adyen-stand-in';

/**
 * The Adyen stand-in (test/support/adyen-stand-in.ts) against the real @adyen/api-library 32.1.0
 * and the service's own HTTP client for it: each rule it keeps, with where Adyen documents it.
 * "spec" is Adyen's Checkout v72 OpenAPI document (github.com/Adyen/adyen-openapi,
 * json/CheckoutService-v72.json); "webhooks spec" is json/Webhooks-v1.json in the same repository.
 * Where Adyen's behaviour is not documented the test says so and holds the stand-in to its
 * (stricter) choice.
 */
type PaymentRequest = adyen.Types.checkout.PaymentRequest;
type PaymentResponse = adyen.Types.checkout.PaymentResponse;
type Item = Record<string, unknown> & {
  additionalData?: Record<string, string>;
  amount: { currency: string; value: number };
};

const START = 1_900_000_000;
const DAY = 24 * 60 * 60;
const MERCHANT = 'CharityECOM';
const RETURN_URL = 'https://charity.example.org/donate/return';
const GERMAN_IBAN = 'DE89370400440532013000';

let now: number;
let standIn: AdyenStandIn;
let checkout: InstanceType<typeof adyen.CheckoutAPI>;
let counter = 0;

function clientFor(apiKey: string, timeoutMs = 2000) {
  const client = new adyen.Client({ apiKey, environment: adyen.EnvironmentEnum.TEST });
  client.httpClient = adyenHttpClient({ base: standIn.url, timeoutMs });
  return new adyen.CheckoutAPI(client);
}

beforeEach(async () => {
  now = START;
  standIn = await startAdyenStandIn({ clock: () => now });
  checkout = clientFor(standIn.apiKey);
});

afterEach(() => standIn.close());

const card = (fields: Record<string, unknown> = {}) => ({
  type: 'scheme',
  number: ADYEN_TEST_CARDS.visa,
  expiryMonth: ADYEN_TEST_CARDS.expiryMonth,
  expiryYear: ADYEN_TEST_CARDS.expiryYear,
  cvc: ADYEN_TEST_CARDS.cvc,
  holderName: 'Ada Donor',
  ...fields,
});

/** What 3-D Secure 2 needs of a card payment made in a browser, as the adapter sends it. */
const BROWSER = {
  browserInfo: {
    acceptHeader: 'text/html',
    colorDepth: 24,
    javaEnabled: false,
    language: 'de-CH',
    screenHeight: 900,
    screenWidth: 1440,
    timeZoneOffset: -60,
    userAgent: 'Mozilla/5.0',
  },
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
};

/** A /payments request as the adapter sends it; `fields` replace or add top-level fields. */
function request(fields: Record<string, unknown> = {}): PaymentRequest {
  counter += 1;
  return {
    merchantAccount: MERCHANT,
    reference: `donation-${counter}`,
    amount: { currency: 'CHF', value: 2500 },
    paymentMethod: card(),
    returnUrl: RETURN_URL,
    channel: 'Web',
    // Captured at once, as our adapter asks (without it the stand-in leaves a card uncaptured).
    captureDelayHours: 0,
    ...BROWSER,
    ...fields,
  } as unknown as PaymentRequest;
}

const pay = (fields: Record<string, unknown> = {}, idempotencyKey?: string) =>
  checkout.PaymentsApi.payments(request(fields), idempotencyKey ? { idempotencyKey } : undefined);

const details = (redirectResult: string) => checkout.PaymentsApi.paymentsDetails({ details: { redirectResult } });

async function failure(promise: Promise<unknown>): Promise<AdyenCallError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AdyenCallError) return error;
    throw error;
  }
  throw new Error('Adyen answered, where an error was expected');
}

/** A raw request to the stand-in, for what the library cannot send. */
async function raw(path: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${standIn.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': standIn.apiKey, ...headers },
    body,
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

const items = () => standIn.takeNotifications().notificationItems.map((entry) => entry.NotificationRequestItem as Item);
const only = (list: Item[], eventCode: string) => list.filter((item) => item.eventCode === eventCode);
const pspOf = (reference: string) => {
  const [payment] = standIn.byReference(reference);
  if (!payment) throw new Error(`no payment ${reference}`);
  return payment.pspReference;
};

describe('authentication and merchant accounts', () => {
  it('answers 401 in Adyen shape to a wrong X-API-Key', async () => {
    // Spec info (X-API-Key on every request) and components.examples.generic-401.
    const error = await failure(clientFor('wrong-key').PaymentsApi.payments(request()));
    expect(error).toMatchObject({ kind: 'refused', status: 401, errorCode: '000', errorType: 'security' });
    expect(standIn.payments.size).toBe(0);
  });

  it('answers 403/901 for a merchant account the key may not use, 422/901 when it is missing', async () => {
    // Spec example generic-403; missing: https://github.com/Adyen/adyen-python-api-library/issues/238
    const forbidden = await failure(pay({ merchantAccount: 'SomeoneElse' }));
    expect(forbidden).toMatchObject({
      kind: 'refused',
      status: 403,
      errorCode: '901',
      message: 'Invalid Merchant Account',
    });
    const absent = await failure(pay({ merchantAccount: undefined }));
    expect(absent).toMatchObject({ kind: 'invalid', status: 422, errorCode: '901' });
    expect(await failure(pay({ merchantAccount: 'CharityTwo', amount: { currency: 'CHF', value: -1 } }))).toMatchObject(
      {
        errorCode: '137',
      },
    );
  });
});

describe('validation (https://docs.adyen.com/development-resources/error-codes)', () => {
  it('names each missing required field of /payments with its code', async () => {
    // Spec PaymentRequest.required: amount, merchantAccount, paymentMethod, reference, returnUrl.
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ returnUrl: undefined }, '14_030', /Return URL is missing/],
      [{ reference: undefined }, '130', /Reference Missing/],
      [{ amount: undefined }, '100', /'amount' is not provided/],
      [{ paymentMethod: undefined }, '14_006', /paymentMethod/],
      [{ amount: { currency: 'CHF', value: 10.5 } }, '137', /'amount' is not valid/],
      [{ amount: { currency: 'XXX', value: 100 } }, '138', /Unsupported currency/],
      [{ shopperReference: 'ab' }, '180', /shopperReference/],
      [{ metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, '177', /Metadata/],
      [{ metadata: { campaign: 'x'.repeat(81) } }, '177', /Metadata/],
      // 3-D Secure 2 on a card payment made in a browser (issue 45, point 11).
      [{ browserInfo: undefined }, '158', /browserInfo/],
      [{ browserInfo: { ...BROWSER.browserInfo, userAgent: undefined } }, '158', /browserInfo.userAgent/],
      [{ origin: undefined }, '158', /origin/],
      [{ shopperIP: undefined }, '158', /shopperIP/],
      [{ shopperEmail: undefined }, '158', /shopperEmail/],
      [{ billingAddress: { ...BROWSER.billingAddress, postalCode: undefined } }, '158', /billingAddress.postalCode/],
    ];
    for (const [fields, errorCode, message] of cases) {
      const error = await failure(pay(fields));
      expect(error, errorCode).toMatchObject({ kind: 'invalid', status: 422, errorCode });
      expect(error.message).toMatch(message);
    }
    expect(standIn.payments.size).toBe(0);
  });

  it('takes CLP and ISK in hundredths of whole units, IDR and CVE in whole units (https://docs.adyen.com/development-resources/currency-codes/)', async () => {
    // Adyen's decimals differ from ISO 4217 for these four; a fraction of a króna or peso is no
    // real amount (UNKNOWN whether Adyen refuses it: the stand-in does).
    for (const amount of [
      { currency: 'ISK', value: 1234 },
      { currency: 'CLP', value: 150 },
    ]) {
      expect(await failure(pay({ amount })), amount.currency).toMatchObject({ status: 422, errorCode: '137' });
    }
    expect(standIn.payments.size).toBe(0);
    for (const amount of [
      { currency: 'ISK', value: 123400 },
      { currency: 'CLP', value: 150000 },
      { currency: 'IDR', value: 12345 },
      { currency: 'CVE', value: 25 },
    ]) {
      await pay({ amount, reference: `amount-${amount.currency}` });
      expect(standIn.byReference(`amount-${amount.currency}`)[0]?.amount).toEqual(amount);
    }
  });

  it('rejects fields the library cannot send (the library itself drops them), and unparseable JSON', async () => {
    // The library serialises only its type's attributes (objectSerializer.serialize); real Adyen may
    // ignore unknown fields (not documented) — the stand-in refuses them on purpose.
    await pay({ donorNote: 'thanks' });
    expect(standIn.requests.at(-1)?.body).not.toHaveProperty('donorNote');
    const body = JSON.stringify({ ...request(), donorNote: 'thanks' });
    expect(await raw('/payments', body)).toMatchObject({ status: 422, body: { errorCode: '702' } });
    // Spec example generic-400.
    expect(await raw('/payments', '{"amount":')).toMatchObject({
      status: 400,
      body: { status: 400, errorCode: '702' },
    });
  });
});

describe('idempotency (https://docs.adyen.com/development-resources/api-idempotency)', () => {
  it('replays the first answer under a key and echoes the key', async () => {
    // "If the Adyen payments platform already processed the request, the response to the first
    // attempt will be returned without duplication"; "check the idempotency-key HTTP header".
    const body = request();
    const first = await checkout.PaymentsApi.payments(body, { idempotencyKey: 'pay-1' });
    const again = await checkout.PaymentsApi.payments(body, { idempotencyKey: 'pay-1' });
    expect(again).toEqual(first);
    expect(standIn.payments.size).toBe(1);
    const echoed = await raw('/payments', JSON.stringify(request()), { 'idempotency-key': 'pay-2' });
    expect(echoed.headers.get('idempotency-key')).toBe('pay-2');
  });

  it('takes keys of at most 64 characters', async () => {
    // "a unique identifier for the message with a maximum of 64 characters" (the error code is not documented).
    const long = await raw('/payments', JSON.stringify(request()), { 'idempotency-key': 'k'.repeat(65) });
    expect(long.status).toBe(422);
    expect(standIn.payments.size).toBe(0);
  });

  it('refuses the key for another request (not documented: 704, nothing done)', async () => {
    await pay({}, 'pay-3');
    const error = await failure(pay({ amount: { currency: 'CHF', value: 900 } }, 'pay-3'));
    expect(error).toMatchObject({ status: 422, errorCode: '704' });
    expect(standIn.payments.size).toBe(1);
  });

  it('keeps a key 7 days by the clock, then forgets it', async () => {
    // "Idempotency keys are valid for a minimum period of 7 days after first submission" (a later
    // version of the page says 31 days: the stand-in keeps the minimum).
    const body = request();
    const first = await checkout.PaymentsApi.payments(body, { idempotencyKey: 'pay-4' });
    now += 7 * DAY;
    expect((await checkout.PaymentsApi.payments(body, { idempotencyKey: 'pay-4' })).pspReference).toBe(
      first.pspReference,
    );
    now += 1;
    const later = await checkout.PaymentsApi.payments(body, { idempotencyKey: 'pay-4' });
    expect(later.pspReference).not.toBe(first.pspReference);
    expect(standIn.payments.size).toBe(2);
  });

  it('answers 704 with transient-error while the first request is in progress', async () => {
    // "If you submit a duplicate request before the first request has completed, the API returns an
    // HTTP 422 … or HTTP 409 … with the error code 704"; header transient-error: true.
    standIn.fault('timeout', { times: 1, completesAtReset: true });
    const slow = clientFor(standIn.apiKey, 300);
    const body = request();
    expect(await failure(slow.PaymentsApi.payments(body, { idempotencyKey: 'pay-5' }))).toMatchObject({
      kind: 'unknown',
    });
    const retry = await raw('/payments', JSON.stringify(body), { 'idempotency-key': 'pay-5' });
    expect(retry).toMatchObject({ status: 422, body: { errorCode: '704' } });
    expect(retry.headers.get('transient-error')).toBe('true');
    standIn.fault(null);
    const settled = await checkout.PaymentsApi.payments(body, { idempotencyKey: 'pay-5' });
    expect(settled.resultCode).toBe('Authorised');
    expect(standIn.payments.size).toBe(1);
  });
});

describe('cards (https://docs.adyen.com/development-resources/test-cards/test-card-numbers)', () => {
  it('authorises a test card from raw fields, and from TEST`s test_-prefixed "encrypted" fields', async () => {
    // Spec examples post-payments-card-direct and post-payments-card-securedfields(-200).
    const direct = await pay();
    expect(direct).toMatchObject({ resultCode: 'Authorised', merchantReference: expect.any(String) });
    expect(direct.pspReference).toMatch(/^[A-Z0-9]{16}$/);
    const encrypted = await pay({
      paymentMethod: {
        type: 'scheme',
        encryptedCardNumber: `test_${ADYEN_TEST_CARDS.mastercard}`,
        encryptedExpiryMonth: 'test_03',
        encryptedExpiryYear: 'test_2030',
        encryptedSecurityCode: 'test_737',
      },
    });
    expect(encrypted.resultCode).toBe('Authorised');
    const encryptedFields = {
      type: 'scheme',
      encryptedCardNumber: 'adyenjs_0_1_25$abc',
      encryptedExpiryMonth: 'test_03',
      encryptedExpiryYear: 'test_2030',
      encryptedSecurityCode: 'test_737',
    };
    const notTest = await failure(pay({ paymentMethod: encryptedFields }));
    expect(notTest).toMatchObject({ status: 422, errorCode: '174' });
    expect(standIn.payments.get(direct.pspReference as string)).toMatchObject({
      status: 'authorised',
      method: 'scheme',
    });
  });

  it('rejects a malformed card and declines a wrong CVC or expiry', async () => {
    // 101 Invalid card number, 129 Expiry Date Invalid; "If you specify an incorrect CVC or an
    // invalid expiry date, the payment fails and returns a generic DECLINED refusal reason":
    // https://docs.adyen.com/development-resources/testing/result-code-testing/testing-with-card-holder-name/
    expect(await failure(pay({ paymentMethod: card({ number: '4111111145551143' }) }))).toMatchObject({
      errorCode: '101',
    });
    expect(await failure(pay({ paymentMethod: card({ expiryMonth: '13' }) }))).toMatchObject({ errorCode: '129' });
    expect(await pay({ paymentMethod: card({ cvc: '123' }) })).toMatchObject({
      resultCode: 'Refused',
      refusalReason: 'Refused',
    });
  });

  it('refuses by holderName and by RequestedTestAcquirerResponseCode, with an AUTHORISATION webhook either way', async () => {
    // https://docs.adyen.com/development-resources/testing/result-codes/ (holderName DECLINED → Refused/2).
    const declined = await pay({ paymentMethod: card({ holderName: ADYEN_DECLINE.holderName }) });
    expect(declined).toMatchObject({ resultCode: 'Refused', refusalReason: 'Refused', refusalReasonCode: '2' });
    const poor = await pay({ paymentMethod: card({ holderName: ADYEN_HOLDER_NAMES.notEnoughBalance }) });
    expect(poor).toMatchObject({ resultCode: 'Refused', refusalReason: 'Not enough balance', refusalReasonCode: '12' });
    const byCode = await pay({ additionalData: ADYEN_DECLINE.additionalData });
    expect(byCode.resultCode).toBe('Refused');
    const authorised = await pay();
    const notes = only(items(), 'AUTHORISATION');
    expect(notes.map((item) => [item.pspReference, item.success])).toEqual([
      [declined.pspReference, 'false'],
      [poor.pspReference, 'false'],
      [byCode.pspReference, 'false'],
      [authorised.pspReference, 'true'],
    ]);
    expect(notes[0]?.reason).toBe('Refused');
    expect(notes[3]).toMatchObject({ paymentMethod: 'visa', operations: ['CANCEL', 'CAPTURE', 'REFUND'] });
  });
});

describe('3-D Secure 2 by redirect', () => {
  it('redirects a 3DS2 card, and authorises it through /payments/details after the challenge', async () => {
    // Spec examples post-payments-card-3d-secure-redirect-200 (action redirect, GET) and
    // post-payments-details-00.redirect(-200).
    const answer: PaymentResponse = await pay({ paymentMethod: card({ number: ADYEN_TEST_CARDS.threeDS2 }) });
    expect(answer).toMatchObject({
      resultCode: 'RedirectShopper',
      action: { type: 'redirect', method: 'GET', paymentMethodType: 'scheme' },
    });
    const psp = answer.pspReference as string;
    expect((answer.action as { url: string }).url).toBe(`${standIn.url}/redirect/${psp}`);
    expect(items()).toEqual([]);
    const redirectResult = standIn.approve(psp, true);
    expect(await details(redirectResult)).toMatchObject({ resultCode: 'Authorised', pspReference: psp });
    expect(only(items(), 'AUTHORISATION')).toMatchObject([{ pspReference: psp, success: 'true' }]);
    // A redirectResult is good once (Adyen's answer to a second use is not documented).
    expect(await failure(details(redirectResult))).toMatchObject({ status: 422 });
  });

  it('refuses a failed challenge, and expires an abandoned one after 12 hours', async () => {
    const failed = await pay({ paymentMethod: card({ number: ADYEN_TEST_CARDS.threeDS2Mastercard }) });
    expect(await details(standIn.approve(failed.pspReference as string, false))).toMatchObject({
      resultCode: 'Refused',
      refusalReason: '3D Not Authenticated',
    });
    const abandoned = await pay({ paymentMethod: card({ number: ADYEN_TEST_CARDS.threeDS2 }) });
    const redirectResult = standIn.approve(abandoned.pspReference as string, true);
    now += 12 * 60 * 60 + 1;
    // Error 15_017: no authorisation "more than 12 hours after the transaction began".
    expect(await failure(details(redirectResult))).toMatchObject({ errorCode: '15_017' });
    expect(only(items(), 'OFFER_CLOSED')).toMatchObject([{ pspReference: abandoned.pspReference }]);
    expect(standIn.payments.get(abandoned.pspReference as string)?.status).toBe('expired');
  });
});

describe('TWINT (https://docs.adyen.com/payment-methods/twint/api-only)', () => {
  it('redirects a CHF payment without a pspReference; the app decides and the webhook comes first', async () => {
    // A redirect method's answer carries no pspReference (spec example post-payments-ideal-200).
    const answer = await pay({ paymentMethod: { type: 'twint' } });
    expect(answer).toMatchObject({
      resultCode: 'RedirectShopper',
      action: { paymentMethodType: 'twint', method: 'GET' },
    });
    expect(answer.pspReference).toBeUndefined();
    const psp = pspOf(`donation-${counter}`);
    const redirectResult = standIn.approve(psp, true);
    expect(only(items(), 'AUTHORISATION')).toMatchObject([
      { pspReference: psp, success: 'true', paymentMethod: 'twint' },
    ]);
    expect(await details(redirectResult)).toMatchObject({ resultCode: 'Authorised', pspReference: psp });
  });

  it('refuses when the donor declines in the app', async () => {
    await pay({ paymentMethod: { type: 'twint' } });
    const psp = pspOf(`donation-${counter}`);
    const redirectResult = standIn.approve(psp, false);
    expect(only(items(), 'AUTHORISATION')).toMatchObject([{ pspReference: psp, success: 'false' }]);
    expect(await details(redirectResult)).toMatchObject({ resultCode: 'Refused', pspReference: psp });
    expect(await failure(details('not-a-redirect-result'))).toMatchObject({ status: 422, errorCode: '14_018' });
  });

  it('takes CHF only', async () => {
    expect(
      await failure(pay({ paymentMethod: { type: 'twint' }, amount: { currency: 'EUR', value: 100 } })),
    ).toMatchObject({
      errorCode: '138',
    });
  });
});

describe('SEPA Direct Debit (https://docs.adyen.com/payment-methods/sepa-direct-debit/api-only)', () => {
  const sepa = (fields: Record<string, unknown> = {}) => ({
    type: 'sepadirectdebit',
    iban: GERMAN_IBAN,
    ownerName: 'A. Schneider',
    ...fields,
  });

  it('answers Received; the debit settles later with an AUTHORISATION webhook', async () => {
    const received = await pay({ paymentMethod: sepa(), amount: { currency: 'EUR', value: 1000 } });
    expect(received).toMatchObject({ resultCode: 'Received', pspReference: expect.any(String) });
    expect(items()).toEqual([]);
    standIn.settle(received.pspReference as string, 'success');
    const failing = await pay({ paymentMethod: sepa(), amount: { currency: 'EUR', value: 1000 } });
    standIn.settle(failing.pspReference as string, 'failure');
    expect(only(items(), 'AUTHORISATION').map((item) => item.success)).toEqual(['true', 'false']);
    expect(standIn.payments.get(received.pspReference as string)?.status).toBe('authorised');
  });

  it('stores the account when the debit settles (RECURRING_CONTRACT then)', async () => {
    const received = await pay({
      paymentMethod: sepa(),
      amount: { currency: 'EUR', value: 1000 },
      storePaymentMethod: true,
      shopperReference: 'supporter-7',
      recurringProcessingModel: 'Subscription',
    });
    expect(received.additionalData).toBeUndefined();
    standIn.settle(received.pspReference as string, 'success');
    const [contract] = only(items(), 'RECURRING_CONTRACT');
    expect(contract).toMatchObject({ originalReference: received.pspReference, paymentMethod: 'sepadirectdebit' });
    expect(standIn.payments.get(received.pspReference as string)?.storedPaymentMethodId).toBe(contract?.pspReference);
  });

  it('needs EUR, a valid IBAN and the owner`s name under their v72 names', async () => {
    // Spec SepaDirectDebitDetails.required: iban, ownerName. The pre-v72 names `sepa.ibanNumber`
    // and `sepa.ownerName` are not in the library's type: it drops them, and the IBAN is missing.
    const eur = { amount: { currency: 'EUR', value: 1000 } };
    expect(await failure(pay({ paymentMethod: sepa() }))).toMatchObject({ errorCode: '138' });
    expect(await failure(pay({ ...eur, paymentMethod: sepa({ iban: 'DE89370400440532013001' }) }))).toMatchObject({
      errorCode: '161',
    });
    expect(await failure(pay({ ...eur, paymentMethod: sepa({ ownerName: undefined }) }))).toMatchObject({
      errorCode: '158',
    });
    const old = { type: 'sepadirectdebit', 'sepa.ownerName': 'A. Schneider', 'sepa.ibanNumber': GERMAN_IBAN };
    const dropped = await failure(pay({ ...eur, paymentMethod: old }));
    expect(dropped.message).toMatch(/paymentMethod\.iban/);
  });
});

describe('tokens for recurring payments (https://docs.adyen.com/online-payments/tokenization)', () => {
  const first = {
    storePaymentMethod: true,
    shopperReference: 'supporter-42',
    shopperInteraction: 'Ecommerce',
    recurringProcessingModel: 'Subscription',
  };

  it('stores the card on authorisation: tokenization.storedPaymentMethodId and a RECURRING_CONTRACT webhook', async () => {
    // Spec example post-payments-subscription-first-transaction(-200); webhooks spec
    // RecurringContractNotificationRequestItem (pspReference is the token).
    const answer = await pay(first);
    const token = answer.additionalData?.['tokenization.storedPaymentMethodId'] as string;
    expect(token).toMatch(/^[A-Z0-9]{16}$/);
    expect(answer.additionalData).toMatchObject({ 'tokenization.shopperReference': 'supporter-42' });
    const [contract] = only(items(), 'RECURRING_CONTRACT');
    expect(contract).toMatchObject({ pspReference: token, originalReference: answer.pspReference, success: 'true' });
    expect(contract?.additionalData?.['recurring.recurringDetailReference']).toBe(token);

    // Spec example post-payments-subscription-payment: ContAuth with the token never redirects.
    const renewal = await pay({
      paymentMethod: { type: 'scheme', storedPaymentMethodId: token },
      shopperReference: 'supporter-42',
      shopperInteraction: 'ContAuth',
      recurringProcessingModel: 'Subscription',
    });
    expect(renewal.resultCode).toBe('Authorised');
    const refused = await pay({
      paymentMethod: { type: 'scheme', storedPaymentMethodId: token },
      shopperReference: 'supporter-42',
      shopperInteraction: 'ContAuth',
      recurringProcessingModel: 'Subscription',
      additionalData: ADYEN_DECLINE.additionalData,
    });
    expect(refused.resultCode).toBe('Refused');
  });

  it('stores a 3DS2 card after the challenge; its renewals (ContAuth) do not redirect', async () => {
    const answer = await pay({ ...first, paymentMethod: card({ number: ADYEN_TEST_CARDS.threeDS2 }) });
    const done = await details(standIn.approve(answer.pspReference as string, true));
    const token = done.additionalData?.['tokenization.storedPaymentMethodId'] as string;
    expect(token).toBeDefined();
    const renewal = await pay({
      paymentMethod: { type: 'scheme', storedPaymentMethodId: token },
      shopperReference: 'supporter-42',
      shopperInteraction: 'ContAuth',
      recurringProcessingModel: 'Subscription',
    });
    expect(renewal.resultCode).toBe('Authorised');
  });

  it('requires the shopper, the model, a token of that shopper, and a token for ContAuth', async () => {
    // "Recurring payments require a shopperReference" (error codes, 000); recurringProcessingModel
    // "Required when creating a token … or using stored payment details" (spec).
    expect(await failure(pay({ ...first, shopperReference: undefined }))).toMatchObject({ errorCode: '000' });
    const noModel = await failure(pay({ ...first, recurringProcessingModel: undefined }));
    expect(noModel).toMatchObject({ errorCode: '158' });
    expect(noModel.message).toMatch(/recurringProcessingModel/);
    const token = (await pay(first)).additionalData?.['tokenization.storedPaymentMethodId'];
    const renewal = {
      paymentMethod: { type: 'scheme', storedPaymentMethodId: token },
      shopperInteraction: 'ContAuth',
      recurringProcessingModel: 'Subscription',
    };
    expect(await failure(pay({ ...renewal, shopperReference: 'supporter-43' }))).toMatchObject({ errorCode: '800' });
    expect(
      await failure(pay({ ...renewal, shopperReference: 'supporter-42', merchantAccount: 'CharityTwo' })),
    ).toMatchObject({
      errorCode: '800',
    });
    expect(
      await failure(
        pay({
          shopperInteraction: 'ContAuth',
          recurringProcessingModel: 'Subscription',
          shopperReference: 'supporter-42',
        }),
      ),
    ).toMatchObject({
      errorCode: '807',
    });
  });
});

describe('refunds (https://docs.adyen.com/online-payments/refund)', () => {
  it('answers 201 received and decides by REFUND webhooks, never above what was paid', async () => {
    // Spec example post-payments-paymentPspReference-refunds-refund-201; refundFalse.json in the
    // library's tests ("Insufficient balance on payment").
    const payment = await pay({}, 'pay-r');
    items();
    const psp = payment.pspReference as string;
    const refund = (value: number, reference: string) =>
      checkout.ModificationsApi.refundCapturedPayment(psp, {
        merchantAccount: MERCHANT,
        amount: { currency: 'CHF', value },
        reference,
      });
    const answer = await refund(1500, 'refund-1');
    expect(answer).toEqual({
      merchantAccount: MERCHANT,
      paymentPspReference: psp,
      pspReference: expect.stringMatching(/^[A-Z0-9]{16}$/),
      reference: 'refund-1',
      status: 'received',
      amount: { currency: 'CHF', value: 1500 },
    });
    await refund(1500, 'refund-2');
    await refund(1000, 'refund-3');
    const notes = only(items(), 'REFUND');
    expect(notes.map((item) => [item.success, item.originalReference, item.pspReference])).toEqual([
      ['true', psp, answer.pspReference],
      ['false', psp, expect.any(String)],
      ['true', psp, expect.any(String)],
    ]);
    expect(notes[1]?.reason).toBe('Insufficient balance on payment');
    expect(standIn.payments.get(psp)).toMatchObject({ refunded: 2500 });
    expect(standIn.payments.get(psp)?.refunds.map((entry) => entry.status)).toEqual([
      'succeeded',
      'failed',
      'succeeded',
    ]);
  });

  it('fails a refund later for the "refund failed" holder, and rejects an unknown payment', async () => {
    // holderName "refund failed": https://docs.adyen.com/development-resources/testing/result-code-testing/testing-with-card-holder-name/
    const payment = await pay({ paymentMethod: card({ holderName: ADYEN_HOLDER_NAMES.refundFails }) });
    items();
    await checkout.ModificationsApi.refundCapturedPayment(payment.pspReference as string, {
      merchantAccount: MERCHANT,
      amount: { currency: 'CHF', value: 2500 },
    });
    expect(items().map((item) => [item.eventCode, item.success])).toEqual([
      ['REFUND', 'true'],
      ['REFUND_FAILED', 'true'],
    ]);
    const unknown = checkout.ModificationsApi.refundCapturedPayment('ABCDEFGHJKLMNPQR', {
      merchantAccount: MERCHANT,
      amount: { currency: 'CHF', value: 100 },
    });
    expect(await failure(unknown)).toMatchObject({ status: 422, errorCode: '167' });
  });
});

describe('reversals (https://docs.adyen.com/online-payments/reversal)', () => {
  it('cancels an uncaptured payment and refunds a captured one, always in full, by a CANCEL_OR_REFUND webhook', async () => {
    // "If the payment has not been captured, it cancels the payment. If the payment has been
    // captured, it refunds the payment"; Webhooks v1 example post-CANCEL_OR_REFUND-cancel_or_refund.
    const held = await pay({}, 'rev-held');
    const captured = await pay({}, 'rev-captured');
    const part = await pay({}, 'rev-part');
    items();
    standIn.holdCapture(held.pspReference as string);
    // Before the capture, a refund is refused as Adyen's REFUND example words it.
    await checkout.ModificationsApi.refundCapturedPayment(held.pspReference as string, {
      merchantAccount: MERCHANT,
      amount: { currency: 'CHF', value: 100 },
    });
    expect(only(items(), 'REFUND')).toMatchObject([
      { success: 'false', reason: "Transaction hasn't been captured, refund not possible" },
    ]);
    await checkout.ModificationsApi.refundCapturedPayment(part.pspReference as string, {
      merchantAccount: MERCHANT,
      amount: { currency: 'CHF', value: 100 },
    });
    for (const psp of [held.pspReference, captured.pspReference, part.pspReference] as string[]) {
      const answer = await checkout.ModificationsApi.refundOrCancelPayment(psp, {
        merchantAccount: MERCHANT,
        reference: `reverse-${psp}`,
      });
      expect(answer).toMatchObject({ paymentPspReference: psp, status: 'received', reference: `reverse-${psp}` });
    }
    const notes = only(items(), 'CANCEL_OR_REFUND');
    const action = (item: (typeof notes)[number]) =>
      (item.additionalData as Record<string, string>)['modification.action'];
    expect(notes.map((item) => [item.originalReference, item.success, action(item)])).toEqual([
      [held.pspReference, 'true', 'cancel'],
      [captured.pspReference, 'true', 'refund'],
      [part.pspReference, 'false', undefined],
    ]);
    expect(notes.map((item) => item.amount)).toEqual([2500, 2500, 2500].map((value) => ({ currency: 'CHF', value })));
    expect(standIn.payments.get(held.pspReference as string)).toMatchObject({ status: 'cancelled', refunded: 0 });
    expect(standIn.payments.get(captured.pspReference as string)).toMatchObject({
      status: 'authorised',
      refunded: 2500,
    });
  });
});

describe('cancels (https://docs.adyen.com/online-payments/cancel)', () => {
  it('cannot cancel a captured card payment; cancels one still at its redirect', async () => {
    // Cards are captured right after authorisation by default (https://docs.adyen.com/online-payments/capture).
    const authorised = await pay();
    const waiting = await pay({ paymentMethod: card({ number: ADYEN_TEST_CARDS.threeDS2 }) });
    items();
    for (const psp of [authorised.pspReference, waiting.pspReference] as string[]) {
      const answer = await checkout.ModificationsApi.cancelAuthorisedPaymentByPspReference(psp, {
        merchantAccount: MERCHANT,
        reference: `cancel-${psp}`,
      });
      expect(answer).toMatchObject({ paymentPspReference: psp, status: 'received', reference: `cancel-${psp}` });
    }
    expect(only(items(), 'CANCELLATION').map((item) => [item.originalReference, item.success])).toEqual([
      [authorised.pspReference, 'false'],
      [waiting.pspReference, 'true'],
    ]);
    expect(standIn.payments.get(waiting.pspReference as string)?.status).toBe('cancelled');
  });

  it('cancels by our own reference through /cancels, answered by a TECHNICAL_CANCEL webhook', async () => {
    // Spec /cancels: "You get the outcome … in a TECHNICAL_CANCEL webhook"; example post-cancels-cancel-with-own-reference-201.
    await pay({ paymentMethod: { type: 'twint' } });
    const reference = `donation-${counter}`;
    const answer = await checkout.ModificationsApi.cancelAuthorisedPayment({
      merchantAccount: MERCHANT,
      paymentReference: reference,
    });
    expect(answer).toMatchObject({ merchantAccount: MERCHANT, paymentReference: reference, status: 'received' });
    expect(only(items(), 'TECHNICAL_CANCEL')).toMatchObject([{ originalReference: pspOf(reference), success: 'true' }]);
  });
});

describe('webhooks (https://docs.adyen.com/development-resources/webhooks)', () => {
  it('signs every item so the library`s HmacValidator accepts it, and a changed amount fails', async () => {
    // https://docs.adyen.com/development-resources/webhooks/verify-hmac-signatures/
    const payment = await pay();
    now += 60;
    standIn.chargeback(payment.pspReference as string);
    standIn.reverseChargeback(payment.pspReference as string);
    const batch = standIn.takeNotifications();
    expect(batch.live).toBe('false');
    const validator = new adyen.hmacValidator();
    const list = batch.notificationItems.map((entry) => entry.NotificationRequestItem as unknown as Item);
    expect(list.map((item) => item.eventCode)).toEqual(['AUTHORISATION', 'CHARGEBACK', 'CHARGEBACK_REVERSED']);
    for (const item of list) {
      expect(validator.validateHMAC(item as never, standIn.hmacKey)).toBe(true);
      expect(item).toMatchObject({ merchantAccountCode: MERCHANT, amount: { currency: 'CHF', value: 2500 } });
    }
    const tampered = { ...list[0], amount: { currency: 'CHF', value: 1 } };
    expect(validator.validateHMAC(tampered as never, standIn.hmacKey)).toBe(false);
    // Dispute webhooks: pspReference the dispute's, originalReference the payment's (webhooks spec example).
    expect(list[1]).toMatchObject({ originalReference: payment.pspReference, eventDate: '2030-03-17T17:47:40+00:00' });
    expect(list[2]?.pspReference).toBe(list[1]?.pspReference);
    expect(standIn.takeNotifications().notificationItems).toEqual([]);
  });

  it("matches Adyen's published HMAC example and the library's own test vector", async () => {
    const published = await startAdyenStandIn({
      hmacKey: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
    });
    const signed = published.sign({
      pspReference: '7914073381342284',
      merchantAccountCode: 'TestMerchant',
      merchantReference: 'TestPayment-1407325143704',
      amount: { currency: 'EUR', value: 1130 },
      eventCode: 'AUTHORISATION',
      success: 'true',
    });
    expect(signed.additionalData).toEqual({ hmacSignature: 'coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0=' });
    await published.close();
    // src/__tests__/hmacValidator.spec.ts in github.com/Adyen/adyen-node-api-library.
    const library = await startAdyenStandIn({
      hmacKey: 'DFB1EB5485895CFA84146406857104ABB4CBCABDC8AAF103A624C8F6A3EAAB00',
    });
    const item = library.sign({
      pspReference: 'pspReference',
      originalReference: 'originalReference',
      merchantAccountCode: 'merchantAccount',
      merchantReference: 'reference',
      amount: { currency: 'EUR', value: 1000 },
      eventCode: 'REPORT_AVAILABLE',
      success: 'true',
    });
    expect((item.additionalData as Record<string, string>).hmacSignature).toBe(
      'ZNBPtI+oDyyRrLyD1XirkKnQgIAlFc07Vj27TeHsDRE=',
    );
    await library.close();
  });
});

describe('faults, as the service`s client sees them', () => {
  it('refuse: not reached, nothing recorded; the same port answers again after reset', async () => {
    standIn.fault('refuse');
    expect(await failure(pay())).toMatchObject({ kind: 'not_reached' });
    expect(standIn.requests).toHaveLength(0);
    standIn.fault(null);
    expect((await pay()).resultCode).toBe('Authorised');
  });

  it('timeout: unknown to the caller, and nothing was done', async () => {
    standIn.fault('timeout', { times: 1 });
    const error = await failure(
      clientFor(standIn.apiKey, 300).PaymentsApi.payments(request(), { idempotencyKey: 'pay-t' }),
    );
    expect(error).toMatchObject({ kind: 'unknown' });
    expect(standIn.payments.size).toBe(0);
    expect(standIn.requests[0]).toMatchObject({ idempotencyKey: 'pay-t', status: 'no_answer' });
  });

  it('lose_answer: unknown to the caller, the payment made; a retry under the key gets it', async () => {
    standIn.fault('lose_answer', { times: 1 });
    const body = request();
    expect(await failure(checkout.PaymentsApi.payments(body, { idempotencyKey: 'pay-l' }))).toMatchObject({
      kind: 'unknown',
    });
    const [made] = standIn.byReference(body.reference);
    expect(made?.status).toBe('authorised');
    const retry = await checkout.PaymentsApi.payments(body, { idempotencyKey: 'pay-l' });
    expect(retry.pspReference).toBe(made?.pspReference);
    expect(standIn.payments.size).toBe(1);
  });

  it('error: a 500 in Adyen shape, unknown to the caller, nothing done and nothing kept', async () => {
    standIn.fault('error', { times: 1 });
    const body = request();
    expect(await failure(checkout.PaymentsApi.payments(body, { idempotencyKey: 'pay-e' }))).toMatchObject({
      kind: 'unknown',
      status: 500,
      errorType: 'internal',
    });
    expect(standIn.payments.size).toBe(0);
    expect((await checkout.PaymentsApi.payments(body, { idempotencyKey: 'pay-e' })).resultCode).toBe('Authorised');
  });

  it('rate_limit: 500 00_500 "too many requests" as Adyen documents it, an unknown outcome to us; nothing done, until reset', async () => {
    standIn.fault('rate_limit');
    expect(await failure(pay())).toMatchObject({ kind: 'unknown', status: 500, errorCode: '00_500' });
    expect(await failure(pay())).toMatchObject({ kind: 'unknown' });
    standIn.fault(null);
    expect((await pay()).resultCode).toBe('Authorised');
    expect(standIn.payments.size).toBe(1);
    expect(standIn.requests.map((entry) => entry.status)).toEqual([500, 500, 200]);
  });
});
