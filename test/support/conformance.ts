import { advanceClock, derivedUuid, now } from '@svc/core';
import { expect, it } from 'vitest';
import { type ApiResponse, call, DEMO, tokenFor } from './api';
import { streamEvents } from './stream';

/**
 * The provider conformance kit (issue 45, point 12): what every payment provider adapter must
 * show, asserted through the API alone (HTTP through the local gateway, the table's events, the
 * service clock and `/_local/settle`), the same assertions for every provider. A provider is
 * brought under test by a `ProviderUnderTest` driver (test/support/conformance-*.ts), which knows
 * how to make its stand-in decline, lose an answer, settle later and so on; the suite is
 * test/provider-conformance.test.ts. A new PSP is added by writing its driver and passing it.
 *
 * A behaviour a provider has no such thing for (the simulated provider has no dashboard to refund
 * in) is declared `unsupported` with the reason, and the kit registers a test saying so in place of
 * the behaviour's tests: nothing is skipped silently.
 */

/** A capability the provider does not have, and why. */
export interface Unsupported {
  readonly unsupported: string;
}
export type Capability<T> = T | Unsupported;

export function isUnsupported<T>(capability: Capability<T>): capability is Unsupported {
  return typeof capability === 'object' && capability !== null && 'unsupported' in capability;
}

/** A payment or payment source as the API answers it (read freely). */
// biome-ignore lint/suspicious/noExplicitAny: tests read response bodies freely
export type Answer = any;

/** Fields of a payment request: `payment_method`, `profile`, `payment_information`, `amount`… */
export type PaymentFields = Record<string, unknown>;

/** A way the donor is sent to the provider's page (3-D Secure, TWINT) and back. */
export interface Redirect {
  /** What it is, for the tests' names. */
  name: string;
  fields: PaymentFields;
  /** `status_reason` of a payment the donor refused on the provider's page. */
  refusalReason: string;
}

export interface ProviderUnderTest {
  readonly name: string;
  /**
   * Registers the hooks (beforeAll, afterAll) that start the provider's stand-in, configure the
   * service for it, and give the demo's second account the provider's profiles. Called in the
   * provider's own describe block.
   */
  setUp(): void;
  /** Before each test: no fault armed, no callback of an earlier test left to deliver. */
  reset(): Promise<void>;
  /**
   * Delivers every callback (webhook, notification) the provider has for us now, in its order, as
   * it would send them, and expects each acknowledged; nothing for a provider that sends none.
   */
  deliverCallbacks(): Promise<void>;
  /** Delivers the callbacks of the last delivery again, as a provider's retry would. */
  redeliverCallbacks(): Promise<void>;

  /** Card payments charged at once. */
  card: {
    /** Profile, payment method and `payment_information` of a card the provider charges at once. */
    charged: PaymentFields;
    /** The same for a card it declines, and the `status_reason` it is failed with. */
    declined: PaymentFields;
    declineReason: string;
    /** A card declined for lack of funds (`insufficient_funds`). */
    insufficientFunds: PaymentFields;
  };

  /** Ways the donor approves on the provider's page; the first is used where one is enough. */
  redirects: readonly [Redirect, ...Redirect[]];
  /**
   * The donor decides on the provider's page and comes back: our return endpoint's answer (a
   * redirect to the payment's `return_url`).
   */
  completeRedirect(payment: Answer, approved: boolean): Promise<ApiResponse>;
  /** The donor of `payment` comes back carrying what proves `other`'s decision (its token or result). */
  returnWithProofOf(payment: Answer, other: Answer): Promise<ApiResponse>;
  /** The donor approves on the provider's page and never comes back: the provider's callback must tell us. */
  approvalWithoutReturn: Capability<{ redirect: Redirect; approve(payment: Answer): Promise<void> }>;
  /** A redirect the donor abandons is given up (cancelled at the provider) once their time is over. */
  abandonedRedirectsExpire: Capability<true>;

  /** The provider's answer never comes and it made nothing (a 5xx, a timeout before it began). */
  unknownOutcome: { arm(): Promise<void>; disarm(): Promise<void> };
  /** The provider does the work, and its answer is lost on the way (we never heard). */
  lostAnswer: Capability<{
    loseNextAnswer(): Promise<void>;
    /**
     * What the provider made under our reference, one entry per payment (or recurring charge) it
     * has: `charged` when it took the money (authorised, succeeded, processing), else `not charged`.
     */
    paymentsAt(reference: string): Array<'charged' | 'not charged'>;
    /** Refunds the provider made of our payment. */
    refundsAt(payment: Answer): number;
  }>;

  /** A SEPA debit, pending while the provider processes it, settled later. */
  asynchronousSettlement: Capability<{
    fields: PaymentFields;
    /** The debit settles (or is refused) at the provider; its callbacks follow. */
    settle(payment: Answer, succeeded: boolean): Promise<void>;
    /** `status_reason` of a debit the provider refused. */
    failureReason: string;
    /** The donor's bank returns the settled debit. */
    returnDebit: Capability<(payment: Answer) => Promise<void>>;
  }>;

  /** A refund made outside our API (Stripe's Dashboard, Adyen's Customer Area), of `amount` minor units. */
  externalRefund: Capability<(payment: Answer, amount: number) => Promise<void>>;
  /** A refund the provider accepted fails later (the card was closed). */
  failingRefund: Capability<{ charged: PaymentFields; fail(payment: Answer, refund: Answer): Promise<void> }>;

  /** A dispute (chargeback) of a card payment. */
  disputes: Capability<{
    /** Opened, its funds withdrawn from the charity. */
    open(payment: Answer): Promise<void>;
    /** Decided in the charity's favour, its funds given back. */
    win(payment: Answer): Promise<void>;
  }>;

  /** Saving a card for later charges without the donor (`POST /payment-sources`). */
  savedCard: PaymentFields;

  /**
   * Callbacks that are not the payment's own: from another of the provider's accounts, in the
   * other mode (live money on a test payment), or about another reference of the provider's. Each
   * returns the answers our endpoint gave.
   */
  unboundCallbacks: Capability<
    (variant: UnboundVariant, kind: 'settlement' | 'refund' | 'dispute', payment: Answer) => Promise<ApiResponse[]>
  >;
}

export const UNBOUND_VARIANTS = ['account', 'mode', 'reference'] as const;
export type UnboundVariant = (typeof UNBOUND_VARIANTS)[number];

/**
 * Registers a behaviour's tests when the driver has the capability, or one test recording that
 * it declares the capability absent and why (a reason someone can check, not an empty string).
 */
export function whenSupported<T>(
  driver: ProviderUnderTest,
  behaviour: string,
  capability: Capability<T>,
  register: (capability: T) => void,
): void {
  if (isUnsupported(capability)) {
    it(`declares ${behaviour} unsupported: ${capability.unsupported}`, () => {
      expect(capability.unsupported.length, `${driver.name} gives no reason`).toBeGreaterThan(20);
    });
    return;
  }
  register(capability);
}

// The API as the kit uses it: one caller, its token renewed as the service clock moves.

let token: string | undefined;
let issuedAt = Number.NEGATIVE_INFINITY;

export async function bearer(): Promise<string> {
  if (!token || now() - issuedAt > 3000 || now() < issuedAt) {
    token = await tokenFor(DEMO.client);
    issuedAt = now();
  }
  return token;
}

export async function api(method: string, path: string, body?: unknown): Promise<ApiResponse> {
  return call(method, path, { token: await bearer(), ...(body === undefined ? {} : { body }) });
}

/** A payment on the demo's second account, in test mode, with a return_url, of CHF 25 unless the fields say otherwise. */
export function pay(fields: PaymentFields, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return bearer().then((bearerToken) =>
    call('POST', '/payments', {
      token: bearerToken,
      headers: { 'user-agent': 'donor-browser/1.0', ...headers },
      body: {
        account_uuid: DEMO.secondAccount,
        amount: { value: '2500', currency: 'CHF' },
        test_mode: true,
        return_url: RETURN_URL,
        ...fields,
      },
    }),
  );
}

export const RETURN_URL = 'https://charity.example.org/thanks';

export async function getPayment(uuid: string): Promise<Answer> {
  const response = await api('GET', `/payments/${uuid}`);
  expect(response.status, response.text).toBe(200);
  return response.json;
}

export async function refund(payment: Answer, value?: string): Promise<ApiResponse> {
  return api(
    'POST',
    `/payments/${payment.uuid}/refunds`,
    value === undefined ? {} : { amount: { value, currency: payment.amount.currency } },
  );
}

/** The names of the events about one object (a payment, a refund, an invoice), in order. */
export async function eventsOf(uuid: string): Promise<string[]> {
  return (await streamEvents()).filter((event) => event.object_uuid === uuid).map((event) => event.name);
}

/** Background work now (`POST /_local/settle`). */
export async function settle(): Promise<void> {
  const response = await call('POST', '/_local/settle');
  expect(response.status, response.text).toBe(200);
}

/**
 * What waits on the provider is resolved: first by the provider's callbacks, then by the service's
 * time passing until `done` holds: a minute, a quarter of an hour, an hour, then a day at a time
 * (up to four days, past every provider's give-up time); at each step background work runs and
 * the provider's callbacks are delivered. The same steps for every provider, however it resolves
 * what waits on it.
 */
export async function resolveUntil(driver: ProviderUnderTest, done: () => Promise<boolean>): Promise<void> {
  await driver.deliverCallbacks();
  if (await done()) return;
  for (const seconds of [61, 15 * 60, 3600, 86_400, 86_400, 86_400, 86_400]) {
    advanceClock(seconds);
    await settle();
    await driver.deliverCallbacks();
    if (await done()) return;
  }
}

/** A payment's status is no longer `pending`. */
export function settled(uuid: string): () => Promise<boolean> {
  return async () => (await getPayment(uuid)).status !== 'pending';
}

/** The payment of a recurring charge attempt (its uuid is derived from the attempt's). */
export function paymentOfAttempt(attemptUuid: string): string {
  return derivedUuid('payment', attemptUuid);
}
