import { DEFAULT_PAYMENT_METHOD_PROFILES, paymentMethodProfileSchema, upsertOrganisation } from '@svc/organisations';
import { findSubscription } from '@svc/subscriptions';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, seedDemo } from '../../../test/support/api';
import { billingRun, DEMO, ok, setClock } from '../../subscriptions/src/test-support';
import { hiddenField, PORTAL_SETTINGS_ON, postForm, redeem, settle, uniqueEmail } from './testing-portal';

/**
 * The donor's choice to cover the payment fees in the portal (issue 48 point 1): a checkbox on the
 * subscription's page and `cover_fees` in the JSON API's PATCH, both through subscriptions'
 * `changeTerms`, as the supporter. Never ticked in advance, shown only where there are fees to
 * cover (or the donor covers them, to turn it off), and not behind any of the organisation's
 * feature switches: it is the donor's choice.
 */
beforeAll(async () => {
  const seed = await seedDemo();
  for (const organisation of seed.organisations) {
    const account = organisation.accounts.find((candidate) => candidate.uuid === DEMO.account);
    if (!account) continue;
    account.payment_method_profiles = [
      { name: 'card-test', payment_method: 'card', provider: 'simulated' },
      { name: 'card-fees', payment_method: 'card', provider: 'simulated', fees: { percent: '2.9', fixed: '30' } },
      ...DEFAULT_PAYMENT_METHOD_PROFILES.filter((profile) => profile.payment_method !== 'card'),
    ].map((profile) => paymentMethodProfileSchema.parse(profile));
    await upsertOrganisation(organisation);
  }
  // Every feature off: the fee cover is the donor's choice whatever the organisation switched off.
  const off = Object.fromEntries(Object.keys(PORTAL_SETTINGS_ON.features).map((feature) => [feature, false]));
  await ok('PUT', `/organisations/${DEMO.org}/portal-settings`, { ...PORTAL_SETTINGS_ON, features: off });
  await settle();
});

interface Donor {
  subscription: string;
  cookie: string;
  csrf: string;
}

async function signedInDonor(profile: string): Promise<Donor> {
  const donor = await ok(
    'POST',
    '/supporters',
    { organisation_uuid: DEMO.org, first_name: 'Ada', email: uniqueEmail() },
    201,
  );
  const source = await ok(
    'POST',
    '/payment-sources',
    {
      account_uuid: DEMO.account,
      payment_method: 'card',
      profile,
      amount: { value: '100', currency: 'CHF' },
      payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
    },
    201,
  );
  const created = await ok(
    'POST',
    '/subscriptions',
    {
      account_uuid: DEMO.account,
      payment_source_uuid: source.uuid,
      supporter_uuid: donor.uuid,
      currency: 'CHF',
      amount: 2500,
      recurring_interval: 'monthly',
      status: 'active',
    },
    201,
  );
  await billingRun();
  const link = await ok('POST', `/supporters/${donor.uuid}/portal-links`, { flow: 'manage', locale: 'en' }, 201);
  const url = new URL(link.url);
  const { session } = await redeem(`${url.pathname}${url.search}`);
  if (!session) throw new Error('No session');
  const home = await call('GET', '/portal/home', { headers: { cookie: session } });
  const csrf = hiddenField(home.text, 'csrf_token');
  if (!csrf) throw new Error(`No CSRF token on the home page: ${home.status}`);
  return { subscription: created.uuid as string, cookie: session, csrf };
}

const subscriptionPage = (donor: Donor) =>
  call('GET', `/portal/subscriptions/${donor.subscription}?locale=en`, { headers: { cookie: donor.cookie } });

const sendFees = (donor: Donor, fields: Record<string, string>) =>
  postForm(`/portal/subscriptions/${donor.subscription}/fees`, { csrf_token: donor.csrf, locale: 'en', ...fields }, [
    donor.cookie,
  ]);

const stored = (donor: Donor) => ok('GET', `/subscriptions/${donor.subscription}`);

function expectDone(response: ApiResponse, donor: Donor): void {
  expect(response.status, response.text).toBe(303);
  expect(response.headers.location).toMatch(new RegExp(`^/portal/subscriptions/${donor.subscription}\\?done=fees`));
}

describe('the fee cover in the donor portal', () => {
  it('is a checkbox on the subscription page, unticked, with the fees and the total they make', async () => {
    setClock('2031-03-10T09:00:00');
    const donor = await signedInDonor('card-fees');
    const page = await subscriptionPage(donor);
    expect(page.status, page.text).toBe(200);
    expect(page.text).toContain(`action="/portal/subscriptions/${donor.subscription}/fees"`);
    expect(page.text).toMatch(/<input type="checkbox" id="cover_fees" name="cover_fees" value="on" aria-describedby/);
    // 2.9 % + CHF 0.30 on CHF 25.00: each charge CHF 26.06.
    expect(page.text).toContain('2.9%');
    expect(page.text).toContain('26.06');
  });

  it('turns the cover on and off with the form, and the next charge follows', async () => {
    setClock('2031-03-10T09:00:00');
    const donor = await signedInDonor('card-fees');
    expectDone(await sendFees(donor, { cover_fees_shown: '1', cover_fees: 'on' }), donor);
    expect(await stored(donor)).toMatchObject({ cover_fees: true, amount: 2500 });
    expect((await subscriptionPage(donor)).text).toMatch(/name="cover_fees" value="on" checked/);
    // An unticked box sends nothing: with the form's marker, that is "off".
    expectDone(await sendFees(donor, { cover_fees_shown: '1' }), donor);
    expect((await stored(donor)).cover_fees).toBe(false);
    expectDone(await sendFees(donor, { cover_fees_shown: '1', cover_fees: 'on' }), donor);
    setClock('2031-04-10T09:00:00');
    await billingRun();
    const invoices = (await ok('GET', `/subscriptions/${donor.subscription}/invoices`)) as Array<{
      created: number;
      amount: number;
      intended_amount: number;
    }>;
    expect(invoices.sort((a, b) => b.created - a.created)[0]).toMatchObject({ amount: 2606, intended_amount: 2500 });
  });

  it('is not offered where the payment method has no fees; asked anyway, it is the page again with the error', async () => {
    setClock('2031-03-10T09:00:00');
    const donor = await signedInDonor('card-test');
    expect((await subscriptionPage(donor)).text).not.toContain('/fees"');
    const refused = await sendFees(donor, { cover_fees_shown: '1', cover_fees: 'on' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('no fees to cover');
    expect((await stored(donor)).cover_fees).toBe(false);
  });

  it('is cover_fees in the JSON API’s PATCH, with the CSRF token, as the supporter', async () => {
    setClock('2031-03-10T09:00:00');
    const donor = await signedInDonor('card-fees');
    const patch = (body: unknown, headers: Record<string, string> = { 'x-csrf-token': donor.csrf }) =>
      call('PATCH', `/portal/api/subscriptions/${donor.subscription}`, {
        headers: { cookie: donor.cookie, ...headers },
        body,
      });
    expect((await patch({ cover_fees: true }, {})).status).toBe(403);
    const on = await patch({ cover_fees: true });
    expect(on.status, on.text).toBe(200);
    expect(on.json).toMatchObject({ cover_fees: true, amount: 2500 });
    expect((await patch({ cover_fees: 'yes' })).status).toBe(400);
    const off = await patch({ cover_fees: false });
    expect(off.json.cover_fees).toBe(false);
    const plain = await signedInDonor('card-test');
    const refused = await call('PATCH', `/portal/api/subscriptions/${plain.subscription}`, {
      headers: { cookie: plain.cookie, 'x-csrf-token': plain.csrf },
      body: { cover_fees: true },
    });
    expect(refused.status).toBe(400);
    expect(refused.json.error.message[0].property).toBe('cover_fees');
    // The change is the supporter's, announced as an update.
    expect((await findSubscription(donor.subscription))?.events).toMatchObject([
      { name: 'svc.subscriptions.subscription.updated', changed_by: { actor: 'supporter', channel: 'portal' } },
    ]);
  });
});
