import { describe, expect, it } from 'vitest';
import { type ApiResponse, call } from './support/api';
import { stripeCalls, useStripe } from './support/stripe-harness';

/**
 * Stripe's return pages with real state (the Stripe stand-in's payments): the page the handler
 * itself writes carries the one security header set (test/hostile-input.test.ts walks every
 * HTML route of the route table; these two need a Stripe payment to answer a page).
 */
const harness = useStripe();
const { pay, intentOf, setupOf, saveCard } = stripeCalls(harness);

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

const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');

describe("Stripe's return pages", () => {
  it('for a payment without a return_url', async () => {
    const pending = await pay({
      payment_information: { payment_method: 'pm_card_threeDSecure2Required' },
      return_url: undefined,
    });
    const intent = intentOf(pending.json) as { id: string; return_url: string };
    harness.stripe.decide(intent.id, true);
    expectPageHeaders(await call('GET', `${local(intent.return_url)}&payment_intent=${intent.id}`));
  });

  it('for a payment source', async () => {
    const source = await saveCard('pm_card_threeDSecure2Required');
    expect(source.json.status, source.text).toBe('pending');
    const setup = setupOf(source.json) as { id: string; next_action: { redirect_to_url: { return_url: string } } };
    // Read before the decision: deciding clears the stand-in's next_action, as Stripe does.
    const returnUrl = setup.next_action.redirect_to_url.return_url;
    harness.stripe.decideSetup(setup.id, true);
    expectPageHeaders(await call('GET', local(returnUrl)));
  });
});
