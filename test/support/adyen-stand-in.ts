import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
// The library is a dependency of services/payments only (the root package.json does not list it),
// so test code reaches it through that package's node_modules.
import * as adyen from '@adyen/api-library';

/**
 * A server speaking the part of Adyen's Checkout API v72 the adapter uses, as Adyen documents it,
 * and never more lenient: `X-API-Key`, merchant accounts the key may use, `Idempotency-Key`
 * replays, Adyen's `ServiceError` shape and codes, redirects for 3-D Secure 2 and TWINT, SEPA
 * debits that stay `Received` until `settle`, tokens for recurring payments, refunds and cancels
 * answered `received` and decided by webhooks, and standard webhooks signed with Adyen's HMAC.
 * Point the service at it with `SVC_ADYEN_API_BASE` (its `url`). test/adyen-stand-in.test.ts proves
 * each rule with the real @adyen/api-library and cites where Adyen documents it. Where Adyen's
 * behaviour is not documented the stand-in takes the stricter reading and says so ("UNKNOWN").
 *
 * Spec: https://github.com/Adyen/adyen-openapi json/CheckoutService-v72.json (cited as "spec").
 * Time is the `clock` option (unix seconds): idempotency keys, redirect expiry and webhook dates.
 */
type Json = Record<string, unknown>;

export interface AdyenStandInOptions {
  clock?: () => number;
  apiKey?: string;
  hmacKey?: string;
  merchantAccounts?: string[];
}

/**
 * `partially_authorised` and `not_json` process the request and then answer what Adyen may answer
 * but we never ask for: a 200 with `resultCode: PartiallyAuthorised`
 * (https://docs.adyen.com/online-payments/build-your-integration/payment-result-codes: "The payment
 * has been authorised for a partial amount"), or a 200 whose body is no JSON (a proxy's page).
 */
export type AdyenFault =
  | 'timeout'
  | 'lose_answer'
  | 'error'
  | 'refuse'
  | 'rate_limit'
  | 'partially_authorised'
  | 'not_json'
  | null;

export interface AdyenPayment {
  pspReference: string;
  merchantReference: string;
  merchantAccount: string;
  amount: { currency: string; value: number };
  method: 'scheme' | 'twint' | 'sepadirectdebit';
  status: 'authorised' | 'refused' | 'redirect' | 'received' | 'cancelled' | 'expired';
  refusalReason?: string;
  shopperReference?: string;
  storedPaymentMethodId?: string;
  refunded: number;
  refunds: Array<{
    pspReference: string;
    reference: string;
    value: number;
    status: 'received' | 'succeeded' | 'failed';
  }>;
}

export interface AdyenStandIn {
  url: string;
  apiKey: string;
  hmacKey: string;
  payments: Map<string, AdyenPayment>;
  byReference(merchantReference: string): AdyenPayment[];
  requests: Array<{
    method: string;
    path: string;
    idempotencyKey?: string;
    body: unknown;
    status: number | 'no_answer';
  }>;
  /**
   * Until reset with null (or for `times` calls): timeout = hold the request without processing it
   * and never answer (until close); lose_answer = process it fully, then destroy the socket without
   * answering; error = answer 500 in Adyen's error shape without processing; refuse = stop listening
   * so connections are refused (ECONNREFUSED), re-listen on the same port at reset (`times` cannot be
   * counted: nothing arrives); rate_limit = 429 in Adyen's shape, not processed.
   *
   * `completesAtReset` (timeout only): Adyen got the request and is slow. Its idempotency key is in
   * progress (a retry under it gets 704 with `transient-error: true`) and it is processed at the
   * next `fault(null)`, its answer kept for replays (and sent, if the caller still waits).
   */
  fault(mode: AdyenFault, options?: { times?: number; completesAtReset?: boolean }): void;
  /** The donor on Adyen's redirect page (3DS2 challenge, TWINT app): the `redirectResult` our return endpoint gets. */
  /**
   * `length`: the redirectResult's length. Adyen's are opaque and of any length up to 20,000
   * characters (Checkout v72 PaymentCompletionDetails.redirectResult maxLength).
   */
  approve(pspReference: string, approved: boolean, options?: { length?: number }): string;
  /** SEPA debits (status received) settle: AUTHORISATION success true/false notification. */
  settle(pspReference: string, outcome: 'success' | 'failure'): void;
  /** A chargeback; on a SEPA debit, the bank's return (reason AC04, closed account). */
  chargeback(pspReference: string): void;
  reverseChargeback(pspReference: string): void;
  /**
   * The scheme rejects the capture of an authorised payment (CAPTURE_FAILED, success "true",
   * https://docs.adyen.com/online-payments/capture/failure-reasons), or an authorisation never
   * captured runs out (EXPIRE): the money was never taken.
   */
  captureFails(pspReference: string): void;
  expire(pspReference: string): void;
  /**
   * The capture Adyen was asked to make at once has not gone through yet. How long that takes is
   * not documented (unknowable here), so a test opens the window by hand: until then a refund is
   * refused (REFUND success "false") and a reversal cancels.
   */
  holdCapture(pspReference: string): void;
  /** The held capture goes through (captured from now on). */
  capture(pspReference: string): void;
  /** The notifications not yet taken, each signed (additionalData.hmacSignature), as one batch body; clears the outbox. */
  takeNotifications(): {
    live: 'false';
    notificationItems: Array<{ NotificationRequestItem: Record<string, unknown> }>;
  };
  sign(item: Record<string, unknown>): Record<string, unknown>;
  close(): Promise<void>;
}

interface Card {
  brand: 'visa' | 'mc';
  threeDS: boolean;
}

/** https://docs.adyen.com/development-resources/test-cards/test-card-numbers (CVC 737, expiry 03/2030). */
const CARDS: Record<string, Card> = {
  '4111111145551142': { brand: 'visa', threeDS: false },
  '4111111111111111': { brand: 'visa', threeDS: false },
  '4988438843884305': { brand: 'visa', threeDS: false },
  '5555341244441115': { brand: 'mc', threeDS: false },
  '2222400070000005': { brand: 'mc', threeDS: false },
  '5555444433331111': { brand: 'mc', threeDS: false },
  '4917610000000000': { brand: 'visa', threeDS: true },
  '5454545454545454': { brand: 'mc', threeDS: true },
};

export const ADYEN_TEST_CARDS = {
  visa: '4111111145551142',
  mastercard: '5555341244441115',
  threeDS2: '4917610000000000',
  threeDS2Mastercard: '5454545454545454',
  expiryMonth: '03',
  expiryYear: '2030',
  cvc: '737',
} as const;

/**
 * How tests trigger a refusal (https://docs.adyen.com/development-resources/testing/result-codes/):
 * `holderName` in `paymentMethod` for cards entered now; `additionalData` (top level of the
 * /payments request) for any card payment, stored ones (ContAuth) included.
 */
export const ADYEN_DECLINE = {
  holderName: 'DECLINED',
  additionalData: { RequestedTestAcquirerResponseCode: '2' },
} as const;

/** Other documented holder names: a refusal for lack of funds; a card whose refunds fail later (REFUND_FAILED). */
export const ADYEN_HOLDER_NAMES = {
  notEnoughBalance: 'NOT_ENOUGH_BALANCE',
  refundFails: 'refund failed',
  pending: 'PENDING',
} as const;

/** Result per holderName and per RequestedTestAcquirerResponseCode (the same page's table). */
const TEST_RESULTS: Array<{ holderName: string; code: string; resultCode: string; refusalReason?: string }> = [
  { holderName: 'UNKNOWN', code: '0', resultCode: 'Error', refusalReason: 'Unknown' },
  { holderName: 'APPROVED', code: '1', resultCode: 'Authorised' },
  { holderName: 'DECLINED', code: '2', resultCode: 'Refused', refusalReason: 'Refused' },
  { holderName: 'REFERRAL', code: '3', resultCode: 'Refused', refusalReason: 'Referral' },
  { holderName: 'ERROR', code: '4', resultCode: 'Error', refusalReason: 'Acquirer Error' },
  { holderName: 'BLOCK_CARD', code: '5', resultCode: 'Refused', refusalReason: 'Blocked Card' },
  { holderName: 'CARD_EXPIRED', code: '6', resultCode: 'Refused', refusalReason: 'Expired Card' },
  { holderName: 'INVALID_AMOUNT', code: '7', resultCode: 'Refused', refusalReason: 'Invalid Amount' },
  { holderName: 'INVALID_CARD_NUMBER', code: '8', resultCode: 'Refused', refusalReason: 'Invalid Card Number' },
  { holderName: 'ISSUER_UNAVAILABLE', code: '9', resultCode: 'Refused', refusalReason: 'Issuer Unavailable' },
  { holderName: 'NOT_SUPPORTED', code: '10', resultCode: 'Refused', refusalReason: 'Not supported' },
  { holderName: 'NOT_3D_AUTHENTICATED', code: '11', resultCode: 'Refused', refusalReason: '3D Not Authenticated' },
  { holderName: 'NOT_ENOUGH_BALANCE', code: '12', resultCode: 'Refused', refusalReason: 'Not enough balance' },
  { holderName: 'PENDING', code: '13', resultCode: 'Received' },
  { holderName: 'ACQUIRER_FRAUD', code: '14', resultCode: 'Refused', refusalReason: 'Acquirer Fraud' },
  { holderName: 'CANCELLED', code: '15', resultCode: 'Refused', refusalReason: 'Cancelled' },
  { holderName: 'SHOPPER_CANCELLED', code: '16', resultCode: 'Refused', refusalReason: 'Shopper Cancelled' },
];

/** Minimum time Adyen keeps an idempotency key (https://docs.adyen.com/development-resources/api-idempotency). */
const IDEMPOTENCY_SECONDS = 7 * 24 * 60 * 60;
/** A redirect not completed by then expires. UNKNOWN for TWINT; 3DS2: error 15_017 ("more than 12 hours"). */
const REDIRECT_SECONDS = 12 * 60 * 60;

/**
 * Currencies on Adyen's table (https://docs.adyen.com/development-resources/currency-codes/), with
 * the four whose decimals Adyen documents as differing from ISO 4217: "For CLP, CVE, IDR, and ISK
 * the standard has a different number of decimals than shown in our currency codes table above.
 * When submitting amounts in minor units, the decimals in the table on this page are leading."
 */
const CURRENCIES = new Set(
  'AED AUD BGN BRL CAD CHF CLP CNY CVE CZK DKK EUR GBP HKD HUF IDR ISK JPY NOK NZD PLN RON SEK USD'.split(' '),
);
/**
 * Adyen writes CLP and ISK with two decimals, ISO 4217 with none (the table above: "CLP | Chilean
 * Peso | 2 (differs from standard)", "ISK | Iceland Krona | 2 (differs from standard)"), so a
 * real amount is a whole peso or króna: a value in hundredths. UNKNOWN whether Adyen refuses a
 * value with hundredths or passes it on (card schemes take whole krónur only since 2023-04-14,
 * https://support.stripe.com/questions/deprecation-of-fractional-isk-charges-and-refunds): the
 * stand-in refuses it, which also catches an amount sent in ISO's units (500 ISK sent as 500 is
 * 5.00 ISK at Adyen).
 */
const WHOLE_UNITS_IN_HUNDREDTHS = new Set(['CLP', 'ISK']);

/** The wire names of a library request type: what Adyen's own library can send for it. */
const checkoutTypes = adyen.Types.checkout as unknown as Record<
  string,
  { getAttributeTypeMap(): Array<{ baseName: string }> } | undefined
>;
function wireNames(type: string): Set<string> {
  const model = checkoutTypes[type];
  if (!model) throw new Error(`The library has no checkout type ${type}`);
  return new Set(model.getAttributeTypeMap().map((attribute) => attribute.baseName));
}

const ACCEPTS = {
  payment: wireNames('PaymentRequest'),
  details: wireNames('PaymentDetailsRequest'),
  completion: wireNames('PaymentCompletionDetails'),
  refund: wireNames('PaymentRefundRequest'),
  cancel: wireNames('PaymentCancelRequest'),
  reversal: wireNames('PaymentReversalRequest'),
  standaloneCancel: wireNames('StandalonePaymentCancelRequest'),
  amount: wireNames('Amount'),
  scheme: wireNames('CardDetails'),
  twint: wireNames('TwintDetails'),
  sepadirectdebit: wireNames('SepaDirectDebitDetails'),
};

/** An error answer in Adyen's ServiceError shape (spec components.schemas.ServiceError). */
class AdyenProblem extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly errorType = 'validation',
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** 422 with one of https://docs.adyen.com/development-resources/error-codes. */
const invalid = (errorCode: string, message: string) => new AdyenProblem(422, errorCode, message);
const missing = (field: string) => invalid('158', `Required field '${field}' not specified`);

const ok = (body: Json, status = 200): Reply => ({ status, body });
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const asObject = (value: unknown): Json => (isObject(value) ? value : {});
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * Fields Adyen's own library cannot send. Real Adyen may ignore them (UNKNOWN): the stand-in rejects
 * them on purpose, so a typo in a hand-built request fails here instead of being dropped silently.
 */
function rejectUnknown(body: Json, accepted: Set<string>, prefix = ''): void {
  const unknown = Object.keys(body).find((name) => !accepted.has(name));
  if (unknown) throw invalid('702', `Unexpected input: field '${prefix}${unknown}' is not part of the request`);
}

/** 16 characters, like Adyen's pspReferences and tokens ("993617895204576J", "M5N7TQ4TG5PFWR50"). */
function reference16(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';
  return [...randomBytes(16)].map((byte) => alphabet[byte % alphabet.length]).join('');
}

function luhn(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

/** ISO 13616: letters to numbers, mod 97 equals 1. */
function validIban(iban: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false;
  const digits = (iban.slice(4) + iban.slice(0, 4)).replace(/[A-Z]/g, (letter) => String(letter.charCodeAt(0) - 55));
  let remainder = 0;
  for (const digit of digits) remainder = (remainder * 10 + Number(digit)) % 97;
  return remainder === 1;
}

/** `amount`: currency (3 letters Adyen supports) and integer value in minor units (spec Amount). */
function readAmount(value: unknown): { currency: string; value: number } {
  if (value === undefined) throw invalid('100', "Required object 'amount' is not provided.");
  const amount = asObject(value);
  rejectUnknown(amount, ACCEPTS.amount, 'amount.');
  const currency = amount.currency;
  if (typeof currency !== 'string' || !CURRENCIES.has(currency)) throw invalid('138', 'Unsupported currency specified');
  const minor = amount.value;
  if (typeof minor !== 'number' || !Number.isSafeInteger(minor) || minor < 0) {
    throw invalid('137', "Field 'amount' is not valid.");
  }
  if (WHOLE_UNITS_IN_HUNDREDTHS.has(currency) && minor % 100 !== 0) {
    throw invalid('137', "Field 'amount' is not valid.");
  }
  return { currency, value: minor };
}

interface Token {
  id: string;
  merchantAccount: string;
  shopperReference: string;
  method: AdyenPayment['method'];
  /** Card number or IBAN: the same details stored again give the same token. */
  details: string;
  card?: Card;
}

/** What the stand-in knows of a payment beyond `AdyenPayment`. */
interface Internal {
  createdAt: number;
  /** The request's `captureDelayHours` (0: capture at once). */
  captureDelayHours?: number;
  /** Captured: the money moved, a cancel no longer can undo it, a refund can. */
  captured?: boolean;
  card?: Card;
  details: string;
  refundFails: boolean;
  store: boolean;
  recurringProcessingModel?: string;
  /** 3DS: the authentication result from the redirect page, applied by /payments/details. */
  authenticated?: boolean;
  redirectResult?: string;
  redirectUsed?: boolean;
  /** Outcome of the card authorisation after 3DS (holderName / acquirer response code). */
  cardResult?: { resultCode: string; refusalReason?: string; code: string };
  /** The final answer body, which /payments/details gives after a redirect. */
  outcome?: Json;
  disputePsp?: string;
}

interface Reply {
  status: number;
  body: Json;
  headers?: Record<string, string>;
}

interface FaultState {
  mode: Exclude<AdyenFault, null>;
  remaining: number;
  completes: boolean;
}

interface Held {
  request: IncomingMessage;
  response: ServerResponse;
  path: string;
  raw: string;
  record: AdyenStandIn['requests'][number];
  /** Processed at the next fault(null) (Adyen was slow), else never. */
  completes: boolean;
}

export async function startAdyenStandIn(options: AdyenStandInOptions = {}): Promise<AdyenStandIn> {
  const clock = options.clock ?? (() => Math.floor(Date.now() / 1000));
  const apiKey = options.apiKey ?? `AQE${randomBytes(24).toString('base64url')}`;
  const hmacKey = options.hmacKey ?? randomBytes(32).toString('hex').toUpperCase();
  const merchantAccounts = new Set(options.merchantAccounts ?? ['CharityECOM', 'CharityTwo']);
  const payments = new Map<string, AdyenPayment>();
  const internals = new Map<string, Internal>();
  const tokens = new Map<string, Token>();
  const redirectResults = new Map<string, string>();
  const requests: AdyenStandIn['requests'] = [];
  const answers = new Map<string, { fingerprint: string; reply: Reply; savedAt: number }>();
  const inProgress = new Set<string>();
  const outbox: Json[] = [];
  const held: Held[] = [];
  const sockets = new Set<Socket>();
  let current: FaultState | undefined;
  let listening = false;
  let base = '';

  const internal = (payment: AdyenPayment) => internals.get(payment.pspReference) as Internal;
  const eventDate = () => new Date(clock() * 1000).toISOString().replace('.000Z', '+00:00');
  const methodName = (payment: AdyenPayment) =>
    payment.method === 'scheme' ? (internal(payment).card?.brand ?? 'visa') : payment.method;

  // Webhooks: https://docs.adyen.com/development-resources/webhooks ; shapes from the Webhooks
  // spec (adyen-openapi json/Webhooks-v1.json, components.examples).

  function notify(eventCode: string, payment: AdyenPayment, fields: Json): void {
    outbox.push({
      amount: { ...payment.amount },
      eventCode,
      eventDate: eventDate(),
      merchantAccountCode: payment.merchantAccount,
      merchantReference: payment.merchantReference,
      paymentMethod: methodName(payment),
      reason: '',
      ...fields,
    });
  }

  /** HMAC-SHA256 with the hex-decoded key over the eight fields, base64 (verify-hmac-signatures). */
  function signature(item: Json): string {
    const amount = asObject(item.amount);
    const data = [
      item.pspReference,
      item.originalReference,
      item.merchantAccountCode,
      item.merchantReference,
      amount.value,
      amount.currency,
      item.eventCode,
      item.success,
    ]
      .map((field) => (field === undefined || field === null ? '' : String(field)))
      .join(':');
    return createHmac('sha256', Buffer.from(hmacKey, 'hex')).update(data, 'utf8').digest('base64');
  }

  const sign = (item: Json): Json => ({
    ...item,
    additionalData: { ...asObject(item.additionalData), hmacSignature: signature(item) },
  });

  function tokenize(payment: AdyenPayment): Json {
    const details = internal(payment);
    if (!details.store || !payment.shopperReference) return {};
    const existing = [...tokens.values()].find(
      (token) =>
        token.merchantAccount === payment.merchantAccount &&
        token.shopperReference === payment.shopperReference &&
        token.method === payment.method &&
        token.details === details.details,
    );
    const token = existing ?? {
      id: reference16(),
      merchantAccount: payment.merchantAccount,
      shopperReference: payment.shopperReference,
      method: payment.method,
      details: details.details,
      ...(details.card ? { card: details.card } : {}),
    };
    tokens.set(token.id, token);
    payment.storedPaymentMethodId = token.id;
    if (!existing) {
      // RECURRING_CONTRACT: pspReference is the token, originalReference the first payment.
      notify('RECURRING_CONTRACT', payment, {
        amount: { currency: payment.amount.currency, value: 0 },
        additionalData: {
          'recurring.recurringDetailReference': token.id,
          'recurring.shopperReference': token.shopperReference,
          shopperReference: token.shopperReference,
        },
        originalReference: payment.pspReference,
        originalPsp: payment.pspReference,
        pspReference: token.id,
        success: 'true',
      });
    }
    // The v72 payment answer (and AUTHORISATION webhook) name the token under tokenization.*
    // (spec example post-payments-subscription-first-transaction-200).
    return {
      'tokenization.shopperReference': token.shopperReference,
      'tokenization.storedPaymentMethodId': token.id,
      'tokenization.store.operationType': existing ? 'alreadyExisting' : 'created',
    };
  }

  /** A final outcome: the payment's state, its AUTHORISATION webhook (always), the token, and the answer body. */
  function conclude(
    payment: AdyenPayment,
    result: { resultCode: string; refusalReason?: string; code?: string },
  ): Json {
    const authorised = result.resultCode === 'Authorised';
    payment.status = authorised ? 'authorised' : 'refused';
    // When a card or TWINT payment is captured is the merchant account's setting (immediate,
    // delayed or manual, https://docs.adyen.com/online-payments/capture), unknown to us: only a
    // request's own `captureDelayHours: 0` ("the delay between the authorisation and scheduled
    // auto-capture, specified in hours", Checkout v72 PaymentRequest) makes the capture certain.
    // The stand-in takes the stricter reading: without it, an authorisation is not captured.
    // SEPA debits have no separate capture.
    internal(payment).captured =
      authorised && (payment.method === 'sepadirectdebit' || internal(payment).captureDelayHours === 0);
    if (!authorised) payment.refusalReason = result.refusalReason ?? 'Refused';
    const tokenization = authorised ? tokenize(payment) : {};
    notify('AUTHORISATION', payment, {
      ...(Object.keys(tokenization).length ? { additionalData: tokenization } : {}),
      ...(authorised ? { operations: ['CANCEL', 'CAPTURE', 'REFUND'] } : {}),
      pspReference: payment.pspReference,
      reason: authorised ? authorisationReason(payment) : payment.refusalReason,
      success: authorised ? 'true' : 'false',
    });
    const body = {
      ...(Object.keys(tokenization).length ? { additionalData: tokenization } : {}),
      pspReference: payment.pspReference,
      resultCode: result.resultCode,
      ...(authorised ? {} : { refusalReason: payment.refusalReason, refusalReasonCode: result.code ?? '2' }),
      merchantReference: payment.merchantReference,
    };
    internal(payment).outcome = body;
    return body;
  }

  /** "Authorisation code, last 4 digits of the card, card expiry date" for cards (Webhooks spec). */
  function authorisationReason(payment: AdyenPayment): string {
    const authCode = String(randomBytes(3).readUIntBE(0, 3) % 1e6).padStart(6, '0');
    return payment.method === 'scheme' ? `${authCode}:${internal(payment).details.slice(-4)}:03/2030` : '';
  }

  /** Redirects not completed in time expire; Adyen says so with OFFER_CLOSED. */
  function sweep(): void {
    for (const payment of payments.values()) {
      if (payment.status === 'redirect' && clock() - internal(payment).createdAt > REDIRECT_SECONDS) {
        payment.status = 'expired';
        notify('OFFER_CLOSED', payment, { pspReference: payment.pspReference, success: 'true' });
      }
    }
  }

  // /payments

  function merchantAccountOf(body: Json): string {
    const account = body.merchantAccount;
    // Missing: 422/901 (observed, github.com/Adyen/adyen-python-api-library/issues/238).
    if (typeof account !== 'string' || account === '') throw invalid('901', 'Invalid Merchant Account');
    // Not allowed for this key: 403/901 (spec example generic-403).
    if (!merchantAccounts.has(account)) throw new AdyenProblem(403, '901', 'Invalid Merchant Account', 'security');
    return account;
  }

  /** The card's outcome from the documented test values (holderName, RequestedTestAcquirerResponseCode). */
  function testResult(holderName: string | undefined, additionalData: Json) {
    const code = text(additionalData.RequestedTestAcquirerResponseCode);
    const byCode = code === undefined ? undefined : TEST_RESULTS.find((entry) => entry.code === code);
    const byName = TEST_RESULTS.find((entry) => entry.holderName === holderName);
    return byCode ?? byName ?? { resultCode: 'Authorised', code: '1' };
  }

  /** A card from raw fields or TEST's `test_`-prefixed "encrypted" ones (spec example card-securedfields). */
  function readCard(method: Json): { number: string; card: Card; declined: boolean } {
    const encrypted = ['encryptedCardNumber', 'encryptedExpiryMonth', 'encryptedExpiryYear', 'encryptedSecurityCode'];
    const usesEncrypted = encrypted.some((field) => method[field] !== undefined);
    const plain = (field: string): string | undefined => {
      const value = method[field];
      if (value === undefined) return undefined;
      // In TEST, Adyen accepts unencrypted values only with the `test_` prefix; anything else would
      // be real client-side encryption, which the stand-in cannot decrypt.
      if (typeof value !== 'string' || !value.startsWith('test_')) throw invalid('174', 'Unable to decrypt data');
      return value.slice('test_'.length);
    };
    const field = (raw: string, enc: string) =>
      usesEncrypted ? plain(enc) : typeof method[raw] === 'string' ? (method[raw] as string) : undefined;
    if (usesEncrypted && ['number', 'expiryMonth', 'expiryYear', 'cvc'].some((name) => method[name] !== undefined)) {
      throw invalid('14_005', 'Invalid payment method details: both raw and encrypted card fields');
    }
    const number = field('number', 'encryptedCardNumber');
    const month = field('expiryMonth', 'encryptedExpiryMonth');
    const year = field('expiryYear', 'encryptedExpiryYear');
    const cvc = field('cvc', 'encryptedSecurityCode');
    if (!number) throw missing(`paymentMethod.${usesEncrypted ? 'encryptedCardNumber' : 'number'}`);
    if (!/^\d{12,19}$/.test(number) || !luhn(number)) throw invalid('101', 'Invalid card number');
    if (!month || !year || !/^(0[1-9]|1[0-2])$/.test(month) || !/^\d{4}$/.test(year)) {
      throw invalid('129', 'Expiry Date Invalid');
    }
    if (cvc !== undefined && !/^\d{3,4}$/.test(cvc)) throw invalid('103', 'CVC is not the right length');
    const card = CARDS[number];
    // Only Adyen's test cards, with their CVC and expiry: "If you specify an incorrect CVC or an
    // invalid expiry date, the payment fails and returns a generic DECLINED refusal reason".
    const declined = !card || month !== '03' || year !== '2030' || (cvc !== undefined && cvc !== '737');
    return { number, card: card ?? { brand: number.startsWith('4') ? 'visa' : 'mc', threeDS: false }, declined };
  }

  /**
   * A card payment the shopper makes in a browser carries what 3-D Secure 2 needs (Checkout v72
   * /payments reference): `browserInfo`, whose full object "is required for web integrations"
   * (BrowserInfo's required fields, from Adyen's library), `origin` ("Required for the 3D Secure 2
   * channel Web integration"), `shopperIP` and `shopperEmail` (required by the schemes for 3D
   * Secure 2 on the web), and `billingAddress` with "all of the fields within this object". As
   * strict as the documents say; which error code Adyen gives for each is UNKNOWN here (158, its
   * "Required field not specified", is used).
   */
  function requireThreeDSecure2(body: Json): void {
    const info = asObject(body.browserInfo);
    if (body.browserInfo === undefined) throw missing('browserInfo');
    for (const field of [
      'acceptHeader',
      'colorDepth',
      'javaEnabled',
      'language',
      'screenHeight',
      'screenWidth',
      'timeZoneOffset',
      'userAgent',
    ]) {
      if (info[field] === undefined) throw missing(`browserInfo.${field}`);
    }
    if (!text(body.origin)) throw missing('origin');
    if (!text(body.shopperIP)) throw missing('shopperIP');
    if (!text(body.shopperEmail)) throw missing('shopperEmail');
    const address = asObject(body.billingAddress);
    if (body.billingAddress === undefined) throw missing('billingAddress');
    for (const field of ['street', 'houseNumberOrName', 'postalCode', 'city', 'country']) {
      if (!text(address[field])) throw missing(`billingAddress.${field}`);
    }
  }

  function createPayment(body: Json): Reply {
    rejectUnknown(body, ACCEPTS.payment);
    const merchantAccount = merchantAccountOf(body);
    const amount = readAmount(body.amount);
    const reference = text(body.reference);
    if (!reference) throw invalid('130', 'Reference Missing');
    if (reference.length > 80) throw invalid('29_001', "Field 'reference' may not exceed 80 characters.");
    if (body.paymentMethod === undefined)
      throw invalid('14_006', 'paymentMethod object has not been provided in the request');
    const returnUrl = text(body.returnUrl);
    if (!returnUrl) throw invalid('14_030', 'Return URL is missing.');
    if (returnUrl.length > 1024) throw invalid('29_001', "Field 'returnUrl' may not exceed 1024 characters.");
    const method = asObject(body.paymentMethod);
    const type = method.type;
    if (type !== 'scheme' && type !== 'twint' && type !== 'sepadirectdebit') {
      // Spec example generic-500: "Payment details are not supported" (the stand-in knows three methods).
      throw new AdyenProblem(500, '905', 'Payment details are not supported', 'configuration');
    }
    rejectUnknown(method, ACCEPTS[type], 'paymentMethod.');
    const enumOf = (field: string, values: string[], code: string) => {
      const value = body[field];
      if (value !== undefined && (typeof value !== 'string' || !values.includes(value))) {
        throw invalid(code, `Field '${field}' is missing or not valid.`);
      }
      return value as string | undefined;
    };
    const interaction = enumOf('shopperInteraction', ['Ecommerce', 'ContAuth', 'Moto', 'POS'], '217') ?? 'Ecommerce';
    const model = enumOf('recurringProcessingModel', ['CardOnFile', 'Subscription', 'UnscheduledCardOnFile'], '000');
    enumOf('channel', ['iOS', 'Android', 'Web'], '000');
    const shopperReference = body.shopperReference;
    if (
      shopperReference !== undefined &&
      (typeof shopperReference !== 'string' || !/^.{3,256}$/.test(shopperReference))
    ) {
      // "Minimum length: 3 characters" (spec PaymentRequest.shopperReference).
      throw invalid('180', 'Invalid shopperReference');
    }
    const storedId = text(method.storedPaymentMethodId) ?? text(method.recurringDetailReference);
    const store = body.storePaymentMethod === true;
    // "Recurring payments require a shopperReference" (error codes, 000); recurringProcessingModel
    // is "Required when creating a token … or using stored payment details" (spec).
    if ((store || storedId) && !shopperReference) throw invalid('000', 'Recurring payments require a shopperReference');
    if ((store || storedId) && !model) throw missing('recurringProcessingModel');
    if (interaction === 'ContAuth' && !storedId) {
      throw invalid('807', 'Invalid combination of shopper interaction and recurring-contract');
    }
    if (asObject(asObject(body.authenticationData).threeDSRequestData).nativeThreeDS === 'preferred') {
      // Native 3DS2 (IdentifyShopper / threeDS2 actions) is not simulated: a stand-in limit, not Adyen's.
      throw invalid(
        '000',
        'Stand-in: native 3DS2 is not simulated; omit authenticationData.threeDSRequestData.nativeThreeDS',
      );
    }
    if (type === 'scheme' && interaction === 'Ecommerce' && !storedId) requireThreeDSecure2(body);
    const metadata = Object.entries(asObject(body.metadata));
    // Spec PaymentRequest.metadata: at most 20 pairs ("177" Metadata size exceeds limit), keys of at
    // most 20 and string values of at most 80 characters (their error code: UNKNOWN, 177 here).
    if (metadata.length > 20) throw invalid('177', 'Metadata size exceeds limit');
    const badEntry = metadata.find(
      ([name, value]) => name.length > 20 || typeof value !== 'string' || value.length > 80,
    );
    if (badEntry) throw invalid('177', `Metadata entry '${badEntry[0]}' exceeds 20 characters per key or 80 per value`);
    const additionalData = asObject(body.additionalData);

    const payment: AdyenPayment = {
      pspReference: reference16(),
      merchantReference: reference,
      merchantAccount,
      amount,
      method: type,
      status: 'received',
      refunded: 0,
      refunds: [],
      ...(typeof shopperReference === 'string' ? { shopperReference } : {}),
    };
    const details: Internal = {
      createdAt: clock(),
      ...(typeof body.captureDelayHours === 'number' ? { captureDelayHours: body.captureDelayHours } : {}),
      details: '',
      refundFails: false,
      store,
      ...(model ? { recurringProcessingModel: model } : {}),
    };
    let redirects = false;
    let result: { resultCode: string; refusalReason?: string; code: string } = { resultCode: 'Authorised', code: '1' };

    if (storedId) {
      const token = tokens.get(storedId);
      // The token must be this shopper's, at this merchant account, for this method (800 Contract not found).
      if (
        !token ||
        token.shopperReference !== shopperReference ||
        token.merchantAccount !== merchantAccount ||
        token.method !== type
      ) {
        throw invalid('800', 'Contract not found');
      }
      details.details = token.details;
      if (token.card) details.card = token.card;
      payment.storedPaymentMethodId = token.id;
      if (type === 'scheme') {
        const securityCode = text(method.cvc) ?? text(method.encryptedSecurityCode);
        // One-click (shopper present) needs the CVC; ContAuth never does and never redirects.
        if (interaction !== 'ContAuth' && !securityCode)
          throw invalid('000', 'CVC is required for OneClick card payments');
        result = testResult(undefined, additionalData);
        redirects = interaction !== 'ContAuth' && token.card?.threeDS === true;
      } else if (type === 'sepadirectdebit') {
        result = { resultCode: 'Received', code: '13' };
      }
    } else if (type === 'scheme') {
      const card = readCard(method);
      details.details = card.number;
      details.card = card.card;
      const holderName = text(method.holderName);
      details.refundFails = holderName === ADYEN_HOLDER_NAMES.refundFails;
      result = card.declined
        ? { resultCode: 'Refused', refusalReason: 'Refused', code: '2' }
        : testResult(holderName, additionalData);
      redirects = card.card.threeDS && result.resultCode !== 'Error';
    } else if (type === 'twint') {
      // TWINT is CHF only (https://docs.adyen.com/payment-methods/twint/api-only: currency CHF).
      if (amount.currency !== 'CHF') throw invalid('138', 'Unsupported currency specified');
      redirects = true;
    } else {
      // SEPA Direct Debit: EUR only; `iban` and `ownerName` are required in v72 (spec SepaDirectDebitDetails).
      if (amount.currency !== 'EUR') throw invalid('138', 'Unsupported currency specified');
      const iban = text(method.iban);
      if (!iban) throw missing('paymentMethod.iban');
      if (!text(method.ownerName)) throw missing('paymentMethod.ownerName');
      if (!validIban(iban)) throw invalid('161', 'Invalid iban');
      details.details = iban;
      result = { resultCode: 'Received', code: '13' };
    }

    payments.set(payment.pspReference, payment);
    internals.set(payment.pspReference, details);
    if (redirects) {
      payment.status = 'redirect';
      if (type === 'scheme') details.cardResult = result;
      const action = {
        paymentMethodType: type,
        url: `${base}/redirect/${payment.pspReference}`,
        method: 'GET',
        type: 'redirect',
      };
      // The card 3DS redirect answer carries the pspReference (spec example
      // post-payments-card-3d-secure-redirect-200); a redirect method's does not (post-payments-ideal-200).
      return ok({
        resultCode: 'RedirectShopper',
        action,
        ...(type === 'scheme' ? { pspReference: payment.pspReference } : {}),
      });
    }
    if (result.resultCode === 'Received') {
      // SEPA (and the PENDING test holder): "Received", decided later by an AUTHORISATION webhook.
      payment.status = 'received';
      return ok({
        pspReference: payment.pspReference,
        resultCode: 'Received',
        merchantReference: payment.merchantReference,
      });
    }
    return ok(conclude(payment, result));
  }

  // /payments/details (spec PaymentDetailsRequest; example post-payments-details-00.redirect)

  function submitDetails(body: Json): Reply {
    rejectUnknown(body, ACCEPTS.details);
    if (!isObject(body.details)) throw missing('details');
    rejectUnknown(body.details, ACCEPTS.completion, 'details.');
    const redirectResult = text(body.details.redirectResult);
    if (!redirectResult) throw missing('details.redirectResult');
    const psp = redirectResults.get(redirectResult);
    const payment = psp ? payments.get(psp) : undefined;
    if (!payment) throw invalid('14_018', 'Invalid payload provided');
    const details = internal(payment);
    // A redirectResult is good once (UNKNOWN what Adyen answers to a second use: the stand-in refuses it).
    if (details.redirectUsed) throw invalid('14_018', 'Invalid payload provided: redirectResult already submitted');
    if (payment.status === 'expired') {
      throw invalid(
        '15_017',
        'Cannot perform an authorisation on a 3DS2 transaction more than 12 hours after the transaction began',
      );
    }
    details.redirectUsed = true;
    if (payment.status === 'redirect') {
      // 3DS: the card is authorised now, if the donor authenticated.
      conclude(
        payment,
        details.authenticated
          ? (details.cardResult ?? { resultCode: 'Authorised', code: '1' })
          : { resultCode: 'Refused', refusalReason: '3D Not Authenticated', code: '11' },
      );
    }
    const { pspReference, merchantReference } = payment;
    return ok(details.outcome ?? { pspReference, resultCode: 'Cancelled', merchantReference });
  }

  // Modifications: answered 201 "received", decided by webhooks (spec: refunds, cancels, /cancels).

  function paymentFor(psp: string, merchantAccount: string): AdyenPayment {
    const payment = payments.get(psp);
    if (!payment || payment.merchantAccount !== merchantAccount) {
      throw invalid('167', 'Original pspReference required for this operation');
    }
    return payment;
  }

  function refund(psp: string, body: Json): Reply {
    rejectUnknown(body, ACCEPTS.refund);
    const merchantAccount = merchantAccountOf(body);
    const amount = readAmount(body.amount);
    const payment = paymentFor(psp, merchantAccount);
    const reference = text(body.reference);
    const refundPsp = reference16();
    const record: AdyenPayment['refunds'][number] = {
      pspReference: refundPsp,
      reference: reference ?? '',
      value: amount.value,
      status: 'received',
    };
    payment.refunds.push(record);
    const outcome = (success: boolean, reason: string, eventCode = 'REFUND') =>
      notify(eventCode, payment, {
        amount,
        merchantReference: reference ?? payment.merchantReference,
        originalReference: payment.pspReference,
        pspReference: refundPsp,
        reason,
        success: success ? 'true' : 'false',
      });
    // The refund is decided at once; its answer says only "received" either way.
    if (payment.status !== 'authorised' || !internal(payment).captured) {
      record.status = 'failed';
      outcome(false, "Transaction hasn't been captured, refund not possible");
    } else if (amount.currency !== payment.amount.currency) {
      record.status = 'failed';
      outcome(false, 'Currency does not match the payment'); // wording UNKNOWN
    } else if (amount.value > payment.amount.value - payment.refunded) {
      // "by default the total refunded value cannot exceed the captured amount" (api-idempotency).
      record.status = 'failed';
      outcome(false, 'Insufficient balance on payment');
    } else {
      record.status = 'succeeded';
      payment.refunded += amount.value;
      outcome(true, '');
      if (internal(payment).refundFails) {
        // holderName "refund failed": the refund fails after it succeeded (REFUND_FAILED, success "true").
        record.status = 'failed';
        payment.refunded -= amount.value;
        outcome(true, 'Refund Failed', 'REFUND_FAILED');
      }
    }
    const paymentPspReference = payment.pspReference;
    return ok(
      {
        merchantAccount,
        paymentPspReference,
        pspReference: refundPsp,
        ...(reference ? { reference } : {}),
        status: 'received',
        amount,
      },
      201,
    );
  }

  /**
   * A reversal (`/payments/{pspReference}/reversals`): "If the payment has not been captured, it
   * cancels the payment. If the payment has been captured, it refunds the payment"; "the reversed
   * amount is always the full payment amount"; the outcome is a CANCEL_OR_REFUND webhook whose
   * additionalData names the action (`modification.action`, Webhooks v1 example)
   * (https://docs.adyen.com/online-payments/reversal). A payment refunded in part already, or not
   * authorised, is refused (success "false"; Adyen's wording for these is UNKNOWN).
   */
  function reversal(psp: string, body: Json): Reply {
    rejectUnknown(body, ACCEPTS.reversal);
    const merchantAccount = merchantAccountOf(body);
    const payment = paymentFor(psp, merchantAccount);
    const reference = text(body.reference);
    const reversalPsp = reference16();
    const captured = internal(payment).captured === true;
    const reason =
      payment.status !== 'authorised' && payment.status !== 'received'
        ? `Payment is ${payment.status}`
        : payment.refunded > 0
          ? 'Payment is partially refunded'
          : '';
    if (!reason && captured) payment.refunded = payment.amount.value;
    if (!reason && !captured) payment.status = 'cancelled';
    notify('CANCEL_OR_REFUND', payment, {
      merchantReference: reference ?? payment.merchantReference,
      originalReference: payment.pspReference,
      pspReference: reversalPsp,
      reason,
      success: reason ? 'false' : 'true',
      ...(reason ? {} : { additionalData: { 'modification.action': captured ? 'refund' : 'cancel' } }),
    });
    if (!reason && captured) {
      const record: AdyenPayment['refunds'][number] = {
        pspReference: reversalPsp,
        reference: reference ?? '',
        value: payment.amount.value,
        status: 'succeeded',
      };
      payment.refunds.push(record);
      if (internal(payment).refundFails) {
        // holderName "refund failed": the refund fails after it succeeded (REFUND_FAILED, success "true").
        record.status = 'failed';
        payment.refunded = 0;
        notify('REFUND_FAILED', payment, {
          merchantReference: reference ?? payment.merchantReference,
          originalReference: payment.pspReference,
          pspReference: reversalPsp,
          reason: 'Refund Failed',
          success: 'true',
        });
      }
    }
    return ok(
      {
        merchantAccount,
        paymentPspReference: psp,
        pspReference: reversalPsp,
        ...(reference ? { reference } : {}),
        status: 'received',
      },
      201,
    );
  }

  /**
   * Cancels work "only before capture". Cards and TWINT are captured automatically right after
   * authorisation (https://docs.adyen.com/online-payments/capture: the default), so a cancel of an
   * Authorised payment fails (refund it instead); a payment still at the redirect, or a SEPA debit
   * still Received, is cancelled.
   */
  function cancelPayment(
    payment: AdyenPayment,
    eventCode: string,
    cancelPsp: string,
    reference: string | undefined,
  ): void {
    const cancellable =
      payment.status === 'redirect' ||
      payment.status === 'received' ||
      (payment.status === 'authorised' && !internal(payment).captured);
    if (cancellable) payment.status = 'cancelled';
    notify(eventCode, payment, {
      merchantReference: reference ?? payment.merchantReference,
      originalReference: payment.pspReference,
      pspReference: cancelPsp,
      reason: cancellable
        ? ''
        : payment.status === 'authorised'
          ? 'Payment already captured'
          : `Payment is ${payment.status}`,
      success: cancellable ? 'true' : 'false',
    });
  }

  function cancelByPsp(psp: string, body: Json): Reply {
    rejectUnknown(body, ACCEPTS.cancel);
    const merchantAccount = merchantAccountOf(body);
    const payment = paymentFor(psp, merchantAccount);
    const reference = text(body.reference);
    const cancelPsp = reference16();
    cancelPayment(payment, 'CANCELLATION', cancelPsp, reference);
    return ok(
      {
        merchantAccount,
        paymentPspReference: psp,
        pspReference: cancelPsp,
        ...(reference ? { reference } : {}),
        status: 'received',
      },
      201,
    );
  }

  /** POST /cancels by our reference: its outcome is a TECHNICAL_CANCEL webhook (spec /cancels description). */
  function cancelByReference(body: Json): Reply {
    rejectUnknown(body, ACCEPTS.standaloneCancel);
    const merchantAccount = merchantAccountOf(body);
    const paymentReference = text(body.paymentReference);
    if (!paymentReference) throw missing('paymentReference');
    const reference = text(body.reference);
    const cancelPsp = reference16();
    const matching = [...payments.values()].filter(
      (payment) => payment.merchantReference === paymentReference && payment.merchantAccount === merchantAccount,
    );
    for (const payment of matching) cancelPayment(payment, 'TECHNICAL_CANCEL', cancelPsp, reference);
    if (matching.length === 0) {
      // Nothing to cancel (UNKNOWN how Adyen words it): a failed TECHNICAL_CANCEL.
      outbox.push({
        amount: { currency: 'EUR', value: 0 },
        eventCode: 'TECHNICAL_CANCEL',
        eventDate: eventDate(),
        merchantAccountCode: merchantAccount,
        merchantReference: reference ?? paymentReference,
        pspReference: cancelPsp,
        reason: 'Payment not found',
        success: 'false',
      });
    }
    return ok(
      {
        merchantAccount,
        paymentReference,
        pspReference: cancelPsp,
        ...(reference ? { reference } : {}),
        status: 'received',
      },
      201,
    );
  }

  // HTTP

  const ROUTES: Array<{ path: RegExp; run: (body: Json, match: RegExpMatchArray) => Reply }> = [
    { path: /^\/v72\/payments$/, run: (body) => createPayment(body) },
    { path: /^\/v72\/payments\/details$/, run: (body) => submitDetails(body) },
    {
      path: /^\/v72\/payments\/([^/]+)\/refunds$/,
      run: (body, match) => refund(decodeURIComponent(match[1] ?? ''), body),
    },
    {
      path: /^\/v72\/payments\/([^/]+)\/reversals$/,
      run: (body, match) => reversal(decodeURIComponent(match[1] ?? ''), body),
    },
    {
      path: /^\/v72\/payments\/([^/]+)\/cancels$/,
      run: (body, match) => cancelByPsp(decodeURIComponent(match[1] ?? ''), body),
    },
    { path: /^\/v72\/cancels$/, run: (body) => cancelByReference(body) },
  ];

  function problemReply(problem: AdyenProblem): Reply {
    const withPsp = problem.status === 403 || problem.status === 422 || problem.status >= 500;
    return {
      status: problem.status,
      headers: problem.headers,
      body: {
        status: problem.status,
        errorCode: problem.errorCode,
        message: problem.message,
        errorType: problem.errorType,
        ...(withPsp ? { pspReference: reference16() } : {}),
      },
    };
  }

  /** Everything after the transport: route, JSON, idempotency, the endpoint. */
  function processRequest(path: string, raw: string, key: string | undefined): Reply {
    sweep();
    const route = ROUTES.map((entry) => ({ entry, match: path.match(entry.path) })).find((found) => found.match);
    if (!route?.match) return problemReply(new AdyenProblem(404, '000', 'Not Found', 'validation'));
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      // Spec example generic-400.
      return problemReply(new AdyenProblem(400, '702', `Unexpected input: ${raw.slice(0, 20)}`, 'validation'));
    }
    if (!isObject(body))
      return problemReply(new AdyenProblem(400, '702', 'Unexpected input: expected an object', 'validation'));
    if (key !== undefined) {
      // "a unique identifier for the message with a maximum of 64 characters" (api-idempotency).
      if (key.length > 64) return problemReply(invalid('000', 'Idempotency-Key may not exceed 64 characters'));
      const fingerprint = createHash('sha256').update(`${path}\n${raw}`).digest('hex');
      const earlier = answers.get(key);
      if (earlier && clock() - earlier.savedAt > IDEMPOTENCY_SECONDS) answers.delete(key);
      const kept = answers.get(key);
      // In progress: 422/704 with transient-error: true (retry later with the same key).
      if (inProgress.has(key)) {
        return problemReply(
          new AdyenProblem(422, '704', 'request already processed or in progress', 'validation', {
            'transient-error': 'true',
          }),
        );
      }
      // A different request under a used key: UNKNOWN in Adyen's docs; 704, nothing done.
      if (kept && kept.fingerprint !== fingerprint) {
        return problemReply(new AdyenProblem(422, '704', 'request already processed or in progress', 'validation'));
      }
      if (kept) return kept.reply;
      const reply = run(route.entry, body, route.match);
      answers.set(key, { fingerprint, reply, savedAt: clock() });
      return reply;
    }
    return run(route.entry, body, route.match);
  }

  function run(entry: (typeof ROUTES)[number], body: Json, match: RegExpMatchArray): Reply {
    try {
      return entry.run(body, match);
    } catch (error) {
      if (error instanceof AdyenProblem) return problemReply(error);
      throw error;
    }
  }

  function respond(response: ServerResponse, reply: Reply, key: string | undefined): void {
    if (response.destroyed || response.writableEnded) return;
    response.writeHead(reply.status, {
      'content-type': 'application/json',
      // No kept-alive sockets: a refused listener then refuses every next request.
      connection: 'close',
      ...(key ? { 'idempotency-key': key } : {}),
      ...reply.headers,
    });
    response.end(JSON.stringify(reply.body));
  }

  function takeFault(): FaultState | undefined {
    if (!current) return undefined;
    const taken = current;
    taken.remaining -= 1;
    if (taken.remaining <= 0) current = undefined;
    return taken;
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = new URL(request.url ?? '/', 'http://stand-in').pathname;
    if (request.method === 'GET' && /^\/v72\/redirect\/[A-Z0-9]{16}$/.test(path)) {
      // Adyen's page the shopper is sent to; tests decide with approve().
      response.writeHead(200, { 'content-type': 'text/html', connection: 'close' });
      response.end('<!doctype html><title>Adyen stand-in</title><p>Decided by approve() in tests.</p>');
      return;
    }
    if (!listening) {
      request.socket.destroy();
      return;
    }
    const key = request.headers['idempotency-key'] as string | undefined;
    let parsed: unknown = raw;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // recorded as text
    }
    const record: AdyenStandIn['requests'][number] = {
      method: request.method ?? 'POST',
      path,
      ...(key !== undefined ? { idempotencyKey: key } : {}),
      body: parsed,
      status: 'no_answer',
    };
    requests.push(record);
    const fault = takeFault();
    if (fault?.mode === 'timeout') {
      if (fault.completes && key) inProgress.add(key);
      held.push({ request, response, path, raw, record, completes: fault.completes });
      return;
    }
    if (fault?.mode === 'error' || fault?.mode === 'rate_limit') {
      const reply = problemReply(
        fault.mode === 'error'
          ? new AdyenProblem(500, '903', 'Internal error', 'internal')
          : // Adyen's rate limit is its internal error 00_500 with the detail "too many requests",
            // "The request may succeed later" (https://docs.adyen.com/errors/internal); whether it
            // was processed is not said, so callers must take it as unknown. Here: not processed,
            // not kept under the key (one of the possibilities).
            new AdyenProblem(500, '00_500', 'An internal error happened', 'internal'),
      );
      if (fault.mode === 'rate_limit') (reply.body as Json).detail = 'too many requests';
      record.status = reply.status;
      respond(response, reply, key);
      return;
    }
    if (request.headers['x-api-key'] !== apiKey) {
      // Spec example generic-401.
      const reply = problemReply(new AdyenProblem(401, '000', 'HTTP Status Response - Unauthorized', 'security'));
      record.status = reply.status;
      respond(response, reply, undefined);
      return;
    }
    const reply = processRequest(path, raw, key);
    if (fault?.mode === 'lose_answer') {
      // Done and kept under its key; the answer never arrives.
      request.socket.destroy();
      return;
    }
    record.status = reply.status;
    if (fault?.mode === 'not_json' && reply.status === 200) {
      response.writeHead(200, { 'content-type': 'text/html', connection: 'close' });
      response.end('<html><body>OK</body></html>');
      return;
    }
    if (fault?.mode === 'partially_authorised' && reply.status === 200) {
      respond(
        response,
        { ...reply, body: { ...(reply.body as Record<string, Json>), resultCode: 'PartiallyAuthorised' } },
        key,
      );
      return;
    }
    respond(response, reply, key);
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      respond(
        response,
        problemReply(new AdyenProblem(500, '903', `Internal error: ${String(error)}`, 'internal')),
        undefined,
      );
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  listening = true;
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}/v72`;

  function stopListening(): void {
    if (!listening) return;
    listening = false;
    server.close();
    const keep = new Set(held.map((entry) => entry.request.socket));
    for (const socket of sockets) if (!keep.has(socket)) socket.destroy();
  }

  function completeHeld(): void {
    for (const entry of held.filter((candidate) => candidate.completes)) {
      held.splice(held.indexOf(entry), 1);
      const key = entry.request.headers['idempotency-key'] as string | undefined;
      if (key) inProgress.delete(key);
      const reply = processRequest(entry.path, entry.raw, key);
      entry.record.status = reply.status;
      respond(entry.response, reply, key);
    }
  }

  function found(psp: string): AdyenPayment {
    const payment = payments.get(psp);
    if (!payment) throw new Error(`No payment ${psp}`);
    return payment;
  }

  return {
    url: base,
    apiKey,
    hmacKey,
    payments,
    requests,
    // Test-only: Adyen's Checkout API has no lookup of a payment by merchant reference. The
    // service resolves an unknown outcome by re-sending under the same idempotency key, and by webhooks.
    byReference: (merchantReference) =>
      [...payments.values()].filter((payment) => payment.merchantReference === merchantReference),
    fault(mode, faultOptions = {}) {
      if (mode === null) {
        current = undefined;
        completeHeld();
        if (!listening) {
          server.listen(port, '127.0.0.1');
          listening = true;
        }
        return;
      }
      if (mode === 'refuse') {
        if (faultOptions.times !== undefined)
          throw new Error("fault('refuse') lasts until fault(null): refused connections cannot be counted");
        current = undefined;
        stopListening();
        return;
      }
      current = {
        mode,
        remaining: faultOptions.times ?? Number.POSITIVE_INFINITY,
        completes: mode === 'timeout' && faultOptions.completesAtReset === true,
      };
    },
    approve(pspReference, approved, options) {
      sweep();
      const payment = found(pspReference);
      const details = internal(payment);
      if (payment.status !== 'redirect' || details.redirectResult) {
        throw new Error(`Payment ${pspReference} is not waiting on its redirect page (${payment.status})`);
      }
      const short = `${randomBytes(24).toString('base64url')}!${reference16()}`;
      const length = options?.length ?? short.length;
      if (length < short.length || length > 20_000) throw new Error(`A redirectResult of ${length} characters`);
      const redirectResult = `${randomBytes(length)
        .toString('base64url')
        .slice(0, length - short.length)}${short}`;
      details.redirectResult = redirectResult;
      redirectResults.set(redirectResult, pspReference);
      if (payment.method === 'twint') {
        // TWINT authorises in the app: the AUTHORISATION webhook comes whether or not the donor returns.
        conclude(
          payment,
          approved
            ? { resultCode: 'Authorised' }
            : { resultCode: 'Refused', refusalReason: 'Shopper Cancelled', code: '16' },
        );
      } else {
        details.authenticated = approved;
      }
      return redirectResult;
    },
    settle(pspReference, outcome) {
      const payment = found(pspReference);
      if (payment.status !== 'received') throw new Error(`Payment ${pspReference} is ${payment.status}, not received`);
      conclude(
        payment,
        outcome === 'success'
          ? { resultCode: 'Authorised' }
          : { resultCode: 'Refused', refusalReason: 'Refused', code: '2' },
      );
    },
    captureFails(pspReference) {
      const payment = found(pspReference);
      if (payment.status !== 'authorised') throw new Error(`Payment ${pspReference} is ${payment.status}`);
      internal(payment).captured = false;
      payment.status = 'refused';
      notify('CAPTURE_FAILED', payment, {
        originalReference: payment.pspReference,
        pspReference: reference16(),
        reason: 'Capture Failed',
        success: 'true',
      });
    },
    holdCapture(pspReference) {
      const payment = found(pspReference);
      if (payment.status !== 'authorised') throw new Error(`Payment ${pspReference} is ${payment.status}`);
      internal(payment).captured = false;
    },
    capture(pspReference) {
      const payment = found(pspReference);
      if (payment.status !== 'authorised') throw new Error(`Payment ${pspReference} is ${payment.status}`);
      internal(payment).captured = true;
    },
    expire(pspReference) {
      const payment = found(pspReference);
      if (payment.status !== 'authorised' || internal(payment).captured)
        throw new Error(`Payment ${pspReference} is not an uncaptured authorisation`);
      payment.status = 'expired';
      notify('EXPIRE', payment, {
        originalReference: payment.pspReference,
        pspReference: reference16(),
        reason: 'Authorisation expired',
        success: 'true',
      });
    },
    chargeback(pspReference) {
      const payment = found(pspReference);
      if (payment.status !== 'authorised')
        throw new Error(`Payment ${pspReference} is ${payment.status}, not authorised`);
      const details = internal(payment);
      details.disputePsp = reference16();
      // A SEPA debit's chargeback is the bank's return, with the SEPA reason code (AC04: the
      // donor closed the account; https://docs.adyen.com/risk-management/chargeback-guidelines/sepa-chargebacks/).
      const sepa = payment.method === 'sepadirectdebit';
      // CHARGEBACK: pspReference the dispute's, originalReference the payment's (Webhooks spec example).
      notify('CHARGEBACK', payment, {
        additionalData: { chargebackReasonCode: sepa ? 'AC04' : '10.4', chargebackSchemeCode: methodName(payment) },
        originalReference: payment.pspReference,
        pspReference: details.disputePsp,
        reason: sepa ? 'Closed Account Number' : 'Other Fraud-Card Absent Environment',
        success: 'true',
      });
    },
    reverseChargeback(pspReference) {
      const payment = found(pspReference);
      const disputePsp = internal(payment).disputePsp;
      if (!disputePsp) throw new Error(`Payment ${pspReference} has no chargeback`);
      notify('CHARGEBACK_REVERSED', payment, {
        originalReference: payment.pspReference,
        pspReference: disputePsp,
        reason: 'Chargeback reversed',
        success: 'true',
      });
    },
    takeNotifications() {
      sweep();
      const items = outbox.splice(0, outbox.length);
      return { live: 'false', notificationItems: items.map((item) => ({ NotificationRequestItem: sign(item) })) };
    },
    sign,
    async close() {
      current = undefined;
      for (const entry of held.splice(0, held.length)) entry.request.socket.destroy();
      for (const socket of sockets) socket.destroy();
      if (listening) {
        listening = false;
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}

/**
 * What 3-D Secure 2 needs of a donor's browser (payment_information's `browser_info`, `origin`,
 * `donor_ip_address`, `email`, `billing_address`): Adyen requires it of every card payment made
 * in a browser (adyen-provider.ts), and the stand-in checks it. In our API's words (payment_information), for the harness and the benches.
 */
export const DONOR_BROWSER = {
  browser_info: {
    acceptHeader: 'text/html,application/xhtml+xml',
    colorDepth: 24,
    javaEnabled: false,
    language: 'de-CH',
    screenHeight: 900,
    screenWidth: 1440,
    timeZoneOffset: -60,
    userAgent: 'Mozilla/5.0 (donor-browser)',
  },
  origin: 'https://charity.example.org',
  donor_ip_address: '203.0.113.7',
  email: 'ada@example.org',
  billing_address: { street: 'Bahnhofstrasse', house_number: '1', postal_code: '8001', city: 'Zürich', country: 'CH' },
} as const;

/** The contract's raw card fields for one of Adyen's test cards, with the donor's browser. */
export function adyenCard(number: string, holder?: string): Record<string, unknown> {
  return {
    number,
    expiry_month: 3,
    expiry_year: 2030,
    cvv: '737',
    ...(holder ? { cardholder: holder } : {}),
    ...DONOR_BROWSER,
  };
}
