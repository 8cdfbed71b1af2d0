import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, isIP } from 'node:net';
import qs from 'qs';
import Stripe from 'stripe';

/**
 * A server speaking the part of Stripe's REST API the adapter uses, as Stripe documents it, and
 * never more lenient: form-encoded requests with bracketed keys, bearer secret keys,
 * `Stripe-Version`, `Stripe-Account`, `Idempotency-Key` replays, Stripe's object and error shapes
 * and status codes, cursor pagination, search that lags, events for every change it makes, and
 * events signed the way Stripe signs them. Point the service at it with `SVC_STRIPE_API_BASE`; the
 * real Stripe test mode takes its place by configuration. test/stripe-stand-in.test.ts proves
 * each rule with the real SDK and cites where Stripe documents it.
 *
 * Test cards and payment methods behave as in Stripe's test mode: `pm_card_visa` and 4242…
 * succeed, `pm_card_chargeDeclined` and 4000 0000 0000 0002 decline, 4000 0000 0000 9995 declines
 * for insufficient funds, `pm_card_threeDSecure2Required` and 4000 0027 6000 3184 need 3-D Secure,
 * TWINT redirects, SEPA debits process until `settle` decides, and SEPA mandates are active at once.
 *
 * Time is the `clock` option (unix seconds): every `created`, the 24 hours an idempotency key is
 * kept, and the lag of search follow it, so tests move it instead of waiting.
 */
export type Params = Record<string, unknown>;

interface CardBehaviour {
  brand: string;
  last4: string;
  outcome: 'succeed' | 'decline' | 'insufficient_funds' | '3ds';
}

const CARDS: Record<string, CardBehaviour> = {
  '4242424242424242': { brand: 'visa', last4: '4242', outcome: 'succeed' },
  '5555555555554444': { brand: 'mastercard', last4: '4444', outcome: 'succeed' },
  '4000000000000002': { brand: 'visa', last4: '0002', outcome: 'decline' },
  '4000000000009995': { brand: 'visa', last4: '9995', outcome: 'insufficient_funds' },
  '4000002760003184': { brand: 'visa', last4: '3184', outcome: '3ds' },
};

const TEST_PAYMENT_METHODS: Record<string, string> = {
  pm_card_visa: '4242424242424242',
  pm_card_mastercard: '5555555555554444',
  pm_card_chargeDeclined: '4000000000000002',
  pm_card_chargeDeclinedInsufficientFunds: '4000000000009995',
  pm_card_threeDSecure2Required: '4000002760003184',
};

const words = (list: string) => list.split(' ');

const METHOD_TYPES = words('card sepa_debit twint');

/** How Stripe's test cards decline: the decline code and the message. */
const DECLINES = {
  decline: { decline_code: 'generic_decline', message: 'Your card was declined.' },
  insufficient_funds: { decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' },
};

/** SEPA IBAN countries outside the EEA, whose debits need the holder's address (Stripe's SEPA guides). */
const NON_EEA_SEPA_COUNTRIES = new Set(words('AD BL CH GB GG GI IM JE MC NC PF PM SM TF VA WF'));

/**
 * Amounts in Stripe's minor units (https://docs.stripe.com/currencies), where they are not ISO
 * 4217's. #special-cases: ISK "becomes a zero-decimal currency. To maintain backwards
 * compatibility, you must pass in amounts with two decimals. For example, to charge 5 ISK,
 * provide an amount value of 500. The amount value must be evenly divisible by 100", and the same
 * of UGX; anything else is "400 invalid_charge_amount_no_decimal_compatible: Invalid amount.
 * Currency ISK has become effectively zero-decimal and charged amounts must be evenly divisible by
 * 100", for refunds too
 * (https://support.stripe.com/questions/deprecation-of-fractional-isk-charges-and-refunds).
 * #three-decimal: "these API calls require the least-significant (last) digit to be 0"; the error
 * Stripe answers is UNKNOWN (not documented): the stand-in refuses with an invalid_request_error on
 * `amount`. Zero-decimal currencies (JPY, MGA, …) take any whole number: nothing to refuse.
 */
const WHOLE_UNITS_IN_HUNDREDTHS = new Set(words('isk ugx'));
const THREE_DECIMAL = new Set(words('bhd jod kwd omr tnd'));

function checkAmountInCurrency(amount: number, currency: string): void {
  if (WHOLE_UNITS_IN_HUNDREDTHS.has(currency) && amount % 100 !== 0) {
    throw rejected(
      `Invalid amount. Currency ${currency.toUpperCase()} has become effectively zero-decimal and charged amounts must be evenly divisible by 100. See https://stripe.com/docs/currencies#special-cases for more information.`,
      { param: 'amount', code: 'invalid_charge_amount_no_decimal_compatible' },
    );
  }
  if (THREE_DECIMAL.has(currency) && amount % 10 !== 0) {
    throw rejected(
      `Invalid amount. Amounts in ${currency.toUpperCase()} must end in 0. See https://stripe.com/docs/currencies#three-decimal for more information.`,
      { param: 'amount' },
    );
  }
  // "The amount value supports up to eight digits" (docs.stripe.com/currencies#minimum-and-maximum-charge-amounts;
  // twelve for IDR). Stripe's own wording of the error is UNKNOWN here.
  if (amount > (currency === 'idr' ? 999_999_999_999 : 99_999_999)) {
    throw rejected('Amount must be no more than 99999999 (eight digits).', {
      param: 'amount',
      code: 'amount_too_large',
    });
  }
}

/** The API version the SDK pins (stripe-node 23.1.0): a request without `Stripe-Version` gets it. */
const DEFAULT_API_VERSION: string = Stripe.API_VERSION;

/** The versions (their date) from which Stripe behaves differently, per its changelog. */
const SINCE = {
  automaticPaymentMethods: '2023-08-16',
  twintSetupIntents: '2026-05-27',
  sepaAddressCityAndPostalCode: '2026-09-30',
  noPaymentMethodTypes: '2026-09-30',
};

const atLeast = (version: string, since: string) => version.slice(0, 10) >= since;

const IDEMPOTENCY_KEY_LIFETIME = 24 * 60 * 60;

/** The parameters each endpoint accepts; anything else is `parameter_unknown`. */
const ACCEPTS = {
  paymentIntent: words(
    'allowed_payment_method_types amount application_fee_amount automatic_payment_methods capture_method confirm currency customer description error_on_requires_action excluded_payment_method_types expand mandate mandate_data metadata off_session on_behalf_of payment_method payment_method_data payment_method_options payment_method_types receipt_email return_url setup_future_usage statement_descriptor statement_descriptor_suffix transfer_data transfer_group',
  ),
  setupIntent: words(
    'allowed_payment_method_types automatic_payment_methods confirm customer description excluded_payment_method_types expand mandate_data metadata on_behalf_of payment_method payment_method_data payment_method_options payment_method_types return_url usage',
  ),
  refund: words(
    'amount charge expand instructions_email metadata payment_intent reason refund_application_fee reverse_transfer',
  ),
  customer: words('address description email expand metadata name phone preferred_locales'),
  webhookEndpoint: words('api_version connect description enabled_events expand metadata url'),
  webhookEndpointUpdate: words('description disabled enabled_events expand metadata url'),
  cancel: words('cancellation_reason expand'),
};

/** Parameters Stripe takes only with `confirm=true` (its API reference, on each of them). */
const CONFIRM_ONLY = {
  paymentIntent: words('error_on_requires_action mandate_data off_session return_url'),
  setupIntent: words('mandate_data return_url'),
};

export interface RecordedRequest {
  method: string;
  path: string;
  params: Params;
  idempotencyKey?: string;
  stripeAccount?: string;
  apiVersion?: string;
}

/**
 * What goes wrong with a request: `refuse` (it never reaches Stripe), `rate_limit` (429, nothing
 * done), `server_error` (the endpoint began and failed before the work: a 500 kept under the key),
 * `server_error_after_work` (the work is done, the answer is a 500 kept under the key), `drop` (the
 * work is done and kept, the connection closes before the answer).
 */
export type Fault = 'server_error' | 'server_error_after_work' | 'drop' | 'refuse' | 'rate_limit';

export type DisputeStatus =
  | 'warning_needs_response'
  | 'warning_under_review'
  | 'warning_closed'
  | 'needs_response'
  | 'under_review'
  | 'won'
  | 'lost';

export interface StripeStandInOptions {
  /** Holds every answer that long, as Stripe's own processing would; 0 in the tests. */
  latencyMs?: number;
  /** Now, in unix seconds; defaults to the wall clock. Tests pass the service's clock. */
  clock?: () => number;
  /** How long a change takes to reach search (Stripe: under a minute normally). */
  searchLagSeconds?: number;
}

export interface StripeStandIn {
  url: string;
  secretKey: string;
  webhookSecret: string;
  /** Requests that reached Stripe (a refused one never did), in order. */
  requests: RecordedRequest[];
  intents: Map<string, Params>;
  setupIntents: Map<string, Params>;
  refunds: Map<string, Params>;
  customers: Map<string, Params>;
  disputes: Map<string, Params>;
  mandates: Map<string, Params>;
  webhookEndpoints: Map<string, Params>;
  /** Every event Stripe would have created, oldest first. */
  events: Params[];
  /** The next `count` requests meet `fault`. */
  failNext(count: number, fault: Fault): void;
  /** The next `count` requests for which `matches` holds meet `fault`. */
  failNextMatching(matches: (request: RecordedRequest) => boolean, fault: Fault, count?: number): void;
  /** Faults armed and not yet met are dropped (a test's plan ends). */
  clearFaults(): void;
  /** The donor's decision on the page a PaymentIntent redirected to (3-D Secure, TWINT). */
  decide(intentId: string, approved: boolean): void;
  /** The donor's decision on the page a SetupIntent redirected to. */
  decideSetup(setupIntentId: string, approved: boolean): void;
  /** A processing SEPA debit settles. */
  settle(intentId: string, succeeded: boolean): void;
  /** A refund Stripe accepted fails later. */
  failRefund(refundId: string): void;
  /** A pending refund (SEPA) reaches the donor. */
  settleRefund(refundId: string): void;
  /** A refund made in Stripe's dashboard (no metadata of ours); the charge object of its event. */
  dashboardRefund(intentId: string, amount: number, status?: 'pending' | 'succeeded'): Params;
  /** Opens a dispute on an intent's charge; the dispute object. */
  dispute(intentId: string): Params;
  /** The disputed amount leaves the balance; the status stays. */
  withdrawDisputeFunds(disputeId: string): Params;
  /** Withdrawn funds come back. */
  reinstateDisputeFunds(disputeId: string): Params;
  updateDispute(disputeId: string, status: DisputeStatus): Params;
  closeDispute(disputeId: string, status: 'won' | 'lost'): Params;
  /** The donor's bank returns a settled SEPA debit: a lost dispute, its funds withdrawn. */
  sepaReturn(intentId: string): Params;
  /** The donor revokes a mandate at their bank. */
  deactivateMandate(mandateId: string): Params;
  /** The secret key is rolled away: every later request is unauthenticated. */
  revokeKey(): void;
  /** A connected account revokes the platform's access. */
  disconnectAccount(account: string): void;
  /** A signed event as Stripe would deliver it: the raw body and its `Stripe-Signature`. */
  event(
    type: string,
    object: Params,
    options?: {
      id?: string;
      createdAt?: number;
      /** The connected account it comes from: by default the object's owner, as Stripe sets it. */
      account?: string;
      livemode?: boolean;
    },
  ): { body: string; signature: string };
  /** A recorded event (from `events` or `GET /v1/events`), signed for delivery now. */
  signed(event: Params): { body: string; signature: string };
  /** Intents created (not replayed), i.e. charges Stripe would have made. */
  charges(): Params[];
  close(): Promise<void>;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/**
 * A Stripe error answer. `kept` says whether the idempotency layer keeps it: Stripe keeps the
 * result of a request once its endpoint began executing, and not one that failed validation of
 * its parameters before that (https://docs.stripe.com/api/idempotent_requests).
 */
class StripeProblem extends Error {
  constructor(
    readonly status: number,
    readonly error: Params,
    readonly kept: boolean,
  ) {
    super(String(error.message));
  }
}

/** The request itself is wrong (its parameters, or a rule they break): nothing ran, nothing kept. */
function rejected(message: string, detail: { param?: string; code?: string } = {}, status = 400): StripeProblem {
  return new StripeProblem(status, { type: 'invalid_request_error', ...detail, message }, false);
}

/** The endpoint ran and answered with an error: kept under the idempotency key. */
function failed(status: number, error: Params): StripeProblem {
  return new StripeProblem(status, error, true);
}

const unknownParameter = (name: string) =>
  rejected(`Received unknown parameter: ${name}`, { param: name, code: 'parameter_unknown' });
const missingParameter = (name: string) =>
  rejected(`Missing required param: ${name}.`, { param: name, code: 'parameter_missing' });
const exclusiveParameters = (names: string[]) =>
  rejected(`You may only specify one of these parameters: ${names.join(', ')}.`, {
    param: names[0] as string,
    code: 'parameters_exclusive',
  });
const noSuch = (kind: string, objectId: string, param: string, status = 400) =>
  failed(status, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    param,
    message: `No such ${kind}: '${objectId}'`,
  });

function integer(value: unknown, param: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^-?\d+$/.test(value)) {
    throw rejected(`Invalid integer: ${String(value)}`, { param, code: 'parameter_invalid_integer' });
  }
  return Number(value);
}

const asParams = (value: unknown): Params => (typeof value === 'object' && value !== null ? (value as Params) : {});
const asList = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);
const isTrue = (value: unknown) => value === 'true';

function rejectUnknown(params: Params, accepted: readonly string[]): void {
  const unknown = Object.keys(params).find((name) => !accepted.includes(name));
  if (unknown) throw unknownParameter(unknown);
}

/** `created` as Stripe's list endpoints filter it: an exact time, or `gt`/`gte`/`lt`/`lte` bounds. */
function createdWithin(filter: unknown, created: number): boolean {
  if (filter === undefined) return true;
  if (typeof filter === 'string') return created === integer(filter, 'created');
  const bounds = asParams(filter);
  const bound = (name: string) => integer(bounds[name], `created[${name}]`);
  const [gt, gte, lt, lte] = [bound('gt'), bound('gte'), bound('lt'), bound('lte')];
  return (
    (gt === undefined || created > gt) &&
    (gte === undefined || created >= gte) &&
    (lt === undefined || created < lt) &&
    (lte === undefined || created <= lte)
  );
}

/** `limit`: 1 to 100, 10 when absent (https://docs.stripe.com/api/pagination). */
function pageSize(value: unknown): number {
  const limit = integer(value, 'limit') ?? 10;
  if (limit < 1 || limit > 100) {
    throw rejected(`Invalid limit: must be between 1 and 100 (got ${limit})`, { param: 'limit' });
  }
  return limit;
}

/**
 * One page of a list, newest first, as Stripe's cursor pagination answers it: `starting_after`
 * continues to older objects, `ending_before` to newer ones, `has_more` says whether there are more
 * in that direction.
 */
function listPage(newestFirst: Params[], params: Params, url: string, kind: string): Params {
  const limit = pageSize(params.limit);
  const after = params.starting_after as string | undefined;
  const before = params.ending_before as string | undefined;
  if (after && before) throw exclusiveParameters(['ending_before', 'starting_after']);
  const at = (cursor: string, param: string) => {
    const index = newestFirst.findIndex((object) => object.id === cursor);
    if (index < 0) throw noSuch(kind, cursor, param);
    return index;
  };
  if (before) {
    const end = at(before, 'ending_before');
    const start = Math.max(0, end - limit);
    return { object: 'list', data: newestFirst.slice(start, end), has_more: start > 0, url };
  }
  const start = after ? at(after, 'starting_after') + 1 : 0;
  return {
    object: 'list',
    data: newestFirst.slice(start, start + limit),
    has_more: newestFirst.length > start + limit,
    url,
  };
}

/** A search query of `metadata['key']:'value'` clauses joined by AND; the pairs, or undefined. */
function metadataClauses(query: string): Array<[string, string]> | undefined {
  const clauses = query.trim().split(/\s+AND\s+/);
  const pairs = clauses.map((clause) => /^metadata\[(['"])(.+?)\1\]:(['"])(.*)\3$/.exec(clause));
  if (pairs.some((pair) => !pair)) return undefined;
  return pairs.map((pair) => [pair?.[2] as string, pair?.[4] as string]);
}

const maskKey = (key: string) => `${key.slice(0, 8)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}`;

interface Context {
  /** The `Stripe-Account` acted for; '' for the platform itself. */
  account: string;
  version: string;
}

interface Route {
  method: 'GET' | 'POST';
  path: RegExp;
  /** A create or update endpoint's parameters; others are refused as unknown. */
  accepts?: readonly string[];
  /** Checks of the request alone, before the endpoint begins (errors are not kept). */
  validate?: (params: Params, context: Context) => void;
  /** The endpoint's work; its answer (errors included) is kept under the idempotency key. */
  run: (params: Params, context: Context, ids: string[]) => Params;
}

interface Reply {
  status: number;
  body: string;
  replayed?: boolean;
}

interface Outcome extends Reply {
  kept: boolean;
}

interface StoredAnswer extends Reply {
  fingerprint: string;
  savedAt: number;
}

export async function startStripeStandIn(options: StripeStandInOptions = {}): Promise<StripeStandIn> {
  const clock = options.clock ?? (() => Math.floor(Date.now() / 1000));
  const searchLag = options.searchLagSeconds ?? 60;
  const secretKey = `sk_test_${randomBytes(12).toString('hex')}`;
  const webhookSecret = `whsec_${randomBytes(16).toString('hex')}`;
  const requests: RecordedRequest[] = [];
  const intents = new Map<string, Params>();
  const setupIntents = new Map<string, Params>();
  const refunds = new Map<string, Params>();
  const customers = new Map<string, Params>();
  const disputes = new Map<string, Params>();
  const mandates = new Map<string, Params>();
  const webhookEndpoints = new Map<string, Params>();
  const methods = new Map<string, Params>();
  const events: Params[] = [];
  /** Which account each object belongs to ('' for the platform): others do not see it. */
  const owners = new Map<string, string>();
  const cardNumbers = new Map<string, string>();
  const mandateOfMethod = new Map<string, string>();
  /** The `mandate_data` of a TWINT SetupIntent, for its mandate once the donor approves. */
  const setupMandateData = new Map<string, Params>();
  /** Each PaymentIntent as it was after each change, for search (which sees the past). */
  const intentHistory = new Map<string, Array<{ at: number; intent: Params }>>();
  const answers = new Map<string, StoredAnswer>();
  const created: Params[] = [];
  const faults: Array<{ fault: Fault; matches: (request: RecordedRequest) => boolean }> = [];
  const disconnected = new Set<string>();
  let keyRevoked = false;
  let current: { requestId: string; idempotencyKey: string | undefined } | undefined;
  let baseUrl = '';

  function store(map: Map<string, Params>, object: Params, owner: string): Params {
    map.set(String(object.id), object);
    owners.set(String(object.id), owner);
    return object;
  }

  const ownerOf = (object: Params) => owners.get(String(object.id)) ?? '';

  function owned(map: Map<string, Params>, objectId: unknown, context: Context): Params | undefined {
    const object = map.get(String(objectId));
    return object && ownerOf(object) === context.account ? object : undefined;
  }

  const ownedNewestFirst = (objects: Iterable<Params>, context: Context) =>
    [...objects].filter((object) => ownerOf(object) === context.account).reverse();

  /** Records the event Stripe creates for a change (`request` is set when an API call caused it). */
  function emit(type: string, object: Params, owner = ownerOf(object)): void {
    const snapshot = structuredClone(object);
    const event: Params = {
      id: id('evt'),
      object: 'event',
      api_version: DEFAULT_API_VERSION,
      created: clock(),
      data: { object: snapshot },
      livemode: false,
      pending_webhooks: 1,
      request: { id: current?.requestId ?? null, idempotency_key: current?.idempotencyKey ?? null },
      type,
      ...(owner ? { account: owner } : {}),
    };
    events.push(event);
    owners.set(String(event.id), owner);
    if (object.object === 'payment_intent') {
      const history = intentHistory.get(String(object.id)) ?? [];
      history.push({ at: clock(), intent: snapshot });
      intentHistory.set(String(object.id), history);
    }
  }

  function expandView(object: Params, expand: unknown): Params {
    const method = methods.get(String(object.payment_method));
    return asList(expand).includes('payment_method') && method ? { ...object, payment_method: method } : object;
  }

  // Payment methods and mandates.

  /** A payment method of `type` from its details and the rest of `payment_method_data` (billing details, metadata). */
  function newMethod(type: string, details: Params, data: Params, owner: string): Params {
    const billing = asParams(data.billing_details);
    return store(
      methods,
      {
        id: id('pm'),
        object: 'payment_method',
        type,
        [type]: details,
        billing_details: {
          address: billing.address ?? null,
          email: billing.email ?? null,
          name: billing.name ?? null,
          phone: billing.phone ?? null,
        },
        created: clock(),
        customer: null,
        livemode: false,
        metadata: data.metadata ?? {},
      },
      owner,
    );
  }

  function cardMethod(number: string, data: Params, owner: string, month = 12, year = 2034): Params {
    const behaviour = CARDS[number] ?? { brand: 'visa', last4: number.slice(-4), outcome: 'succeed' as const };
    const method = newMethod(
      'card',
      {
        brand: behaviour.brand,
        country: 'US',
        exp_month: month,
        exp_year: year,
        fingerprint: createHash('sha256').update(number).digest('base64url').slice(0, 16),
        funding: 'credit',
        last4: behaviour.last4,
      },
      data,
      owner,
    );
    cardNumbers.set(String(method.id), number);
    return method;
  }

  /** Checks `payment_method_data` before anything runs: its type and what that type requires. */
  function validateMethodData(data: Params, context: Context): void {
    if (!METHOD_TYPES.includes(String(data.type))) {
      throw rejected(`Invalid payment_method_data[type]: must be one of ${METHOD_TYPES.join(', ')}`, {
        param: 'payment_method_data[type]',
      });
    }
    if (data.type === 'card' && !asParams(data.card).number) {
      throw missingParameter('payment_method_data[card][number]');
    }
    if (data.type === 'sepa_debit') validateSepaDebit(data, context);
  }

  /**
   * SEPA Direct Debit needs the holder's name and email, and for IBANs of SEPA countries outside
   * the EEA their address: country and line1, and since 2026-09-30 also city and postal code.
   */
  function validateSepaDebit(data: Params, context: Context): void {
    const billing = asParams(data.billing_details);
    for (const field of ['name', 'email']) {
      if (!billing[field]) throw missingParameter(`payment_method_data[billing_details][${field}]`);
    }
    const iban = String(asParams(data.sepa_debit).iban ?? '').replace(/\s/g, '');
    if (!iban) throw missingParameter('payment_method_data[sepa_debit][iban]');
    if (!NON_EEA_SEPA_COUNTRIES.has(iban.slice(0, 2).toUpperCase())) return;
    const address = asParams(billing.address);
    const required = atLeast(context.version, SINCE.sepaAddressCityAndPostalCode)
      ? ['country', 'line1', 'city', 'postal_code']
      : ['country', 'line1'];
    const absent = required.find((field) => !address[field]);
    if (absent) {
      throw rejected(
        `Missing billing_details[address][${absent}]: SEPA Direct Debit payment methods with an IBAN from ${iban.slice(0, 2)} need the account holder's address (${required.join(', ')}).`,
        {
          param: `payment_method_data[billing_details][address][${absent}]`,
          code: 'payment_method_billing_details_address_missing',
        },
      );
    }
  }

  /** `mandate_data` as given: an online acceptance needs the customer's IP address and user agent. */
  function validateMandateData(params: Params): void {
    if (params.mandate_data === undefined) return;
    const acceptance = asParams(asParams(params.mandate_data).customer_acceptance);
    if (!acceptance.type) throw missingParameter('mandate_data[customer_acceptance][type]');
    if (acceptance.type !== 'online') return;
    const online = asParams(acceptance.online);
    for (const field of ['ip_address', 'user_agent']) {
      if (!online[field]) throw missingParameter(`mandate_data[customer_acceptance][online][${field}]`);
    }
    if (!isIP(String(online.ip_address))) {
      throw rejected('Invalid IP address', { param: 'mandate_data[customer_acceptance][online][ip_address]' });
    }
  }

  /** The payment method a request names or describes, created when described; undefined when none. */
  function methodFrom(params: Params, context: Context): Params | undefined {
    const given = params.payment_method as string | undefined;
    if (given) {
      const saved = owned(methods, given, context);
      if (saved) return saved;
      const number = TEST_PAYMENT_METHODS[given];
      if (!number) throw noSuch('PaymentMethod', given, 'payment_method');
      return cardMethod(number, {}, context.account);
    }
    if (params.payment_method_data === undefined) return undefined;
    const data = asParams(params.payment_method_data);
    if (data.type === 'card') {
      const card = asParams(data.card);
      return cardMethod(String(card.number), data, context.account, Number(card.exp_month), Number(card.exp_year));
    }
    if (data.type === 'twint') return newMethod('twint', {}, data, context.account);
    const iban = String(asParams(data.sepa_debit).iban).replace(/\s/g, '').toUpperCase();
    return newMethod(
      'sepa_debit',
      {
        bank_code: iban.slice(4, 9),
        branch_code: '',
        country: iban.slice(0, 2),
        fingerprint: createHash('sha256').update(iban).digest('base64url').slice(0, 16),
        generated_from: null,
        last4: iban.slice(-4),
      },
      data,
      context.account,
    );
  }

  const cardOutcome = (method: Params) =>
    method.type === 'card' ? (CARDS[cardNumbers.get(String(method.id)) ?? '']?.outcome ?? 'succeed') : undefined;

  const redirects = (method: Params) => method.type === 'twint' || cardOutcome(method) === '3ds';

  function createMandate(method: Params, params: Params, owner: string): Params {
    const acceptance = asParams(asParams(params.mandate_data).customer_acceptance);
    const type = String(acceptance.type ?? 'online');
    const online = asParams(acceptance.online);
    const mandate = store(
      mandates,
      {
        id: id('mandate'),
        object: 'mandate',
        customer_acceptance: {
          accepted_at: clock(),
          type,
          ...(type === 'online'
            ? { online: { ip_address: online.ip_address ?? null, user_agent: online.user_agent ?? null } }
            : { offline: {} }),
        },
        livemode: false,
        multi_use: {},
        payment_method: method.id,
        payment_method_details: {
          type: method.type,
          [String(method.type)]:
            method.type === 'sepa_debit'
              ? { reference: randomBytes(8).toString('hex').toUpperCase(), url: `${baseUrl}/mandates/${method.id}` }
              : {},
        },
        status: 'active',
        type: 'multi_use',
      },
      owner,
    );
    mandateOfMethod.set(String(method.id), String(mandate.id));
    return mandate;
  }

  /**
   * The mandate a SEPA debit runs under: the method's own (it must still be active), else a new
   * one from this request's `mandate_data`, which is then required.
   */
  function sepaMandate(method: Params, params: Params, owner: string): Params {
    const existing = mandates.get(mandateOfMethod.get(String(method.id)) ?? '');
    if (existing && existing.status !== 'active') {
      throw failed(400, {
        type: 'invalid_request_error',
        code: 'payment_intent_mandate_invalid',
        param: 'payment_method',
        message: `The mandate ${existing.id} of this PaymentMethod is ${existing.status} and can no longer be used.`,
      });
    }
    if (existing) return existing;
    if (params.mandate_data === undefined) {
      throw failed(400, {
        type: 'invalid_request_error',
        code: 'parameter_missing',
        param: 'mandate_data',
        message: 'Missing required param: mandate_data.',
      });
    }
    return createMandate(method, params, owner);
  }

  function attach(method: Params, customer: unknown): void {
    if (customer) method.customer = customer;
  }

  // Confirmation rules shared by PaymentIntents and SetupIntents.

  /**
   * Since 2023-08-16 automatic payment methods are on unless the request lists its payment method
   * types; `payment_method_types` is gone since 2026-09-30, and `allowed_payment_method_types`
   * excludes the other ways of choosing them.
   */
  function validateMethodChoice(params: Params, context: Context): void {
    if (params.payment_method_types !== undefined && atLeast(context.version, SINCE.noPaymentMethodTypes)) {
      throw rejected(
        `The payment_method_types parameter is no longer supported on API version ${context.version}. Use automatic payment methods, excluded_payment_method_types or allowed_payment_method_types instead.`,
        { param: 'payment_method_types', code: 'payment_method_types_no_longer_supported' },
      );
    }
    if (params.allowed_payment_method_types !== undefined) {
      const other = ['automatic_payment_methods', 'excluded_payment_method_types', 'payment_method_types'].find(
        (name) => params[name] !== undefined,
      );
      if (other) throw exclusiveParameters(['allowed_payment_method_types', other]);
    }
    for (const name of ['payment_method_types', 'allowed_payment_method_types']) {
      const unknown = asList(params[name]).find((type) => !METHOD_TYPES.includes(type));
      if (unknown) throw rejected(`The payment method type "${unknown}" is invalid.`, { param: name });
    }
  }

  /** `automatic_payment_methods` as the intent records it (null when its types are listed). */
  function automaticPaymentMethods(params: Params, context: Context): Params | null {
    const given = asParams(params.automatic_payment_methods);
    if (given.enabled === 'false') return null;
    const listed = params.payment_method_types !== undefined || params.allowed_payment_method_types !== undefined;
    if (given.enabled !== 'true' && (listed || !atLeast(context.version, SINCE.automaticPaymentMethods))) return null;
    return { enabled: true, allow_redirects: given.allow_redirects ?? 'always' };
  }

  /**
   * What PaymentIntents and SetupIntents check of the request alone: how payment methods are
   * chosen, the described payment method, confirm-only parameters, and `return_url`.
   */
  function validateIntentRequest(params: Params, context: Context, kind: 'Payment Intent' | 'Setup Intent'): void {
    validateMethodChoice(params, context);
    if (params.payment_method_data !== undefined) validateMethodData(asParams(params.payment_method_data), context);
    validateMandateData(params);
    const confirm = isTrue(params.confirm);
    const onlyWithConfirm = kind === 'Payment Intent' ? CONFIRM_ONLY.paymentIntent : CONFIRM_ONLY.setupIntent;
    const premature = onlyWithConfirm.find((name) => params[name] !== undefined);
    if (!confirm && premature) {
      throw rejected(`You can only pass \`${premature}\` when \`confirm\` is \`true\`.`, { param: premature });
    }
    if (!confirm) return;
    if (params.payment_method === undefined && params.payment_method_data === undefined) {
      throw missingParameter('payment_method');
    }
    const automatic = automaticPaymentMethods(params, context);
    const offSession = kind === 'Payment Intent' && isTrue(params.off_session);
    if (automatic && automatic.allow_redirects !== 'never' && !params.return_url && !offSession) {
      throw rejected(
        `A \`return_url\` must be specified because this ${kind} is configured to automatically accept the payment methods enabled in the Dashboard, some of which may require a full page redirect to succeed. If you do not want to accept redirect-based payment methods, set \`automatic_payment_methods[enabled]\` to \`true\` and \`automatic_payment_methods[allow_redirects]\` to \`never\` when creating Setup Intents and Payment Intents.`,
      );
    }
  }

  const listedTypes = (params: Params) => asList(params.payment_method_types ?? params.allowed_payment_method_types);

  /** The payment method types an intent lists, or the method's own type. */
  function methodTypes(params: Params, method: Params | undefined): string[] {
    const listed = listedTypes(params);
    return listed.length ? listed : [String(method?.type ?? 'card')];
  }

  function checkMethodAllowed(params: Params, method: Params, kind: string): void {
    const listed = listedTypes(params);
    if (listed.length && !listed.includes(String(method.type))) {
      throw failed(400, {
        type: 'invalid_request_error',
        code: `${kind}_incompatible_payment_method`,
        param: 'payment_method',
        message: `The PaymentMethod provided (${method.type}) is not allowed for this ${kind === 'payment_intent' ? 'PaymentIntent' : 'SetupIntent'}. Please attach a PaymentMethod of one of the following types: ${listed.join(', ')}.`,
      });
    }
  }

  function customerFor(params: Params, context: Context): string | null {
    if (params.customer === undefined) return null;
    if (!owned(customers, params.customer, context)) throw noSuch('customer', String(params.customer), 'customer');
    return String(params.customer);
  }

  function redirect(object: Params, returnUrl: unknown): void {
    object.status = 'requires_action';
    object.next_action = {
      type: 'redirect_to_url',
      redirect_to_url: { url: `${baseUrl}/authorize/${object.id}`, return_url: returnUrl ?? null },
    };
  }

  // PaymentIntents.

  function validatePaymentIntent(params: Params, context: Context): void {
    if (params.amount === undefined) throw missingParameter('amount');
    if (params.currency === undefined) throw missingParameter('currency');
    const amount = integer(params.amount, 'amount') as number;
    if (amount < 1) throw rejected('This value must be greater than or equal to 1.', { param: 'amount' });
    checkAmountInCurrency(amount, String(params.currency).toLowerCase());
    validateIntentRequest(params, context, 'Payment Intent');
    const fee = integer(params.application_fee_amount, 'application_fee_amount');
    const destination = asParams(params.transfer_data).destination;
    if (fee !== undefined && !context.account && !destination) {
      throw rejected(
        'Can only apply an application_fee_amount when the PaymentIntent is attempting a direct payment (using an OAuth key or Stripe-Account header) or destination payment (using `transfer_data[destination]`).',
        { param: 'application_fee_amount' },
      );
    }
  }

  function createPaymentIntent(params: Params, context: Context): Params {
    const customer = customerFor(params, context);
    const method = methodFrom(params, context);
    const currency = String(params.currency).toLowerCase();
    if (method) checkMethodAllowed(params, method, 'payment_intent');
    if (method?.type === 'sepa_debit' && currency !== 'eur') {
      throw failed(400, {
        type: 'invalid_request_error',
        param: 'currency',
        message: `The currency provided (${currency}) is invalid for one or more payment method types on this PaymentIntent. The payment method type sepa_debit only supports the following currencies: eur. Either correct the provided currency, or use a different PaymentIntent to accept this payment method type.`,
      });
    }
    const confirm = isTrue(params.confirm);
    const mandate = confirm && method?.type === 'sepa_debit' ? sepaMandate(method, params, context.account) : undefined;
    const intentId = id('pi');
    const intent = store(
      intents,
      {
        id: intentId,
        object: 'payment_intent',
        amount: Number(params.amount),
        amount_received: 0,
        application_fee_amount:
          params.application_fee_amount === undefined ? null : Number(params.application_fee_amount),
        automatic_payment_methods: automaticPaymentMethods(params, context),
        allowed_payment_method_types: params.allowed_payment_method_types ?? null,
        cancellation_reason: null,
        capture_method: params.capture_method ?? 'automatic',
        client_secret: `${intentId}_secret_${randomBytes(8).toString('hex')}`,
        confirmation_method: 'automatic',
        created: clock(),
        currency,
        customer,
        description: params.description ?? null,
        last_payment_error: null,
        latest_charge: null,
        livemode: false,
        metadata: params.metadata ?? {},
        next_action: null,
        on_behalf_of: params.on_behalf_of ?? null,
        payment_method: method?.id ?? null,
        payment_method_types: methodTypes(params, method),
        receipt_email: params.receipt_email ?? null,
        return_url: params.return_url ?? null,
        setup_future_usage: params.setup_future_usage ?? null,
        statement_descriptor_suffix: params.statement_descriptor_suffix ?? null,
        status: method ? 'requires_confirmation' : 'requires_payment_method',
        transfer_data: params.transfer_data ?? null,
      },
      context.account,
    );
    created.push(intent);
    emit('payment_intent.created', intent);
    if (!confirm || !method) return expandView(intent, params.expand);
    const behaviour = cardOutcome(method);
    if (mandate) {
      intent.status = 'processing';
      intent.latest_charge = id('py');
      savedFor(intent, method);
      emit('payment_intent.processing', intent);
    } else if (redirects(method)) {
      if (isTrue(params.off_session)) {
        throw declineIntent(
          intent,
          'authentication_required',
          'authentication_required',
          'Your card was declined. This transaction requires authentication.',
        );
      }
      redirect(intent, intent.return_url);
      emit('payment_intent.requires_action', intent);
    } else if (behaviour === 'decline' || behaviour === 'insufficient_funds') {
      const { decline_code, message } = DECLINES[behaviour];
      throw declineIntent(intent, 'card_declined', decline_code, message);
    } else {
      succeed(intent);
    }
    return expandView(intent, params.expand);
  }

  /** With `setup_future_usage` and a customer, the method is attached to the customer. */
  function savedFor(intent: Params, method: Params | undefined): void {
    if (method && intent.setup_future_usage) attach(method, intent.customer);
  }

  function succeed(intent: Params): void {
    intent.status = 'succeeded';
    intent.amount_received = intent.amount;
    intent.latest_charge = intent.latest_charge ?? id('ch');
    intent.next_action = null;
    savedFor(intent, methods.get(String(intent.payment_method)));
    emit('payment_intent.succeeded', intent);
  }

  function failIntent(intent: Params, error: Params): void {
    intent.status = 'requires_payment_method';
    intent.next_action = null;
    intent.last_payment_error = error;
    emit('payment_intent.payment_failed', intent);
  }

  /** A decline: the intent needs another method, and Stripe answers 402 with the intent. */
  function declineIntent(intent: Params, code: string, declineCode: string, message: string): StripeProblem {
    const error = { type: 'card_error', code, decline_code: declineCode, message };
    failIntent(intent, { ...error, payment_method: methods.get(String(intent.payment_method)) ?? null });
    return failed(402, { ...error, payment_intent: expandView(intent, ['payment_method']) });
  }

  function cancelPaymentIntent(params: Params, context: Context, [intentId]: string[]): Params {
    const intent = owned(intents, intentId, context);
    if (!intent) throw noSuch('payment_intent', String(intentId), 'intent', 404);
    const cancellable = ['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action'];
    if (!cancellable.includes(String(intent.status))) {
      throw failed(400, {
        type: 'invalid_request_error',
        code: 'payment_intent_unexpected_state',
        message: `You cannot cancel this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be canceled: ${cancellable.join(', ')}.`,
      });
    }
    intent.status = 'canceled';
    intent.cancellation_reason = params.cancellation_reason ?? null;
    intent.next_action = null;
    emit('payment_intent.canceled', intent);
    return expandView(intent, params.expand);
  }

  /**
   * PaymentIntents as search sees them: each as it was `searchLag` seconds ago, and only those that
   * existed then.
   */
  function searchPaymentIntents(params: Params, context: Context): Params {
    if (params.query === undefined) throw missingParameter('query');
    const clauses = metadataClauses(String(params.query));
    if (!clauses) {
      throw rejected(`The stand-in searches metadata['key']:'value' clauses only: ${params.query}`, { param: 'query' });
    }
    const limit = pageSize(params.limit);
    const offset = params.page === undefined ? 0 : Number(Buffer.from(String(params.page), 'base64url').toString());
    if (!Number.isInteger(offset) || offset < 0) throw rejected('Invalid page', { param: 'page' });
    const visibleAt = clock() - searchLag;
    const found = ownedNewestFirst(intents.values(), context)
      .map((intent) => intentHistory.get(String(intent.id))?.findLast((entry) => entry.at <= visibleAt)?.intent)
      .filter((intent): intent is Params => intent !== undefined)
      .filter((intent) => clauses.every(([key, value]) => asParams(intent.metadata)[key] === value));
    const hasMore = found.length > offset + limit;
    return {
      object: 'search_result',
      data: found.slice(offset, offset + limit),
      has_more: hasMore,
      next_page: hasMore ? Buffer.from(String(offset + limit)).toString('base64url') : null,
      url: '/v1/payment_intents/search',
    };
  }

  // SetupIntents.

  function validateSetupIntent(params: Params, context: Context): void {
    if (params.usage !== undefined && !['on_session', 'off_session'].includes(String(params.usage))) {
      throw rejected('Invalid usage: must be one of on_session or off_session', { param: 'usage' });
    }
    validateIntentRequest(params, context, 'Setup Intent');
  }

  function createSetupIntent(params: Params, context: Context): Params {
    const customer = customerFor(params, context);
    const method = methodFrom(params, context);
    if (method) checkMethodAllowed(params, method, 'setup_intent');
    if (method?.type === 'twint' && !atLeast(context.version, SINCE.twintSetupIntents)) {
      throw failed(400, {
        type: 'invalid_request_error',
        param: 'payment_method_data[type]',
        message:
          'The payment method type "twint" is invalid. See https://stripe.com/docs/api/setup_intents/create#create_setup_intent-payment_method_types for the full list of supported payment method types.',
      });
    }
    const confirm = isTrue(params.confirm);
    const mandate = confirm && method?.type === 'sepa_debit' ? sepaMandate(method, params, context.account) : undefined;
    const setupId = id('seti');
    const setup = store(
      setupIntents,
      {
        id: setupId,
        object: 'setup_intent',
        automatic_payment_methods: automaticPaymentMethods(params, context),
        cancellation_reason: null,
        client_secret: `${setupId}_secret_${randomBytes(8).toString('hex')}`,
        created: clock(),
        customer,
        description: params.description ?? null,
        last_setup_error: null,
        latest_attempt: null,
        livemode: false,
        mandate: mandate?.id ?? null,
        metadata: params.metadata ?? {},
        next_action: null,
        payment_method: method?.id ?? null,
        payment_method_types: methodTypes(params, method),
        status: method ? 'requires_confirmation' : 'requires_payment_method',
        usage: params.usage ?? 'off_session',
      },
      context.account,
    );
    emit('setup_intent.created', setup);
    if (!confirm || !method) return expandView(setup, params.expand);
    const behaviour = cardOutcome(method);
    if (redirects(method)) {
      redirect(setup, params.return_url);
      if (method.type === 'twint') setupMandateData.set(setupId, params);
      emit('setup_intent.requires_action', setup);
    } else if (behaviour === 'decline' || behaviour === 'insufficient_funds') {
      const error = { type: 'card_error', code: 'card_declined', ...DECLINES[behaviour] };
      failSetup(setup, error);
      throw failed(402, { ...error, setup_intent: expandView(setup, params.expand) });
    } else {
      succeedSetup(setup);
    }
    return expandView(setup, params.expand);
  }

  function succeedSetup(setup: Params): void {
    const method = methods.get(String(setup.payment_method)) as Params;
    if (method.type === 'twint') {
      setup.mandate = createMandate(method, setupMandateData.get(String(setup.id)) ?? {}, ownerOf(setup)).id;
    }
    setup.status = 'succeeded';
    setup.next_action = null;
    attach(method, setup.customer);
    emit('setup_intent.succeeded', setup);
  }

  function failSetup(setup: Params, error: Params): void {
    setup.status = 'requires_payment_method';
    setup.next_action = null;
    setup.last_setup_error = error;
    emit('setup_intent.setup_failed', setup);
  }

  function cancelSetupIntent(params: Params, context: Context, [setupId]: string[]): Params {
    const setup = owned(setupIntents, setupId, context);
    if (!setup) throw noSuch('setup_intent', String(setupId), 'intent', 404);
    if (['succeeded', 'canceled', 'processing'].includes(String(setup.status))) {
      throw failed(400, {
        type: 'invalid_request_error',
        code: 'setup_intent_unexpected_state',
        message: `You cannot cancel this SetupIntent because it has a status of ${setup.status}.`,
      });
    }
    setup.status = 'canceled';
    setup.cancellation_reason = params.cancellation_reason ?? null;
    setup.next_action = null;
    emit('setup_intent.canceled', setup);
    return expandView(setup, params.expand);
  }

  // Refunds and the charge they refund.

  const liveRefunds = (intent: Params) =>
    [...refunds.values()].filter(
      (refund) => refund.payment_intent === intent.id && !['failed', 'canceled'].includes(String(refund.status)),
    );

  const disputeOf = (intent: Params) => [...disputes.values()].find((dispute) => dispute.payment_intent === intent.id);

  function chargeOf(intent: Params): Params {
    const refunded = liveRefunds(intent).reduce((sum, refund) => sum + Number(refund.amount), 0);
    return {
      id: intent.latest_charge,
      object: 'charge',
      amount: intent.amount,
      amount_refunded: refunded,
      currency: intent.currency,
      disputed: disputeOf(intent) !== undefined,
      payment_intent: intent.id,
      refunded: refunded >= Number(intent.amount),
      status: intent.status === 'succeeded' ? 'succeeded' : 'pending',
    };
  }

  function makeRefund(intent: Params, amount: number, params: Params, status: string): Params {
    const refund = store(
      refunds,
      {
        id: id('re'),
        object: 'refund',
        amount,
        balance_transaction: null,
        charge: intent.latest_charge,
        created: clock(),
        currency: intent.currency,
        failure_reason: null,
        metadata: params.metadata ?? {},
        payment_intent: intent.id,
        reason: params.reason ?? null,
        status,
      },
      ownerOf(intent),
    );
    emit('refund.created', refund);
    emit('charge.refunded', chargeOf(intent), ownerOf(intent));
    return refund;
  }

  function setRefundStatus(refund: Params, status: string, failureReason: string | null = null): void {
    refund.status = status;
    refund.failure_reason = failureReason;
    emit('refund.updated', refund);
    if (status === 'failed') emit('refund.failed', refund);
  }

  const isSepa = (intent: Params) => methods.get(String(intent.payment_method))?.type === 'sepa_debit';

  function validateRefund(params: Params): void {
    if (params.payment_intent === undefined && params.charge === undefined) throw missingParameter('payment_intent');
    if (params.payment_intent !== undefined && params.charge !== undefined) {
      throw exclusiveParameters(['charge', 'payment_intent']);
    }
    const amount = integer(params.amount, 'amount');
    if (amount !== undefined && amount < 1) {
      throw rejected('This value must be greater than or equal to 1.', { param: 'amount' });
    }
  }

  /**
   * A refund of a succeeded intent only (Stripe's Sources-era SEPA guide let a refund of a pending
   * debit wait for it; the current guides do not say, so the stand-in is the stricter), never of a
   * disputed charge nor beyond what is left. SEPA refunds stay pending until they reach the donor.
   */
  function createRefund(params: Params, context: Context): Params {
    const intent = params.payment_intent
      ? owned(intents, params.payment_intent, context)
      : ownedNewestFirst(intents.values(), context).find((candidate) => candidate.latest_charge === params.charge);
    if (!intent) {
      throw params.payment_intent
        ? noSuch('payment_intent', String(params.payment_intent), 'payment_intent')
        : noSuch('charge', String(params.charge), 'charge');
    }
    if (intent.status !== 'succeeded') {
      throw failed(400, {
        type: 'invalid_request_error',
        code: 'charge_not_refundable',
        message: `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`,
      });
    }
    if (disputeOf(intent)) {
      throw failed(400, {
        type: 'invalid_request_error',
        code: 'charge_disputed',
        message: `Charge ${intent.latest_charge} has been charged back; cannot issue a refund.`,
      });
    }
    const left = Number(intent.amount) - Number(chargeOf(intent).amount_refunded);
    if (left <= 0) {
      throw failed(400, {
        type: 'invalid_request_error',
        code: 'charge_already_refunded',
        message: `Charge ${intent.latest_charge} has already been refunded.`,
      });
    }
    const amount = params.amount === undefined ? left : Number(params.amount);
    checkAmountInCurrency(amount, String(intent.currency));
    if (amount > left) {
      throw failed(400, {
        type: 'invalid_request_error',
        code: 'amount_too_large',
        param: 'amount',
        message: `Refund amount (${amount}) is greater than unrefunded amount on charge (${left})`,
      });
    }
    return makeRefund(intent, amount, params, isSepa(intent) ? 'pending' : 'succeeded');
  }

  // Disputes.

  function openDispute(intent: Params, status: DisputeStatus, reason: string): Params {
    if (!intent.latest_charge) throw new Error(`Intent ${intent.id} has no charge to dispute`);
    const dispute = store(
      disputes,
      {
        id: id('dp'),
        object: 'dispute',
        amount: intent.amount,
        balance_transactions: [],
        charge: intent.latest_charge,
        created: clock(),
        currency: intent.currency,
        evidence: {},
        is_charge_refundable: false,
        livemode: false,
        metadata: {},
        payment_intent: intent.id,
        reason,
        status,
      },
      ownerOf(intent),
    );
    emit('charge.dispute.created', dispute);
    return dispute;
  }

  const withdrawn = (dispute: Params) =>
    (dispute.balance_transactions as Params[]).reduce((sum, transaction) => sum + Number(transaction.amount), 0) < 0;

  /** The disputed amount leaves (-1) or returns to (+1) the balance, as a balance transaction. */
  function moveDisputeFunds(dispute: Params, direction: -1 | 1): Params {
    if (withdrawn(dispute) === direction < 0) {
      throw new Error(`Dispute ${dispute.id} funds are already ${direction < 0 ? 'withdrawn' : 'in the balance'}`);
    }
    (dispute.balance_transactions as Params[]).push({
      id: id('txn'),
      object: 'balance_transaction',
      amount: direction * Number(dispute.amount),
      created: clock(),
      currency: dispute.currency,
      reporting_category: direction < 0 ? 'dispute' : 'dispute_reversal',
      type: 'adjustment',
    });
    emit(direction < 0 ? 'charge.dispute.funds_withdrawn' : 'charge.dispute.funds_reinstated', dispute);
    return dispute;
  }

  // Customers and webhook endpoints.

  function createCustomer(params: Params, context: Context): Params {
    const customer = store(
      customers,
      {
        id: id('cus'),
        object: 'customer',
        address: params.address ?? null,
        created: clock(),
        description: params.description ?? null,
        email: params.email ?? null,
        livemode: false,
        metadata: params.metadata ?? {},
        name: params.name ?? null,
        phone: params.phone ?? null,
      },
      context.account,
    );
    emit('customer.created', customer);
    return customer;
  }

  function validateWebhookEndpoint(params: Params): void {
    if (params.url === undefined) throw missingParameter('url');
    if (!asList(params.enabled_events).length) throw missingParameter('enabled_events');
  }

  function createWebhookEndpoint(params: Params, context: Context): Params {
    const endpoint = store(
      webhookEndpoints,
      {
        id: id('we'),
        object: 'webhook_endpoint',
        api_version: params.api_version ?? null,
        application: null,
        created: clock(),
        description: params.description ?? null,
        enabled_events: asList(params.enabled_events),
        livemode: false,
        metadata: params.metadata ?? {},
        status: 'enabled',
        url: params.url,
      },
      context.account,
    );
    // The secret is in the answer to the creation only.
    return { ...endpoint, secret: `whsec_${randomBytes(16).toString('hex')}` };
  }

  function updateWebhookEndpoint(params: Params, context: Context, [endpointId]: string[]): Params {
    const endpoint = owned(webhookEndpoints, endpointId, context);
    if (!endpoint) throw noSuch('webhook_endpoint', String(endpointId), 'id', 404);
    if (params.url !== undefined) endpoint.url = params.url;
    if (params.enabled_events !== undefined) endpoint.enabled_events = asList(params.enabled_events);
    if (params.description !== undefined) endpoint.description = params.description;
    if (params.disabled !== undefined) endpoint.status = isTrue(params.disabled) ? 'disabled' : 'enabled';
    if (params.metadata !== undefined) endpoint.metadata = params.metadata;
    return endpoint;
  }

  // Events.

  function listEvents(params: Params, context: Context): Params {
    if (params.type !== undefined && params.types !== undefined) throw exclusiveParameters(['type', 'types']);
    const types = asList(params.types);
    if (types.length > 20) throw rejected('types may have at most 20 entries.', { param: 'types' });
    const pattern =
      params.type === undefined
        ? undefined
        : new RegExp(
            `^${String(params.type)
              .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
              .replace(/\*/g, '.*')}$`,
          );
    const matching = ownedNewestFirst(events, context).filter(
      (event) =>
        createdWithin(params.created, Number(event.created)) &&
        (!pattern || pattern.test(String(event.type))) &&
        (!types.length || types.includes(String(event.type))),
    );
    return listPage(matching, params, '/v1/events', 'event');
  }

  // Routes.

  function retrieve(map: Map<string, Params>, kind: string) {
    return (params: Params, context: Context, [objectId]: string[]) => {
      const object = owned(map, objectId, context);
      if (!object) throw noSuch(kind, String(objectId), 'id', 404);
      return expandView(object, params.expand);
    };
  }

  function list(
    map: Map<string, Params> | Params[],
    kind: string,
    url: string,
    filters: Record<string, (object: Params, value: unknown) => boolean> = {},
  ) {
    return (params: Params, context: Context) => {
      const values = Array.isArray(map) ? map : map.values();
      const matching = ownedNewestFirst(values, context).filter(
        (object) =>
          createdWithin(params.created, Number(object.created)) &&
          Object.entries(filters).every(([name, test]) => params[name] === undefined || test(object, params[name])),
      );
      return listPage(matching, params, url, kind);
    };
  }

  const equals = (field: string) => (object: Params, value: unknown) => object[field] === value;

  const routes: Route[] = [
    { method: 'POST', path: /^\/v1\/customers$/, accepts: ACCEPTS.customer, run: createCustomer },
    {
      method: 'GET',
      path: /^\/v1\/customers$/,
      run: list(customers, 'customer', '/v1/customers', { email: equals('email') }),
    },
    { method: 'GET', path: /^\/v1\/customers\/(\w+)$/, run: retrieve(customers, 'customer') },
    {
      method: 'POST',
      path: /^\/v1\/payment_intents$/,
      accepts: ACCEPTS.paymentIntent,
      validate: validatePaymentIntent,
      run: createPaymentIntent,
    },
    {
      method: 'GET',
      path: /^\/v1\/payment_intents$/,
      run: list(intents, 'payment_intent', '/v1/payment_intents', { customer: equals('customer') }),
    },
    { method: 'GET', path: /^\/v1\/payment_intents\/search$/, run: searchPaymentIntents },
    { method: 'GET', path: /^\/v1\/payment_intents\/(\w+)$/, run: retrieve(intents, 'payment_intent') },
    {
      method: 'POST',
      path: /^\/v1\/payment_intents\/(\w+)\/cancel$/,
      accepts: ACCEPTS.cancel,
      run: cancelPaymentIntent,
    },
    {
      method: 'POST',
      path: /^\/v1\/setup_intents$/,
      accepts: ACCEPTS.setupIntent,
      validate: validateSetupIntent,
      run: createSetupIntent,
    },
    { method: 'GET', path: /^\/v1\/setup_intents\/(\w+)$/, run: retrieve(setupIntents, 'setup_intent') },
    { method: 'POST', path: /^\/v1\/setup_intents\/(\w+)\/cancel$/, accepts: ACCEPTS.cancel, run: cancelSetupIntent },
    { method: 'POST', path: /^\/v1\/refunds$/, accepts: ACCEPTS.refund, validate: validateRefund, run: createRefund },
    {
      method: 'GET',
      path: /^\/v1\/refunds$/,
      run: list(refunds, 'refund', '/v1/refunds', {
        payment_intent: equals('payment_intent'),
        charge: equals('charge'),
      }),
    },
    { method: 'GET', path: /^\/v1\/refunds\/(\w+)$/, run: retrieve(refunds, 'refund') },
    { method: 'GET', path: /^\/v1\/events$/, run: listEvents },
    {
      method: 'GET',
      path: /^\/v1\/events\/(\w+)$/,
      run: (_params, context, [eventId]) => {
        const event = ownedNewestFirst(events, context).find((candidate) => candidate.id === eventId);
        if (!event) throw noSuch('event', String(eventId), 'id', 404);
        return event;
      },
    },
    { method: 'GET', path: /^\/v1\/disputes\/(\w+)$/, run: retrieve(disputes, 'dispute') },
    { method: 'GET', path: /^\/v1\/mandates\/(\w+)$/, run: retrieve(mandates, 'mandate') },
    { method: 'GET', path: /^\/v1\/payment_methods\/(\w+)$/, run: retrieve(methods, 'PaymentMethod') },
    {
      method: 'POST',
      path: /^\/v1\/webhook_endpoints$/,
      accepts: ACCEPTS.webhookEndpoint,
      validate: validateWebhookEndpoint,
      run: createWebhookEndpoint,
    },
    {
      method: 'GET',
      path: /^\/v1\/webhook_endpoints$/,
      run: list(webhookEndpoints, 'webhook_endpoint', '/v1/webhook_endpoints'),
    },
    { method: 'GET', path: /^\/v1\/webhook_endpoints\/(\w+)$/, run: retrieve(webhookEndpoints, 'webhook_endpoint') },
    {
      method: 'POST',
      path: /^\/v1\/webhook_endpoints\/(\w+)$/,
      accepts: ACCEPTS.webhookEndpointUpdate,
      run: updateWebhookEndpoint,
    },
  ];

  // Answering a request.

  const problemReply = (problem: StripeProblem): Outcome => ({
    status: problem.status,
    body: JSON.stringify({ error: problem.error }),
    kept: problem.kept,
  });

  const serverError = (): Outcome =>
    problemReply(failed(500, { type: 'api_error', message: 'An unknown error occurred' }));

  /** Authentication, the connected account's access, and the rate limiter come before any endpoint. */
  function gate(
    authorization: string | undefined,
    context: Context,
    fault: Fault | undefined,
  ): StripeProblem | undefined {
    if (!authorization?.startsWith('Bearer ')) {
      return rejected(
        "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.",
        {},
        401,
      );
    }
    const key = authorization.slice('Bearer '.length);
    if (keyRevoked || key !== secretKey) return rejected(`Invalid API Key provided: ${maskKey(key)}`, {}, 401);
    if (context.account && disconnected.has(context.account)) {
      return rejected(
        `The provided key '${maskKey(key)}' does not have access to account '${context.account}' (or that account does not exist). Application access may have been revoked.`,
        { code: 'account_invalid' },
        403,
      );
    }
    if (fault === 'rate_limit') {
      return rejected(
        'Request rate limit exceeded. You can learn more about rate limits here https://stripe.com/docs/rate-limits.',
        { code: 'rate_limit' },
        429,
      );
    }
    return undefined;
  }

  function execute(record: RecordedRequest, context: Context, fault: Fault | undefined): Outcome {
    let ids: string[] = [];
    const route = routes.find((candidate) => {
      const match = candidate.method === record.method ? candidate.path.exec(record.path) : null;
      if (match) ids = match.slice(1);
      return match !== null;
    });
    if (!route) {
      return problemReply(rejected(`Unrecognized request URL (${record.method}: ${record.path}).`, {}, 404));
    }
    current = { requestId: id('req'), idempotencyKey: record.idempotencyKey };
    try {
      if (route.accepts) rejectUnknown(record.params, route.accepts);
      route.validate?.(record.params, context);
      // The endpoint begins here: what it answers, errors included, is kept.
      if (fault === 'server_error') return serverError();
      const body = route.run(record.params, context, ids);
      return fault === 'server_error_after_work'
        ? serverError()
        : { status: 200, body: JSON.stringify(body), kept: true };
    } catch (error) {
      if (!(error instanceof StripeProblem)) throw error;
      return fault === 'server_error_after_work' && error.kept ? serverError() : problemReply(error);
    } finally {
      current = undefined;
    }
  }

  /**
   * An answer as Stripe's layers give it: the gate, then the idempotency layer (a kept answer for
   * the key is replayed for 24 hours, another request under it is an `idempotency_error`), then
   * the endpoint, whose answer is kept under the key unless its parameters failed validation.
   */
  function answer(record: RecordedRequest, raw: string, fault: Fault | undefined, authorization?: string): Reply {
    const context: Context = { account: record.stripeAccount ?? '', version: record.apiVersion ?? DEFAULT_API_VERSION };
    const refused = gate(authorization, context, fault);
    if (refused) return problemReply(refused);
    const key = record.method === 'POST' ? record.idempotencyKey : undefined;
    const scope = `${context.account}\u0000${key}`;
    const fingerprint = `${record.method} ${record.path} ${raw}`;
    let earlier = key ? answers.get(scope) : undefined;
    if (earlier && clock() - earlier.savedAt >= IDEMPOTENCY_KEY_LIFETIME) {
      // Forgotten: the key executes anew.
      answers.delete(scope);
      earlier = undefined;
    }
    if (earlier && earlier.fingerprint !== fingerprint) {
      return problemReply(
        new StripeProblem(
          400,
          {
            type: 'idempotency_error',
            message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
          },
          false,
        ),
      );
    }
    if (earlier) return { status: earlier.status, body: earlier.body, replayed: true };
    const outcome = execute(record, context, fault);
    if (key && outcome.kept) {
      answers.set(scope, { fingerprint, status: outcome.status, body: outcome.body, savedAt: clock() });
    }
    return outcome;
  }

  function takeFault(record: RecordedRequest): Fault | undefined {
    const index = faults.findIndex((entry) => entry.matches(record));
    return index < 0 ? undefined : faults.splice(index, 1)[0]?.fault;
  }

  function respond(response: ServerResponse, reply: Reply): void {
    response.writeHead(reply.status, {
      'content-type': 'application/json',
      'request-id': id('req'),
      ...(reply.replayed ? { 'idempotent-replayed': 'true' } : {}),
    });
    response.end(reply.body);
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const method = request.method ?? 'GET';
    const header = (name: string) => request.headers[name] as string | undefined;
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      params: qs.parse(method === 'GET' ? url.search.slice(1) : raw, { depth: 10, arrayLimit: 100 }) as Params,
      ...(header('idempotency-key') ? { idempotencyKey: header('idempotency-key') } : {}),
      ...(header('stripe-account') ? { stripeAccount: header('stripe-account') } : {}),
      ...(header('stripe-version') ? { apiVersion: header('stripe-version') } : {}),
    };
    const fault = takeFault(record);
    if (fault === 'refuse') {
      // The request never reaches Stripe: nothing is done, recorded or kept.
      request.socket.destroy();
      return;
    }
    requests.push(record);
    if (options.latencyMs) await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
    const reply = answer(record, raw, fault, header('authorization'));
    if (fault === 'drop') {
      // The work is done (and its answer kept for a replay), but the answer never arrives.
      request.socket.destroy();
      return;
    }
    respond(response, reply);
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      respond(response, {
        status: 500,
        body: JSON.stringify({ error: { type: 'api_error', message: String(error) } }),
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  function found(map: Map<string, Params>, objectId: string, kind: string): Params {
    const object = map.get(objectId);
    if (!object) throw new Error(`No ${kind} ${objectId}`);
    return object;
  }

  function inStatus(object: Params, status: string): Params {
    if (object.status !== status) throw new Error(`${object.object} ${object.id} is ${object.status}, not ${status}`);
    return object;
  }

  function failNextMatching(matches: (request: RecordedRequest) => boolean, fault: Fault, count = 1): void {
    for (let i = 0; i < count; i++) faults.push({ fault, matches });
  }

  function sign(body: string, timestamp: number) {
    return {
      body,
      signature: Stripe.webhooks.generateTestHeaderString({ payload: body, secret: webhookSecret, timestamp }),
    };
  }

  return {
    url: baseUrl,
    secretKey,
    webhookSecret,
    requests,
    intents,
    setupIntents,
    refunds,
    customers,
    disputes,
    mandates,
    webhookEndpoints,
    events,
    failNext: (count, fault) => failNextMatching(() => true, fault, count),
    failNextMatching,
    clearFaults: () => {
      faults.length = 0;
    },
    decide(intentId, approved) {
      const intent = inStatus(found(intents, intentId, 'intent'), 'requires_action');
      if (approved) succeed(intent);
      else {
        failIntent(intent, {
          type: 'invalid_request_error',
          code: 'payment_intent_authentication_failure',
          message:
            'The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.',
        });
      }
    },
    decideSetup(setupIntentId, approved) {
      const setup = inStatus(found(setupIntents, setupIntentId, 'setup intent'), 'requires_action');
      if (approved) succeedSetup(setup);
      else {
        failSetup(setup, {
          type: 'invalid_request_error',
          code: 'setup_intent_authentication_failure',
          message:
            'The latest attempt to set up the payment method has failed because authentication failed. Provide a new payment method to attempt to set it up again.',
        });
      }
    },
    settle(intentId, succeeded) {
      const intent = inStatus(found(intents, intentId, 'intent'), 'processing');
      if (succeeded) {
        succeed(intent);
        return;
      }
      failIntent(intent, {
        type: 'card_error',
        code: 'debit_not_authorized',
        message: 'The debit was not authorised.',
      });
    },
    dashboardRefund(intentId, amount, status) {
      const intent = found(intents, intentId, 'intent');
      makeRefund(intent, amount, {}, status ?? (isSepa(intent) ? 'pending' : 'succeeded'));
      return chargeOf(intent);
    },
    failRefund(refundId) {
      setRefundStatus(found(refunds, refundId, 'refund'), 'failed', 'expired_or_canceled_card');
    },
    settleRefund(refundId) {
      setRefundStatus(inStatus(found(refunds, refundId, 'refund'), 'pending'), 'succeeded');
    },
    dispute(intentId) {
      return openDispute(inStatus(found(intents, intentId, 'intent'), 'succeeded'), 'needs_response', 'fraudulent');
    },
    withdrawDisputeFunds: (disputeId) => moveDisputeFunds(found(disputes, disputeId, 'dispute'), -1),
    reinstateDisputeFunds: (disputeId) => moveDisputeFunds(found(disputes, disputeId, 'dispute'), 1),
    updateDispute(disputeId, status) {
      const dispute = found(disputes, disputeId, 'dispute');
      dispute.status = status;
      emit('charge.dispute.updated', dispute);
      return dispute;
    },
    closeDispute(disputeId, status) {
      const dispute = found(disputes, disputeId, 'dispute');
      // A won dispute returns the withdrawn funds.
      if (status === 'won' && withdrawn(dispute)) moveDisputeFunds(dispute, 1);
      dispute.status = status;
      emit('charge.dispute.closed', dispute);
      return dispute;
    },
    sepaReturn(intentId) {
      const intent = inStatus(found(intents, intentId, 'intent'), 'succeeded');
      if (!isSepa(intent)) throw new Error(`Intent ${intentId} is not a SEPA debit`);
      // SEPA disputes are final: no evidence, no appeal, lost from the start.
      return moveDisputeFunds(openDispute(intent, 'lost', 'debit_not_authorized'), -1);
    },
    deactivateMandate(mandateId) {
      const mandate = inStatus(found(mandates, mandateId, 'mandate'), 'active');
      mandate.status = 'inactive';
      emit('mandate.updated', mandate);
      return mandate;
    },
    revokeKey() {
      keyRevoked = true;
    },
    disconnectAccount(account) {
      disconnected.add(account);
    },
    event(type, object, eventOptions = {}) {
      const createdAt = eventOptions.createdAt ?? clock();
      // Stripe names the connected account an event originates from in `account` (absent for the
      // platform's own): https://docs.stripe.com/api/events/object#event_object-account. A charge,
      // refund or dispute belongs to its intent's account.
      const intentId = typeof object.payment_intent === 'string' ? object.payment_intent : undefined;
      const owner =
        eventOptions.account ??
        (ownerOf(object) || (intentId && intents.has(intentId) ? ownerOf(intents.get(intentId) as Params) : ''));
      const body = JSON.stringify({
        id: eventOptions.id ?? id('evt'),
        object: 'event',
        api_version: DEFAULT_API_VERSION,
        created: createdAt,
        type,
        livemode: eventOptions.livemode ?? false,
        pending_webhooks: 1,
        data: { object },
        ...(owner ? { account: owner } : {}),
      });
      return sign(body, createdAt);
    },
    signed: (event) => sign(JSON.stringify(event), clock()),
    charges: () => [...created],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
