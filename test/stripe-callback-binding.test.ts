import { freezeClock, logger } from '@svc/core';
import Stripe from 'stripe';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { CALLBACK_UNBOUND } from '../services/payments/src/domain/provider-binding';
import { PAID_AT_OTHER_PROVIDER } from '../services/payments/src/domain/provider-updates';
import { call, DEMO, GOOD_CARD_INFORMATION, tokenFor } from './support/api';
import { stripeCalls, useStripe } from './support/stripe-harness';

/**
 * Issue 44, the attack: a charity with a connected Stripe account of its own makes Stripe send
 * correctly signed events about an intent whose `metadata.svc_reference` names another charity's
 * payment. Before the binding check, `charge.refunded` and `charge.dispute.funds_withdrawn` were
 * applied to the victim (a 2,500 refund and a lost dispute; the victim's own refund then refused
 * with `error.refund.exceeds_residual`). Now an event changes only what Stripe holds for the
 * event's own account and mode.
 */
const harness = useStripe();
const { pay, deliver, getPayment, intentOf } = stripeCalls(harness);
const ATTACKER = 'acct_1Attacker000001';
let attacker: Stripe;
let otherToken: string;

beforeAll(async () => {
  attacker = new Stripe(harness.stripe.secretKey, {
    host: '127.0.0.1',
    port: Number(new URL(harness.stripe.url).port),
    protocol: 'http',
    maxNetworkRetries: 0,
  });
  otherToken = await tokenFor(DEMO.otherClient);
});
beforeEach(() => {
  freezeClock(Math.floor(Date.now() / 1000));
});

/** Another charity's live donation on the simulated provider. */
async function victimPayment() {
  const paid = await call('POST', '/payments', {
    token: otherToken,
    body: {
      account_uuid: DEMO.otherAccount,
      payment_method: 'card',
      profile: 'card',
      amount: { value: '2500', currency: 'CHF' },
      payment_information: GOOD_CARD_INFORMATION,
    },
  });
  expect(paid.status, paid.text).toBe(201);
  expect(paid.json).toMatchObject({ status: 'succeeded', test_mode: false });
  return paid.json as { uuid: string };
}

/** The attacker's own intent, on its own connected account, naming `reference` in its metadata. */
async function attackersIntent(reference: string) {
  return attacker.paymentIntents.create(
    {
      amount: 2500,
      currency: 'chf',
      confirm: true,
      payment_method: 'pm_card_visa',
      return_url: 'https://attacker.example/done',
      metadata: { svc_reference: reference },
    },
    { stripeAccount: ATTACKER },
  );
}

const otherCharity = (path: string, body?: unknown) =>
  call(body === undefined ? 'GET' : 'POST', path, { token: otherToken, ...(body === undefined ? {} : { body }) });

describe('a Stripe event changes only what Stripe holds for the event’s account and mode', () => {
  it('refuses a refund and a dispute from another connected account on another charity’s simulated payment', async () => {
    const victim = await victimPayment();
    const intent = await attackersIntent(victim.uuid);
    const refunded = await deliver('charge.refunded', harness.stripe.dashboardRefund(intent.id, 2500));
    expect(refunded.status).toBe(200);
    // Acknowledged, so Stripe stops retrying, and applied to nothing.
    expect(refunded.json).toEqual({ received: true, applied: false });
    const dispute = harness.stripe.dispute(intent.id);
    const withdrawn = await deliver(
      'charge.dispute.funds_withdrawn',
      harness.stripe.withdrawDisputeFunds(String(dispute.id)),
    );
    expect(withdrawn.json).toEqual({ received: true, applied: false });

    const after = (await otherCharity(`/payments/${victim.uuid}`)).json;
    expect(after.refunds).toEqual([]);
    expect(after.refunded_amount.value).toBe('0');
    expect(after.dispute).toBeUndefined();
    // The charity's own refund of the whole amount still goes through.
    const own = await otherCharity(`/payments/${victim.uuid}/refunds`, { amount: { value: '2500', currency: 'CHF' } });
    expect(own.status, own.text).toBe(200);
    expect(own.json.amount).toMatchObject({ value: '2500' });
    expect((await otherCharity(`/payments/${victim.uuid}`)).json.refunded_amount.value).toBe('2500');
  });

  it('refuses events about a Stripe payment on the platform account from another account', async () => {
    const paid = await pay({ payment_information: { payment_method: 'pm_card_visa' } });
    expect(paid.json.status, paid.text).toBe('succeeded');
    const payment = paid.json as { uuid: string };
    const ours = intentOf(payment) as { id: string };

    // Another account's intent naming our payment: refunds and disputes are not applied.
    const foreign = await attackersIntent(payment.uuid);
    expect((await deliver('charge.refunded', harness.stripe.dashboardRefund(foreign.id, 2500))).json.applied).toBe(
      false,
    );
    expect((await deliver('charge.dispute.created', harness.stripe.dispute(foreign.id))).json.applied).toBe(false);
    expect((await getPayment(payment.uuid)).dispute).toBeUndefined();

    // Our own intent's dispute as Stripe sends it (platform account, test mode) is applied: the check binds, it does not block.
    expect((await deliver('charge.dispute.created', harness.stripe.dispute(ours.id))).json.applied).toBe(true);
    expect((await getPayment(payment.uuid)).dispute).toMatchObject({ status: 'needs_response' });
    expect((await getPayment(payment.uuid)).refunds).toEqual([]);
  });

  it('settles a pending payment only from its own intent, account and mode', async () => {
    const pending = await pay({ payment_information: { payment_method: 'pm_card_threeDSecure2Required' } });
    expect(pending.json.status, pending.text).toBe('pending');
    const uuid = pending.json.uuid as string;
    const foreign = (await attackersIntent(uuid)) as unknown as Record<string, unknown>;
    expect((await deliver('payment_intent.succeeded', foreign)).json.applied).toBe(false);

    const ours = intentOf(pending.json) as { id: string };
    harness.stripe.decide(ours.id, true);
    const decided = intentOf(pending.json) as Record<string, unknown>;
    // Our intent, but claimed as another account's or as live money.
    expect((await deliver('payment_intent.succeeded', decided, { account: ATTACKER })).json.applied).toBe(false);
    expect((await deliver('payment_intent.succeeded', decided, { livemode: true })).json.applied).toBe(false);
    expect((await getPayment(uuid)).status).toBe('pending');

    expect((await deliver('payment_intent.succeeded', decided)).json.applied).toBe(true);
    expect((await getPayment(uuid)).status).toBe('succeeded');
  });

  it('binds before it alarms: another account’s “paid” about a payment at another provider pages no one as a double charge', async () => {
    const victim = await victimPayment();
    const intent = (await attackersIntent(victim.uuid)) as unknown as Record<string, unknown>;
    const errors = vi.spyOn(logger, 'error');
    try {
      const succeeded = await deliver('payment_intent.succeeded', intent);
      expect(succeeded.json).toEqual({ received: true, applied: false });
      // The binding's alarm (callback_unbound), not the double-charge alarm a person acts on.
      expect(errors).toHaveBeenCalledWith(CALLBACK_UNBOUND, expect.objectContaining({ object: victim.uuid }));
      expect(errors).not.toHaveBeenCalledWith(PAID_AT_OTHER_PROVIDER, expect.anything());
    } finally {
      errors.mockRestore();
    }
    expect((await otherCharity(`/payments/${victim.uuid}`)).json).toMatchObject({
      status: 'succeeded',
      provider: 'simulated',
    });
  });
});
