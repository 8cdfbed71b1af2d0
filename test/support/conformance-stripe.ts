import Stripe from 'stripe';
import { expect } from 'vitest';
import { type ApiResponse, call } from './api';
import type { Answer, ProviderUnderTest, UnboundVariant } from './conformance';
import { DONOR_MANDATE, type StripeHarness, stripeCalls, useStripe } from './stripe-harness';
import type { Params } from './stripe-stand-in';

/**
 * Stripe under the conformance kit (test/support/conformance.ts), through the Stripe harness and
 * stand-in: the stand-in records every event Stripe would send (`events`), and the driver
 * delivers them as Stripe's webhooks would, signed, in order.
 */
export function stripeDriver(): ProviderUnderTest {
  let harness: StripeHarness;
  let calls: ReturnType<typeof stripeCalls>;
  let sdk: Stripe;
  /** The stand-in's events delivered so far; the last delivery, for a retry. */
  let delivered = 0;
  let lastDelivery: Params[] = [];
  /** Intents the donor has decided on already (their decision is not asked again). */
  const decided = new Set<string>();
  const disputes = new Map<string, string>();

  const stripe = () => harness.stripe;
  const intentOf = (payment: Answer): Params => {
    const intent = calls.intentOf(payment);
    expect(intent, `no intent at Stripe for ${payment.uuid}`).toBeDefined();
    return intent as Params;
  };
  const decide = (intent: Params, approved: boolean) => {
    if (decided.has(String(intent.id))) return;
    stripe().decide(String(intent.id), approved);
    decided.add(String(intent.id));
  };
  /** Our path of a Stripe return_url (the host is the service's public one). */
  const pathOf = (url: unknown) => String(url).replace(/^https?:\/\/[^/]+/, '');
  const post = async (event: { body: string; signature: string }): Promise<ApiResponse> => {
    const response = await call('POST', '/providers/stripe/events', {
      rawBody: event.body,
      headers: { 'content-type': 'application/json', 'stripe-signature': event.signature },
    });
    expect(response.status, response.text).toBe(200);
    expect(response.json).toMatchObject({ received: true });
    return response;
  };
  const deliverAll = async (events: Params[]) => {
    for (const event of events) await post(stripe().signed(event));
  };
  /** An intent on `account` ('' for our own platform account) whose metadata names our payment. */
  const intentNaming = (payment: Answer, account: string) =>
    sdk.paymentIntents.create(
      {
        amount: 2500,
        currency: 'chf',
        confirm: true,
        payment_method: 'pm_card_visa',
        return_url: 'https://attacker.example/done',
        metadata: { svc_reference: payment.uuid },
      },
      account ? { stripeAccount: account } : {},
    ) as unknown as Promise<Params>;

  /** Events about an intent that is not the payment's own (another account's, or another of ours). */
  async function foreign(kind: 'settlement' | 'refund' | 'dispute', payment: Answer, account: string) {
    const intent = await intentNaming(payment, account);
    const { deliver } = calls;
    if (kind === 'settlement') return [await deliver('payment_intent.succeeded', intent)];
    if (kind === 'refund') return [await deliver('charge.refunded', stripe().dashboardRefund(String(intent.id), 2500))];
    return [await deliver('charge.dispute.created', stripe().dispute(String(intent.id)))];
  }

  /** The payment's own intent's events, claimed as live money (our test payment's are test mode). */
  async function live(kind: 'settlement' | 'refund' | 'dispute', payment: Answer) {
    const intent = intentOf(payment);
    const { deliver } = calls;
    const options = { livemode: true };
    if (kind === 'settlement') {
      return [await deliver('payment_intent.succeeded', { ...intent, status: 'succeeded' }, options)];
    }
    if (kind === 'refund') {
      const charge = {
        id: intent.latest_charge ?? 'ch_live',
        object: 'charge',
        amount: intent.amount,
        amount_refunded: intent.amount,
        currency: intent.currency,
        payment_intent: intent.id,
        refunded: true,
        status: 'succeeded',
      };
      return [await deliver('charge.refunded', charge, options)];
    }
    const dispute = {
      id: 'dp_live_claim',
      object: 'dispute',
      amount: intent.amount,
      charge: intent.latest_charge,
      currency: intent.currency,
      payment_intent: intent.id,
      reason: 'fraudulent',
      status: 'needs_response',
      livemode: true,
    };
    return [await deliver('charge.dispute.created', dispute, options)];
  }

  const sepa = {
    payment_method: 'sepa_dd',
    profile: 'sepa-stripe',
    amount: { value: '5000', currency: 'EUR' },
    payment_information: { ...DONOR_MANDATE, iban: 'DE89370400440532013000', account_holder: 'Ada Donor' },
  };
  const card = (paymentMethod: string) => ({
    payment_method: 'card',
    profile: 'card-stripe',
    payment_information: { payment_method: paymentMethod },
  });

  return {
    name: 'stripe',
    setUp() {
      harness = useStripe();
      calls = stripeCalls(harness);
    },
    async reset() {
      if (!sdk) {
        sdk = new Stripe(stripe().secretKey, {
          host: '127.0.0.1',
          port: Number(new URL(stripe().url).port),
          protocol: 'http',
          maxNetworkRetries: 0,
        });
      }
      stripe().clearFaults();
      delivered = stripe().events.length;
      lastDelivery = [];
    },
    async deliverCallbacks() {
      // Delivering may make the service call Stripe, which may create events of its own: those too.
      while (delivered < stripe().events.length) {
        const batch = stripe().events.slice(delivered);
        delivered += batch.length;
        lastDelivery = batch;
        await deliverAll(batch);
      }
    },
    async redeliverCallbacks() {
      await deliverAll(lastDelivery);
    },

    card: {
      charged: card('pm_card_visa'),
      declined: card('pm_card_chargeDeclined'),
      declineReason: 'card_declined',
      insufficientFunds: card('pm_card_chargeDeclinedInsufficientFunds'),
    },
    redirects: [
      {
        name: '3-D Secure card',
        fields: card('pm_card_threeDSecure2Required'),
        refusalReason: 'payment_intent_authentication_failure',
      },
      {
        name: 'TWINT',
        fields: { payment_method: 'twint', profile: 'twint-stripe' },
        refusalReason: 'payment_intent_authentication_failure',
      },
    ],
    async completeRedirect(payment, approved) {
      const intent = intentOf(payment);
      decide(intent, approved);
      // Stripe appends the intent and its status to the return_url we gave it.
      const status = approved ? 'succeeded' : 'failed';
      return call('GET', `${pathOf(intent.return_url)}&payment_intent=${intent.id}&redirect_status=${status}`);
    },
    async returnWithProofOf(payment, other) {
      const theirs = intentOf(other);
      decide(theirs, true);
      const token = new URL(String(theirs.return_url)).searchParams.get('token');
      const path = new URL(String(intentOf(payment).return_url)).pathname;
      return call('GET', `${path}?token=${token}&payment_intent=${theirs.id}&redirect_status=succeeded`);
    },
    approvalWithoutReturn: {
      redirect: {
        name: '3-D Secure card',
        fields: card('pm_card_threeDSecure2Required'),
        refusalReason: 'payment_intent_authentication_failure',
      },
      async approve(payment) {
        decide(intentOf(payment), true);
      },
    },
    abandonedRedirectsExpire: true,

    unknownOutcome: {
      // A 500 to the request and to the SDK's one retry: Stripe made nothing.
      async arm() {
        stripe().failNext(2, 'server_error');
      },
      async disarm() {
        stripe().clearFaults();
      },
    },
    lostAnswer: {
      // Stripe does the work, and neither its answer nor the answer to the SDK's retry arrives.
      // (Of the request that creates the charge or refund: a Customer created before it is answered.)
      async loseNextAnswer() {
        stripe().failNextMatching(
          (request) =>
            request.method === 'POST' && (request.path === '/v1/payment_intents' || request.path === '/v1/refunds'),
          'drop',
          2,
        );
      },
      paymentsAt: (reference) =>
        stripe()
          .charges()
          .filter((intent) => (intent.metadata as Record<string, string>)?.svc_reference === reference)
          .map((intent) =>
            ['succeeded', 'processing', 'requires_capture'].includes(String(intent.status)) ? 'charged' : 'not charged',
          ),
      refundsAt: (payment) =>
        [...stripe().refunds.values()].filter((made) => made.payment_intent === intentOf(payment).id).length,
    },

    asynchronousSettlement: {
      fields: sepa,
      async settle(payment, succeeded) {
        stripe().settle(String(intentOf(payment).id), succeeded);
      },
      failureReason: 'debit_not_authorized',
      returnDebit: async (payment) => {
        stripe().sepaReturn(String(intentOf(payment).id));
      },
    },

    externalRefund: async (payment, amount) => {
      stripe().dashboardRefund(String(intentOf(payment).id), amount);
    },
    failingRefund: {
      charged: card('pm_card_visa'),
      async fail(_payment, refund) {
        const made = [...stripe().refunds.values()].find(
          (candidate) => (candidate.metadata as Record<string, string>)?.svc_reference === refund.uuid,
        );
        expect(made, `refund ${refund.uuid} at Stripe`).toBeDefined();
        stripe().failRefund(String(made?.id));
      },
    },

    disputes: {
      async open(payment) {
        const dispute = stripe().dispute(String(intentOf(payment).id));
        disputes.set(payment.uuid, String(dispute.id));
        stripe().withdrawDisputeFunds(String(dispute.id));
      },
      async win(payment) {
        stripe().closeDispute(String(disputes.get(payment.uuid)), 'won');
      },
    },

    savedCard: card('pm_card_visa'),

    unboundCallbacks: async (variant: UnboundVariant, kind, payment) => {
      if (variant === 'account') return foreign(kind, payment, 'acct_1Attacker000001');
      if (variant === 'reference') return foreign(kind, payment, '');
      return live(kind, payment);
    },
  };
}
