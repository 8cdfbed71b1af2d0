import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import qs from 'qs';
import Stripe from 'stripe';

/**
 * A server speaking the part of Stripe's REST API the adapter uses, as Stripe speaks it:
 * form-encoded requests with bracketed keys, bearer secret keys, `Idempotency-Key` replays (and
 * `idempotency_error` for a key reused with other parameters), `Stripe-Account`, Stripe's object
 * and error shapes and status codes (402 card errors, 400 invalid requests, 401, 500), expansion
 * of `payment_method`, and events signed the way Stripe signs them. Point the service at it with
 * `SVC_STRIPE_API_BASE`; the real Stripe test mode takes its place by configuration.
 *
 * Test cards and payment methods behave as in Stripe's test mode: `pm_card_visa` and 4242…
 * succeed, `pm_card_chargeDeclined` and 4000 0000 0000 0002 decline, 4000 0000 0000 9995
 * declines for insufficient funds, `pm_card_threeDSecure2Required` and 4000 0027 6000 3184 need
 * 3-D Secure, TWINT redirects, SEPA debits process until `settle` decides, and a SEPA SetupIntent
 * records its mandate at once.
 */
type Params = Record<string, unknown>;

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

export interface RecordedRequest {
  method: string;
  path: string;
  params: Params;
  idempotencyKey?: string;
  stripeAccount?: string;
}

type Fault = 'server_error' | 'drop';

interface StoredAnswer {
  fingerprint: string;
  status: number;
  body: string;
}

export interface StripeStandIn {
  url: string;
  secretKey: string;
  webhookSecret: string;
  requests: RecordedRequest[];
  intents: Map<string, Params>;
  setupIntents: Map<string, Params>;
  refunds: Map<string, Params>;
  /** Answers the next `count` requests with a fault: a 500, or a connection closed after the work was done. */
  failNext(count: number, fault: Fault): void;
  /** The donor's decision on Stripe's page (3-D Secure, TWINT). */
  decide(intentId: string, approved: boolean): void;
  /** A processing SEPA debit settles. */
  settle(intentId: string, succeeded: boolean): void;
  /** A refund Stripe accepted fails later. */
  failRefund(refundId: string): void;
  /** A refund made in Stripe's dashboard (no metadata of ours); the charge object of its event. */
  dashboardRefund(intentId: string, amount: number): Params;
  /** Opens a dispute on an intent's charge; the dispute object. */
  dispute(intentId: string): Params;
  closeDispute(disputeId: string, status: 'won' | 'lost'): Params;
  /** A signed event as Stripe would deliver it: the raw body and its `Stripe-Signature`. */
  event(
    type: string,
    object: Params,
    options?: { id?: string; createdAt?: number },
  ): { body: string; signature: string };
  /** Intents created (not replayed), i.e. charges Stripe would have made. */
  charges(): Params[];
  close(): Promise<void>;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

function stripeError(status: number, error: Params): { status: number; body: Params } {
  return { status, body: { error } };
}

/**
 * `latencyMs` holds every answer that long, as Stripe's own processing would (a confirmed card
 * PaymentIntent takes a few hundred milliseconds at Stripe); 0 in the tests.
 */
export async function startStripeStandIn(options: { latencyMs?: number } = {}): Promise<StripeStandIn> {
  const secretKey = `sk_test_${randomBytes(12).toString('hex')}`;
  const webhookSecret = `whsec_${randomBytes(16).toString('hex')}`;
  const requests: RecordedRequest[] = [];
  const intents = new Map<string, Params>();
  const refunds = new Map<string, Params>();
  const setupIntents = new Map<string, Params>();
  const disputes = new Map<string, Params>();
  const methods = new Map<string, Params>();
  const answers = new Map<string, StoredAnswer>();
  const created: Params[] = [];
  const faults: Fault[] = [];
  let baseUrl = '';

  function paymentMethodFrom(params: Params): Params | { error: { status: number; body: Params } } {
    const data = params.payment_method_data as Params | undefined;
    const given = params.payment_method as string | undefined;
    if (given) {
      const saved = methods.get(given);
      if (saved) return saved;
      const number = TEST_PAYMENT_METHODS[given];
      if (!number) {
        return {
          error: stripeError(400, {
            type: 'invalid_request_error',
            code: 'resource_missing',
            param: 'payment_method',
            message: `No such PaymentMethod: '${given}'`,
          }),
        };
      }
      return cardMethod(number, undefined);
    }
    if (data?.type === 'card') {
      const card = data.card as Params;
      const name = (data.billing_details as Params | undefined)?.name as string | undefined;
      return cardMethod(String(card.number), name, Number(card.exp_month), Number(card.exp_year));
    }
    if (data?.type === 'twint') return store({ id: id('pm'), object: 'payment_method', type: 'twint', twint: {} });
    if (data?.type === 'sepa_debit') {
      const iban = String((data.sepa_debit as Params).iban).replace(/\s/g, '');
      const billing = (data.billing_details ?? {}) as Params;
      return store({
        id: id('pm'),
        object: 'payment_method',
        type: 'sepa_debit',
        sepa_debit: { country: iban.slice(0, 2), last4: iban.slice(-4), bank_code: iban.slice(4, 9) },
        billing_details: { name: billing.name ?? null, email: billing.email ?? null },
      });
    }
    return {
      error: stripeError(400, {
        type: 'invalid_request_error',
        code: 'parameter_missing',
        param: 'payment_method',
        message: 'You must provide a payment method',
      }),
    };
  }

  function store(method: Params): Params {
    methods.set(String(method.id), method);
    return method;
  }

  function cardMethod(number: string, name: string | undefined, month = 12, year = 2034): Params {
    const behaviour = CARDS[number] ?? { brand: 'visa', last4: number.slice(-4), outcome: 'succeed' as const };
    return store({
      id: id('pm'),
      object: 'payment_method',
      type: 'card',
      card: {
        brand: behaviour.brand,
        last4: behaviour.last4,
        exp_month: month,
        exp_year: year,
        fingerprint: createHash('sha256').update(number).digest('base64url').slice(0, 16),
        _number: number,
      },
      billing_details: { name: name ?? null, email: null },
    });
  }

  /** The public face of a payment method (the card number the stand-in keeps is never shown). */
  function publicMethod(method: Params): Params {
    if (!method.card) return method;
    const { _number: _hidden, ...card } = method.card as Params;
    return { ...method, card };
  }

  function view(intent: Params, expand: unknown): Params {
    const expanded = Array.isArray(expand) && expand.includes('payment_method');
    const method = methods.get(String(intent.payment_method));
    return { ...intent, payment_method: expanded && method ? publicMethod(method) : intent.payment_method };
  }

  function createIntent(params: Params): { status: number; body: Params } {
    const method = paymentMethodFrom(params);
    if ('error' in method) return method.error as { status: number; body: Params };
    const amount = Number(params.amount);
    if (!Number.isInteger(amount) || amount < 1) {
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'parameter_invalid_integer',
        param: 'amount',
        message: 'Invalid integer',
      });
    }
    const intent: Params = {
      id: id('pi'),
      object: 'payment_intent',
      amount,
      amount_received: 0,
      currency: params.currency,
      customer: params.customer ?? null,
      metadata: params.metadata ?? {},
      payment_method: method.id,
      setup_future_usage: params.setup_future_usage ?? null,
      status: 'requires_confirmation',
      next_action: null,
      last_payment_error: null,
      latest_charge: null,
      livemode: false,
      client_secret: `${id('pi')}_secret_${randomBytes(8).toString('hex')}`,
      return_url: params.return_url ?? null,
    };
    intents.set(String(intent.id), intent);
    created.push(intent);
    if (params.customer && params.setup_future_usage)
      methods.set(String(method.id), { ...method, customer: params.customer });
    const card = method.card as Params | undefined;
    const behaviour = card ? (CARDS[String(card._number)]?.outcome ?? 'succeed') : undefined;
    if (method.type === 'sepa_debit') {
      intent.status = 'processing';
    } else if (method.type === 'twint' || behaviour === '3ds') {
      if (params.off_session === 'true') {
        return decline(intent, 'authentication_required', undefined, 'This payment requires authentication');
      }
      intent.status = 'requires_action';
      intent.next_action = {
        type: 'redirect_to_url',
        redirect_to_url: { url: `${baseUrl}/authorize/${intent.id}`, return_url: intent.return_url },
      };
    } else if (behaviour === 'decline') {
      return decline(intent, 'card_declined', 'generic_decline', 'Your card was declined.');
    } else if (behaviour === 'insufficient_funds') {
      return decline(intent, 'card_declined', 'insufficient_funds', 'Your card has insufficient funds.');
    } else {
      succeed(intent);
    }
    return { status: 200, body: view(intent, params.expand) };
  }

  /**
   * A SetupIntent confirmed at once: a SEPA debit's mandate is active immediately (Stripe answers
   * `succeeded`), its payment method attached to the customer for off-session charges.
   */
  function createSetupIntent(params: Params): { status: number; body: Params } {
    const method = paymentMethodFrom(params);
    if ('error' in method) return method.error as { status: number; body: Params };
    if (method.type !== 'sepa_debit') {
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'parameter_invalid_empty',
        param: 'payment_method_data',
        message: 'The stand-in sets up SEPA Direct Debit mandates only',
      });
    }
    const online = ((params.mandate_data as Params | undefined)?.customer_acceptance as Params | undefined)?.online as
      | Params
      | undefined;
    if (!online?.ip_address || !online.user_agent) {
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'parameter_missing',
        param: 'mandate_data',
        message: 'A SEPA Direct Debit mandate needs the customer acceptance (mandate_data)',
      });
    }
    methods.set(String(method.id), { ...method, customer: params.customer ?? null });
    const setup: Params = {
      id: id('seti'),
      object: 'setup_intent',
      customer: params.customer ?? null,
      metadata: params.metadata ?? {},
      payment_method: method.id,
      usage: params.usage ?? 'off_session',
      status: 'succeeded',
      mandate: id('mandate'),
      next_action: null,
      last_setup_error: null,
      livemode: false,
    };
    setupIntents.set(String(setup.id), setup);
    return { status: 200, body: view(setup, params.expand) };
  }

  function succeed(intent: Params): void {
    intent.status = 'succeeded';
    intent.amount_received = intent.amount;
    intent.latest_charge = id('ch');
    intent.next_action = null;
  }

  function decline(intent: Params, code: string, declineCode: string | undefined, message: string) {
    // Stripe's card errors carry the intent, with the method it tried.
    intent.status = 'requires_payment_method';
    intent.last_payment_error = {
      type: 'card_error',
      code,
      ...(declineCode ? { decline_code: declineCode } : {}),
      message,
    };
    return stripeError(402, {
      type: 'card_error',
      code,
      ...(declineCode ? { decline_code: declineCode } : {}),
      message,
      payment_intent: view(intent, ['payment_method']),
    });
  }

  function refundObject(intent: Params, amount: number, metadata: Params, status: string): Params {
    return {
      id: id('re'),
      object: 'refund',
      amount,
      currency: intent.currency,
      payment_intent: intent.id,
      charge: intent.latest_charge,
      metadata,
      status,
      failure_reason: null,
    };
  }

  function refund(params: Params): { status: number; body: Params } {
    const intent = intents.get(String(params.payment_intent));
    if (!intent) {
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'resource_missing',
        param: 'payment_intent',
        message: `No such payment_intent: '${params.payment_intent}'`,
      });
    }
    const refunded = [...refunds.values()]
      .filter((r) => r.payment_intent === intent.id && r.status !== 'failed')
      .reduce((sum, r) => sum + Number(r.amount), 0);
    const amount = params.amount === undefined ? Number(intent.amount) - refunded : Number(params.amount);
    if (intent.status !== 'succeeded' || amount + refunded > Number(intent.amount)) {
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'charge_already_refunded',
        message: 'Refund amount is greater than the unrefunded amount',
      });
    }
    const method = methods.get(String(intent.payment_method));
    const created = refundObject(
      intent,
      amount,
      (params.metadata ?? {}) as Params,
      method?.type === 'sepa_debit' ? 'pending' : 'succeeded',
    );
    refunds.set(String(created.id), created);
    return { status: 200, body: created };
  }

  function route(method: string, path: string, params: Params): { status: number; body: Params } {
    if (method === 'POST' && path === '/v1/customers') {
      return { status: 200, body: { id: id('cus'), object: 'customer', metadata: params.metadata ?? {} } };
    }
    if (method === 'POST' && path === '/v1/payment_intents') return createIntent(params);
    if (method === 'POST' && path === '/v1/setup_intents') return createSetupIntent(params);
    if (method === 'GET' && path === '/v1/payment_intents/search') {
      const match = /metadata\['([^']+)'\]:'([^']+)'/.exec(String(params.query ?? ''));
      const found = match
        ? [...intents.values()].filter((i) => (i.metadata as Params)?.[match[1] as string] === match[2])
        : [];
      return { status: 200, body: { object: 'search_result', data: found, has_more: false, url: path } };
    }
    const intentPath = /^\/v1\/payment_intents\/(pi_[a-z0-9]+)(\/cancel)?$/.exec(path);
    if (intentPath) {
      const intent = intents.get(intentPath[1] as string);
      if (!intent) {
        return stripeError(404, {
          type: 'invalid_request_error',
          code: 'resource_missing',
          message: `No such payment_intent: '${intentPath[1]}'`,
        });
      }
      if (method === 'GET') return { status: 200, body: view(intent, params.expand) };
      if (method === 'POST' && intentPath[2]) {
        if (intent.status === 'succeeded' || intent.status === 'canceled') {
          return stripeError(400, {
            type: 'invalid_request_error',
            code: 'payment_intent_unexpected_state',
            message: `You cannot cancel this PaymentIntent because it has a status of ${intent.status}.`,
          });
        }
        intent.status = 'canceled';
        intent.next_action = null;
        return { status: 200, body: intent };
      }
    }
    if (method === 'POST' && path === '/v1/refunds') return refund(params);
    if (method === 'GET' && path === '/v1/refunds') {
      const listed = [...refunds.values()].filter(
        (r) => !params.payment_intent || r.payment_intent === params.payment_intent,
      );
      return { status: 200, body: { object: 'list', data: listed, has_more: false, url: path } };
    }
    return stripeError(404, {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${method}: ${path})`,
    });
  }

  function respond(response: ServerResponse, status: number, body: string, replayed = false): void {
    response.writeHead(status, {
      'content-type': 'application/json',
      'request-id': id('req'),
      ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
    });
    response.end(body);
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const method = request.method ?? 'GET';
    const params = qs.parse(method === 'GET' ? url.search.slice(1) : raw, { depth: 10, arrayLimit: 100 }) as Params;
    const idempotencyKey = request.headers['idempotency-key'] as string | undefined;
    const stripeAccount = request.headers['stripe-account'] as string | undefined;
    requests.push({
      method,
      path: url.pathname,
      params,
      ...(idempotencyKey ? { idempotencyKey } : {}),
      ...(stripeAccount ? { stripeAccount } : {}),
    });
    if (request.headers.authorization !== `Bearer ${secretKey}`) {
      respond(
        response,
        401,
        JSON.stringify({ error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } }),
      );
      return;
    }
    if (options.latencyMs) await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
    const fault = faults.shift();
    if (fault === 'server_error') {
      respond(response, 500, JSON.stringify({ error: { type: 'api_error', message: 'An unknown error occurred' } }));
      return;
    }
    const scope = `${stripeAccount ?? ''}\u0000${idempotencyKey ?? ''}`;
    const fingerprint = `${method} ${url.pathname} ${raw}`;
    const earlier = idempotencyKey && method === 'POST' ? answers.get(scope) : undefined;
    let answer: StoredAnswer;
    if (earlier) {
      if (earlier.fingerprint !== fingerprint) {
        respond(
          response,
          400,
          JSON.stringify({
            error: {
              type: 'idempotency_error',
              message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
            },
          }),
        );
        return;
      }
      answer = earlier;
    } else {
      const result = route(method, url.pathname, params);
      answer = { fingerprint, status: result.status, body: JSON.stringify(result.body) };
      // Stripe keeps the answer to an idempotent request, errors from its processing included.
      if (idempotencyKey && method === 'POST' && result.status !== 500) answers.set(scope, answer);
    }
    if (fault === 'drop') {
      // The work is done (and the answer kept for a replay), but the answer never arrives.
      request.socket.destroy();
      return;
    }
    respond(response, answer.status, answer.body, Boolean(earlier));
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      respond(response, 500, JSON.stringify({ error: { type: 'api_error', message: String(error) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const intentOf = (intentId: string) => {
    const intent = intents.get(intentId);
    if (!intent) throw new Error(`No intent ${intentId}`);
    return intent;
  };

  return {
    url: baseUrl,
    secretKey,
    webhookSecret,
    requests,
    intents,
    setupIntents,
    refunds,
    failNext(count, fault) {
      for (let i = 0; i < count; i++) faults.push(fault);
    },
    decide(intentId, approved) {
      const intent = intentOf(intentId);
      if (intent.status !== 'requires_action') throw new Error(`Intent ${intentId} is ${intent.status}`);
      if (approved) succeed(intent);
      else {
        intent.status = 'requires_payment_method';
        intent.next_action = null;
        intent.last_payment_error = {
          type: 'card_error',
          code: 'payment_intent_authentication_failure',
          message: 'The provided PaymentMethod has failed authentication.',
        };
      }
    },
    settle(intentId, succeeded) {
      const intent = intentOf(intentId);
      if (succeeded) succeed(intent);
      else {
        intent.status = 'requires_payment_method';
        intent.last_payment_error = {
          type: 'card_error',
          code: 'debit_not_authorized',
          message: 'The debit was not authorised.',
        };
      }
    },
    dashboardRefund(intentId, amount) {
      const intent = intentOf(intentId);
      const made = refundObject(intent, amount, {}, 'succeeded');
      refunds.set(String(made.id), made);
      return {
        id: intent.latest_charge,
        object: 'charge',
        payment_intent: intent.id,
        amount_refunded: amount,
        refunded: false,
      };
    },
    failRefund(refundId) {
      const refund = refunds.get(refundId);
      if (!refund) throw new Error(`No refund ${refundId}`);
      refund.status = 'failed';
      refund.failure_reason = 'expired_or_canceled_card';
    },
    dispute(intentId) {
      const intent = intentOf(intentId);
      const dispute: Params = {
        id: id('dp'),
        object: 'dispute',
        amount: intent.amount,
        currency: intent.currency,
        charge: intent.latest_charge,
        payment_intent: intent.id,
        reason: 'fraudulent',
        status: 'needs_response',
      };
      disputes.set(String(dispute.id), dispute);
      return dispute;
    },
    closeDispute(disputeId, status) {
      const dispute = disputes.get(disputeId);
      if (!dispute) throw new Error(`No dispute ${disputeId}`);
      dispute.status = status;
      return dispute;
    },
    event(type, object, options = {}) {
      const createdAt = options.createdAt ?? Math.floor(Date.now() / 1000);
      const body = JSON.stringify({
        id: options.id ?? id('evt'),
        object: 'event',
        api_version: '2026-01-01',
        created: createdAt,
        type,
        livemode: false,
        pending_webhooks: 1,
        data: { object },
      });
      const signature = Stripe.webhooks.generateTestHeaderString({
        payload: body,
        secret: webhookSecret,
        timestamp: createdAt,
      });
      return { body, signature };
    },
    charges: () => [...created],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
