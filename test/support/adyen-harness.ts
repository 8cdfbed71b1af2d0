import { now } from '@svc/core';
import { forgetProviderHealth } from '@svc/payments';
import { applySeed, DEMO_SEED, parseSeed } from '@svc/seed';
import { afterAll, beforeAll } from 'vitest';
import { type AdyenStandIn, type AdyenStandInOptions, startAdyenStandIn } from './adyen-stand-in';
import { type ApiResponse, call, DEMO, seedDemo, tokenFor } from './api';

/**
 * Payments on Adyen, end to end through the service, against a server speaking Adyen's Checkout
 * API (adyen-stand-in.ts) that the library reaches through SVC_ADYEN_API_BASE: one stand-in per
 * test file, its clock the service's, and the second demo account given Adyen and routed
 * profiles. `useAdyen()` in a test file's top level registers the hooks and returns the handles.
 */
export const ACCOUNT = DEMO.secondAccount;
export const MERCHANT = 'CharityECOM';

export const ADYEN_PROFILES = [
  { name: 'card', payment_method: 'card', provider: 'simulated' },
  { name: 'card-adyen', payment_method: 'card', provider: 'adyen', merchant_account: MERCHANT, raw_card_data: true },
  { name: 'card-adyen-web', payment_method: 'card', provider: 'adyen', merchant_account: MERCHANT },
  { name: 'card-adyen-foreign', payment_method: 'card', provider: 'adyen', merchant_account: 'SomeoneElses' },
  { name: 'twint-adyen', payment_method: 'twint', provider: 'adyen', merchant_account: MERCHANT },
  { name: 'sepa-adyen', payment_method: 'sepa_dd', provider: 'adyen', merchant_account: MERCHANT },
  // Adyen first, the simulated provider behind it: fail-over (both take the contract's raw card fields).
  {
    name: 'card-route',
    payment_method: 'card',
    raw_card_data: true,
    route: [{ provider: 'adyen', merchant_account: MERCHANT }, { provider: 'simulated' }],
  },
  // The simulated provider first, Adyen behind it.
  {
    name: 'card-simulated-first',
    payment_method: 'card',
    raw_card_data: true,
    route: [{ provider: 'simulated' }, { provider: 'adyen', merchant_account: MERCHANT }],
  },
];

export interface AdyenHarness {
  adyen: AdyenStandIn;
  token: string;
}

export function useAdyen(options: AdyenStandInOptions = {}): AdyenHarness {
  const harness = {} as AdyenHarness;
  beforeAll(async () => {
    harness.adyen = await startAdyenStandIn({ clock: now, ...options });
    process.env.SVC_ADYEN_API_BASE = harness.adyen.url;
    process.env.SVC_ADYEN_API_KEY = harness.adyen.apiKey;
    process.env.SVC_ADYEN_HMAC_KEY = harness.adyen.hmacKey;
    // A stand-in that hangs is given up on quickly: tests do not wait 18 s for an unknown outcome.
    process.env.SVC_ADYEN_TIMEOUT_MS = '400';
    await seedDemo();
    await useProfiles(ADYEN_PROFILES);
    forgetProviderHealth();
    harness.token = await tokenFor(DEMO.client);
  });
  afterAll(async () => {
    await harness.adyen.close();
    for (const name of ['SVC_ADYEN_API_BASE', 'SVC_ADYEN_API_KEY', 'SVC_ADYEN_HMAC_KEY', 'SVC_ADYEN_TIMEOUT_MS']) {
      delete process.env[name];
    }
  });
  return harness;
}

/** Gives the demo's second account these payment method profiles (a charity editing its routes). */
export async function useProfiles(profiles: readonly unknown[]): Promise<void> {
  const seed = structuredClone(DEMO_SEED) as {
    organisations: Array<{ accounts: Array<{ uuid: string; payment_method_profiles?: unknown[] }> }>;
  };
  for (const organisation of seed.organisations) {
    for (const account of organisation.accounts) {
      if (account.uuid === ACCOUNT) account.payment_method_profiles = [...profiles];
    }
  }
  await applySeed(parseSeed(seed));
}

export { adyenCard, DONOR_BROWSER } from './adyen-stand-in';

/** Calls made with the harness's token and stand-in. */
export function adyenCalls(harness: AdyenHarness) {
  let issuedAt = Number.NEGATIVE_INFINITY;
  const bearer = async () => {
    if (now() - issuedAt > 3000 || now() < issuedAt) {
      harness.token = await tokenFor(DEMO.client);
      issuedAt = now();
    }
    return harness.token;
  };
  const api = async (method: string, path: string, body?: unknown): Promise<ApiResponse> =>
    call(method, path, { token: await bearer(), ...(body === undefined ? {} : { body }) });
  const pay = async (fields: Record<string, unknown>): Promise<ApiResponse> =>
    api('POST', '/payments', {
      account_uuid: ACCOUNT,
      payment_method: 'card',
      profile: 'card-adyen',
      amount: { value: '2500', currency: 'CHF' },
      test_mode: true,
      return_url: 'https://charity.example.org/thanks',
      ...fields,
    });
  /** Delivers what the stand-in has queued, as Adyen would POST it (optionally altered first). */
  const notify = async (
    alter: (body: ReturnType<AdyenStandIn['takeNotifications']>) => unknown = (body) => body,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse> =>
    call('POST', '/providers/adyen/notifications', {
      rawBody: JSON.stringify(alter(harness.adyen.takeNotifications())),
      headers: { 'content-type': 'application/json', ...headers },
    });
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies freely
  const getPayment = async (uuid: string): Promise<any> => (await api('GET', `/payments/${uuid}`)).json;
  /** Our payment's payment at the stand-in. */
  const atAdyen = (uuid: string) => harness.adyen.byReference(uuid);
  return { api, pay, notify, getPayment, atAdyen };
}
