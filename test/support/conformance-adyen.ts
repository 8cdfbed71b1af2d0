import { newUuid } from '@svc/core';
import { expect } from 'vitest';
import { type AdyenHarness, adyenCard, MERCHANT, useAdyen } from './adyen-harness';
import { ADYEN_DECLINE, ADYEN_HOLDER_NAMES, ADYEN_TEST_CARDS, type AdyenStandIn } from './adyen-stand-in';
import { type ApiResponse, call } from './api';
import type { Answer, ProviderUnderTest, UnboundVariant } from './conformance';

/**
 * Adyen under the conformance kit (test/support/conformance.ts), through the Adyen harness and
 * stand-in: the stand-in queues the notifications Adyen would send, and the driver delivers them
 * as Adyen does, one signed batch, with any the driver made itself (a refund made in Adyen's
 * Customer Area, which the stand-in has no API for).
 */
type Item = Record<string, unknown>;
type Batch = ReturnType<AdyenStandIn['takeNotifications']>;

export function adyenDriver(): ProviderUnderTest {
  let harness: AdyenHarness;
  /** Notifications the driver made, delivered with the stand-in's next batch. */
  let made: Item[] = [];
  let lastBatch: Batch | undefined;
  /** The redirectResult of each payment the donor decided on (their decision is not asked again). */
  const results = new Map<string, string>();

  const adyen = () => harness.adyen;
  /** Our payment's pspReference: exactly one payment at Adyen under its reference. */
  const pspOf = (payment: Answer): string => {
    const at = adyen().byReference(payment.uuid);
    expect(at, `payments at Adyen for ${payment.uuid}`).toHaveLength(1);
    return String(at[0]?.pspReference);
  };
  /** The returnUrl we sent Adyen for the payment (our return endpoint, with the payment's token). */
  const returnUrlOf = (uuid: string): string => {
    const request = adyen().requests.find((r) => r.path === '/v72/payments' && r.idempotencyKey === `${uuid}:payment`);
    return String((request?.body as { returnUrl?: string } | undefined)?.returnUrl).replace(/^https?:\/\/[^/]+/, '');
  };
  /** The donor back from Adyen's page with the redirectResult Adyen appends to the returnUrl. */
  const comeBack = (uuid: string, redirectResult: string) =>
    call('GET', `${returnUrlOf(uuid)}&redirectResult=${encodeURIComponent(redirectResult)}`);
  const decide = (payment: Answer, approved: boolean): string => {
    const psp = pspOf(payment);
    const result = results.get(psp) ?? adyen().approve(psp, approved);
    results.set(psp, result);
    return result;
  };
  const send = async (batch: Batch | { live: string; notificationItems: unknown[] }): Promise<ApiResponse> => {
    const response = await call('POST', '/providers/adyen/notifications', {
      rawBody: JSON.stringify(batch),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status, response.text).toBe(200);
    expect(response.text).toBe('[accepted]');
    return response;
  };
  /** A signed item about our payment, as Adyen sends one, with the fields given. */
  const item = (payment: Answer, fields: Item): Item =>
    adyen().sign({
      pspReference: randomPsp(),
      merchantReference: payment.uuid,
      merchantAccountCode: MERCHANT,
      amount: { currency: payment.amount.currency, value: Number(payment.amount.value) },
      success: 'true',
      reason: '',
      eventDate: new Date().toISOString(),
      additionalData: {},
      ...fields,
    });

  const card = (number: string, holder?: string) => ({
    payment_method: 'card',
    profile: 'card-adyen',
    payment_information: adyenCard(number, holder),
  });
  const twint = {
    name: 'TWINT',
    fields: { payment_method: 'twint', profile: 'twint-adyen' },
    // The stand-in's refusal in the app: 'Shopper Cancelled', refusal code 16.
    refusalReason: 'declined',
  };

  return {
    name: 'adyen',
    setUp() {
      harness = useAdyen();
    },
    async reset() {
      adyen().fault(null);
      adyen().takeNotifications();
      made = [];
      lastBatch = undefined;
    },
    async deliverCallbacks() {
      const taken = adyen().takeNotifications();
      const items = [...taken.notificationItems, ...made.map((one) => ({ NotificationRequestItem: one }))];
      made = [];
      if (items.length === 0) return;
      lastBatch = { ...taken, notificationItems: items };
      await send(lastBatch);
    },
    async redeliverCallbacks() {
      if (lastBatch) await send(lastBatch);
    },

    card: {
      charged: card(ADYEN_TEST_CARDS.visa),
      declined: card(ADYEN_TEST_CARDS.visa, ADYEN_DECLINE.holderName),
      declineReason: 'declined',
      insufficientFunds: card(ADYEN_TEST_CARDS.visa, ADYEN_HOLDER_NAMES.notEnoughBalance),
    },
    redirects: [
      { name: '3-D Secure card', fields: card(ADYEN_TEST_CARDS.threeDS2), refusalReason: 'authentication_failed' },
      twint,
    ],
    async completeRedirect(payment, approved) {
      return comeBack(payment.uuid, decide(payment, approved));
    },
    async returnWithProofOf(payment, other) {
      return comeBack(payment.uuid, decide(other, true));
    },
    // TWINT authorises in the donor's app, whether or not they come back (a 3-D Secure card is
    // authorised only by our /payments/details call, so it has no such case).
    approvalWithoutReturn: {
      redirect: twint,
      async approve(payment) {
        decide(payment, true);
      },
    },
    abandonedRedirectsExpire: true,

    unknownOutcome: {
      // A 500 in Adyen's error shape, the request not processed.
      async arm() {
        adyen().fault('error', { times: 1 });
      },
      async disarm() {
        adyen().fault(null);
      },
    },
    lostAnswer: {
      // Adyen processes the request fully, then the connection drops without an answer.
      async loseNextAnswer() {
        adyen().fault('lose_answer', { times: 1 });
      },
      paymentsAt: (reference) =>
        adyen()
          .byReference(reference)
          .map((at) => (at.status === 'authorised' ? 'charged' : 'not charged')),
      refundsAt: (payment) =>
        adyen()
          .byReference(payment.uuid)
          .reduce((sum, at) => sum + at.refunds.length, 0),
    },

    asynchronousSettlement: {
      fields: {
        payment_method: 'sepa_dd',
        profile: 'sepa-adyen',
        amount: { value: '5000', currency: 'EUR' },
        payment_information: { iban: 'DE89 3704 0044 0532 0130 00', account_holder: 'Ada Donor' },
      },
      async settle(payment, succeeded) {
        adyen().settle(pspOf(payment), succeeded ? 'success' : 'failure');
      },
      failureReason: 'declined',
      // A chargeback on a SEPA debit: the bank's return.
      returnDebit: async (payment) => {
        adyen().chargeback(pspOf(payment));
      },
    },

    // A refund made in Adyen's Customer Area: REFUND with the payment's own merchantReference and
    // its pspReference as originalReference.
    externalRefund: async (payment, amount) => {
      made.push(
        item(payment, { eventCode: 'REFUND', originalReference: pspOf(payment), amount: amountOf(payment, amount) }),
      );
    },
    failingRefund: {
      // Adyen's documented test holder name whose refunds fail (REFUND_FAILED after REFUND).
      charged: card(ADYEN_TEST_CARDS.visa, ADYEN_HOLDER_NAMES.refundFails),
      async fail() {},
    },

    disputes: {
      async open(payment) {
        adyen().chargeback(pspOf(payment));
      },
      async win(payment) {
        adyen().reverseChargeback(pspOf(payment));
      },
    },

    savedCard: card(ADYEN_TEST_CARDS.mastercard),

    unboundCallbacks: async (variant: UnboundVariant, kind, payment) => {
      const psp = pspOf(payment);
      const other = randomPsp();
      const claim: Item =
        kind === 'settlement'
          ? { eventCode: 'AUTHORISATION', pspReference: psp }
          : kind === 'refund'
            ? { eventCode: 'REFUND', merchantReference: `${payment.uuid}:${newUuid()}`, originalReference: psp }
            : { eventCode: 'CHARGEBACK', originalReference: psp };
      const altered: Item =
        variant === 'account'
          ? { merchantAccountCode: 'SomeoneElses' }
          : variant === 'reference'
            ? kind === 'settlement'
              ? { pspReference: other }
              : { originalReference: other }
            : {};
      const batch = {
        live: variant === 'mode' ? 'true' : 'false',
        notificationItems: [{ NotificationRequestItem: item(payment, { ...claim, ...altered }) }],
      };
      return [await send(batch)];
    },
  };
}

function amountOf(payment: Answer, minor: number) {
  return { currency: payment.amount.currency, value: minor };
}

/** A pspReference of Adyen's form (16 characters), not one of the stand-in's. */
function randomPsp(): string {
  return `Z${newUuid().replace(/-/g, '').slice(0, 15).toUpperCase()}`;
}
