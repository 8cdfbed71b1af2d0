import { describe, expect, it } from 'vitest';
import { ACCOUNT, adyenCalls, adyenCard, useAdyen } from './support/adyen-harness';
import { ADYEN_TEST_CARDS } from './support/adyen-stand-in';
import { type ApiResponse, call } from './support/api';

/**
 * Adyen's return pages with real state (the Adyen stand-in's payments): the page the handler
 * itself writes carries the one security header set (test/hostile-input.test.ts walks every
 * HTML route of the route table; these two need an Adyen payment to answer a page).
 */
const harness = useAdyen();
const { api, pay, atAdyen } = adyenCalls(harness);

function expectPageHeaders(page: ApiResponse) {
  expect(page.status, page.text).toBe(200);
  expect(page.headers['content-type']).toMatch(/^text\/html/);
  expect(page.headers).toMatchObject({
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  });
  expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
}

/** Back from Adyen's 3-D Secure page, approved, by the return URL we sent Adyen. */
async function comeBack(reference: string): Promise<ApiResponse> {
  const request = harness.adyen.requests.find(
    (r) => r.path === '/v72/payments' && r.idempotencyKey === `${reference}:payment`,
  );
  const returnUrl = String((request?.body as { returnUrl?: string } | undefined)?.returnUrl);
  const psp = String(atAdyen(reference)[0]?.pspReference);
  const redirectResult = harness.adyen.approve(psp, true);
  return call(
    'GET',
    `${returnUrl.replace(/^https?:\/\/[^/]+/, '')}&redirectResult=${encodeURIComponent(redirectResult)}`,
  );
}

describe("Adyen's return pages", () => {
  it('for a payment without a return_url', async () => {
    const pending = await pay({ payment_information: adyenCard(ADYEN_TEST_CARDS.threeDS2), return_url: undefined });
    expect(pending.json.status, pending.text).toBe('pending');
    expectPageHeaders(await comeBack(pending.json.uuid));
  });

  it('for a payment source', async () => {
    const source = await api('POST', '/payment-sources', {
      account_uuid: ACCOUNT,
      payment_method: 'card',
      profile: 'card-adyen',
      amount: { value: '1000', currency: 'CHF' },
      payment_information: adyenCard(ADYEN_TEST_CARDS.threeDS2Mastercard),
      test_mode: true,
    });
    expect(source.json.status, source.text).toBe('pending');
    expectPageHeaders(await comeBack(source.json.uuid));
  });
});
