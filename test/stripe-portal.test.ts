import { findSubscription } from '@svc/subscriptions';
import { describe, expect, it } from 'vitest';
import { PORTAL_SETTINGS_ON, redeem } from '../services/portal/src/testing-portal';
import { call, DEMO } from './support/api';
import { ACCOUNT, stripeCalls, useStripe } from './support/stripe-harness';

/**
 * The donor portal's payment-method change on Stripe (issue 47 point 2): the new card is a
 * Stripe SetupIntent made as POST /payment-sources makes one, through the portal's own function
 * (its JSON API, with the session and its CSRF token); a card that needs 3-D Secure waits at
 * Stripe's redirect, and the subscription keeps its old card until the new one is active.
 */
const harness = useStripe();
const { api, saveCard, setupOf, settle } = stripeCalls(harness);

const SETTINGS = PORTAL_SETTINGS_ON;

let n = 0;

async function donorOnStripe() {
  // Starts the local stand-ins (the queues, SES) that the code's mail goes through.
  await settle();
  expect((await api('PUT', `/organisations/${DEMO.org}/portal-settings`, SETTINGS)).status).toBe(200);
  const email = `stripe-donor-${Date.now()}-${n++}@example.org`;
  const supporter = (await api('POST', '/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada', email })).json;
  const source = await saveCard('pm_card_visa');
  expect(source.status, source.text).toBe(201);
  const subscription = await api('POST', '/subscriptions', {
    account_uuid: ACCOUNT,
    payment_source_uuid: source.json.uuid,
    supporter_uuid: supporter.uuid,
    currency: 'CHF',
    amount: 1500,
    recurring_interval: 'monthly',
    status: 'active',
    test_mode: true,
  });
  expect(subscription.status, subscription.text).toBe(201);
  const link = await api('POST', `/supporters/${supporter.uuid}/portal-links`, { flow: 'payment_method' });
  const url = new URL(link.json.url);
  const { session } = await redeem(`${url.pathname}${url.search}`);
  if (!session) throw new Error('No portal session');
  const home = await call('GET', '/portal/home', { headers: { cookie: session } });
  const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(home.text)?.[1] ?? '';
  const portal = (method: string, path: string, body?: unknown) =>
    call(method, path, { headers: { cookie: session, 'x-csrf-token': csrf }, ...(body ? { body } : {}) });
  const code = async () => {
    expect((await portal('POST', '/portal/api/codes')).status).toBe(202);
    await settle();
    const mail = (await call('GET', `/_local/mail?to=${encodeURIComponent(email)}`)).json[0];
    return /\b(\d{6})\b/.exec(mail?.text ?? '')?.[1] ?? '';
  };
  return { subscription: subscription.json.uuid as string, oldSource: source.json.uuid as string, portal, code };
}

describe('a donor’s new card on Stripe, through the portal', () => {
  it('is a SetupIntent on the subscription’s profile, used from the next charge', async () => {
    const donor = await donorOnStripe();
    const changed = await donor.portal('POST', `/portal/api/subscriptions/${donor.subscription}/payment-method`, {
      code: await donor.code(),
      payment_method: 'card',
      payment_information: { payment_method: 'pm_card_mastercard' },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json.status).toBe('active');
    const newSource = changed.json.subscription.payment_source_uuid as string;
    expect(newSource).not.toBe(donor.oldSource);
    expect(setupOf({ uuid: newSource })).toMatchObject({ status: 'succeeded' });
    expect((await api('GET', `/payment-sources/${newSource}`)).json).toMatchObject({
      status: 'active',
      provider: 'stripe',
      profile: 'card-stripe',
    });
  });

  it('waits for 3-D Secure at Stripe: the old card stays until the new one is active', async () => {
    const donor = await donorOnStripe();
    const pending = await donor.portal('POST', `/portal/api/subscriptions/${donor.subscription}/payment-method`, {
      code: await donor.code(),
      payment_method: 'card',
      payment_information: { payment_method: 'pm_card_threeDSecure2Required' },
    });
    expect(pending.status, pending.text).toBe(200);
    expect(pending.json).toMatchObject({ status: 'pending', redirect_url: expect.any(String) });
    expect(pending.json.subscription.payment_source_uuid).toBe(donor.oldSource);
    const listed = await donor.portal('GET', '/portal/api/subscriptions');
    expect(listed.json[0].payment_source_uuid).toBe(donor.oldSource);
    // The donor approves at Stripe and comes back: the new card is taken into use.
    const pendingSource = (await findSubscription(donor.subscription))?.pending_source_uuid ?? '';
    const setup = setupOf({ uuid: pendingSource }) as {
      id: string;
      next_action: { redirect_to_url: { return_url: string } };
    };
    const returnUrl = setup.next_action.redirect_to_url.return_url;
    harness.stripe.decideSetup(setup.id, true);
    expect((await call('GET', returnUrl.replace(/^https?:\/\/[^/]+/, ''))).status).toBe(200);
    const after = await donor.portal('GET', '/portal/api/subscriptions');
    expect(after.json[0].payment_source_uuid).toBe(pendingSource);
    expect((await findSubscription(donor.subscription))?.pending_source_uuid).toBeUndefined();
  });
});
