import { afterAll, beforeAll, expect } from 'vitest';
import { useProfiles } from './adyen-harness';
import { call, GOOD_CARD_INFORMATION, seedDemo } from './api';
import type { Answer, ProviderUnderTest } from './conformance';

/**
 * The simulated provider under the conformance kit (test/support/conformance.ts). It is built in:
 * it answers every call at once from the request alone, keeps no state, sends no callbacks, and
 * its "provider page" for 3-D Secure and TWINT is the service's own approval page. Its unknown
 * outcome is the local runtime's fault switch (`POST /_local/providers/simulated/fault`), which
 * answers in its place without calling it.
 */
export const SIMULATED_PROFILES = [
  { name: 'card-simulated', payment_method: 'card', provider: 'simulated' },
  { name: 'twint-simulated', payment_method: 'twint', provider: 'simulated' },
  { name: 'sepa-simulated', payment_method: 'sepa_dd', provider: 'simulated' },
];

const card = (number: string) => ({
  payment_method: 'card',
  profile: 'card-simulated',
  payment_information: { ...GOOD_CARD_INFORMATION, number },
});

const fault = async (mode: 'timeout' | null) => {
  const response = await call('POST', '/_local/providers/simulated/fault', { body: { mode } });
  expect(response.status, response.text).toBe(200);
};

/** The donor's decision on the approval page the payment's action names, under `token`. */
function decideOnPage(payment: Answer, token: string | null, approved: boolean) {
  const page = new URL(payment.action.url);
  return call('POST', page.pathname, {
    rawBody: new URLSearchParams({ token: token ?? '', decision: approved ? 'approve' : 'decline' }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}
const tokenOf = (payment: Answer) => new URL(payment.action.url).searchParams.get('token');

export function simulatedDriver(): ProviderUnderTest {
  return {
    name: 'simulated',
    setUp() {
      beforeAll(async () => {
        await seedDemo();
        await useProfiles(SIMULATED_PROFILES);
      });
      afterAll(async () => {
        await fault(null);
      });
    },
    async reset() {
      await fault(null);
    },
    async deliverCallbacks() {},
    async redeliverCallbacks() {},

    card: {
      charged: card('4242424242424242'),
      declined: card('4000000000000002'),
      declineReason: 'card_declined',
      insufficientFunds: card('4000000000009995'),
    },
    redirects: [
      { name: '3-D Secure card', fields: card('4000000000003220'), refusalReason: 'declined_by_donor' },
      {
        name: 'TWINT',
        fields: { payment_method: 'twint', profile: 'twint-simulated' },
        refusalReason: 'declined_by_donor',
      },
    ],
    completeRedirect: (payment, approved) => decideOnPage(payment, tokenOf(payment), approved),
    returnWithProofOf: (payment, other) => decideOnPage(payment, tokenOf(other), true),
    approvalWithoutReturn: {
      unsupported:
        'the donor decides on the service’s own approval page (/simulated/…), so no decision is ever made without the service hearing it',
    },
    abandonedRedirectsExpire: true,

    unknownOutcome: {
      arm: () => fault('timeout'),
      disarm: () => fault(null),
    },
    lostAnswer: {
      unsupported:
        'the simulated provider keeps no records and the local fault answers in its place without calling it: it can never have done what we did not hear of',
    },
    asynchronousSettlement: {
      unsupported: 'it answers a SEPA debit at once (succeeded); nothing of it settles later',
    },
    externalRefund: {
      unsupported: 'it has no dashboard nor any callback: a refund is made through our API or not at all',
    },
    failingRefund: {
      unsupported: 'it answers every refund at once (succeeded) and keeps no state that could fail later',
    },
    disputes: {
      unsupported: 'it has no disputes or chargebacks, and no callback that could report one',
    },
    savedCard: card('5555555555554444'),
    unboundCallbacks: {
      unsupported:
        'it sends no callbacks: it answers every call at once, and its one return (the approval page) is bound by the return test every provider passes',
    },
  };
}
