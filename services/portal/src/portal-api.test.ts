import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call } from '../../../test/support/api';
import {
  billingRun,
  DEMO,
  localDay,
  subscription as newSubscription,
  ok,
  setClock,
  setup,
} from '../../subscriptions/src/test-support';
import { mailTo, PORTAL_SETTINGS_ON, redeem, settle, uniqueEmail } from './testing-portal';

/**
 * The portal's JSON API over HTTP (contract section 12): the session cookie on every route, the
 * CSRF token (from the page's `<meta name="csrf-token">`) on every change, the donor's own
 * subscriptions only, and the contract's error shape for every refusal.
 */
beforeAll(async () => {
  await setup();
  await ok('PUT', `/organisations/${DEMO.org}/portal-settings`, { ...PORTAL_SETTINGS_ON, min_amount: 500 });
  await settle();
});

interface Donor {
  supporter: string;
  email: string;
  subscription: string;
  cookie: string;
  csrf: string;
}

async function signedInDonor(): Promise<Donor> {
  const email = uniqueEmail();
  const supporter = (await ok('POST', '/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada', email }, 201))
    .uuid as string;
  const created = await newSubscription({ supporter_uuid: supporter });
  await billingRun();
  const link = await ok('POST', `/supporters/${supporter}/portal-links`, { flow: 'manage' }, 201);
  const url = new URL(link.url);
  const { session } = await redeem(`${url.pathname}${url.search}`);
  if (!session) throw new Error('No session');
  const home = await call('GET', '/portal/home', { headers: { cookie: session } });
  const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(home.text)?.[1];
  if (!csrf) throw new Error(`No CSRF token on the home page: ${home.status}`);
  return { supporter, email, subscription: created.uuid as string, cookie: session, csrf };
}

function portal(
  donor: Donor | undefined,
  method: string,
  path: string,
  body?: unknown,
  csrf = true,
): Promise<ApiResponse> {
  return call(method, path, {
    headers: {
      ...(donor ? { cookie: donor.cookie } : {}),
      ...(donor && csrf ? { 'x-csrf-token': donor.csrf } : {}),
    },
    ...(body === undefined ? {} : { body }),
  });
}

const errorCodes = (response: ApiResponse) =>
  (response.json?.error?.message ?? []).map((m: { code: string }) => m.code) as string[];

describe('the portal JSON API', () => {
  it('needs the session cookie (401) and, for a change, its CSRF token (403); nothing changes without them', async () => {
    setClock('2031-03-10T09:00:00');
    const donor = await signedInDonor();
    const change = `/portal/api/subscriptions/${donor.subscription}`;
    expect((await portal(undefined, 'GET', '/portal/api/subscriptions')).status).toBe(401);
    expect((await portal(undefined, 'PATCH', change, { amount: 900 })).status).toBe(401);
    const noCsrf = await portal(donor, 'PATCH', change, { amount: 900 }, false);
    expect(noCsrf.status).toBe(403);
    const forged = await call('PATCH', change, {
      headers: { cookie: donor.cookie, 'x-csrf-token': 'x'.repeat(43) },
      body: { amount: 900 },
    });
    expect(forged.status).toBe(403);
    expect((await ok('GET', `/subscriptions/${donor.subscription}`)).amount).toBe(2500);
    // Idle for 30 minutes: the session is over.
    setClock('2031-03-10T09:31:00');
    expect((await portal(donor, 'GET', '/portal/api/subscriptions')).status).toBe(401);
  });

  it('lists the donor’s subscriptions and changes them through every route, as the supporter', async () => {
    setClock('2031-03-10T09:00:00');
    const donor = await signedInDonor();
    const other = await signedInDonor();
    const listed = await portal(donor, 'GET', '/portal/api/subscriptions');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.headers['cache-control']).toBe('no-store');
    expect(listed.json.map((s: { uuid: string }) => s.uuid)).toEqual([donor.subscription]);

    const base = `/portal/api/subscriptions/${donor.subscription}`;
    const patched = await portal(donor, 'PATCH', base, { amount: 3000, recurring_interval: 'yearly' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json).toMatchObject({ amount: 3000, recurring_interval: 'yearly' });
    const low = await portal(donor, 'PATCH', base, { amount: 100 });
    expect(low.status).toBe(400);
    expect(errorCodes(low)).toContain('error.validation.not_valid');
    expect((await portal(donor, 'PATCH', base, { colour: 'red' })).status).toBe(400);

    const back = await portal(donor, 'PATCH', base, { recurring_interval: 'monthly' });
    const next = localDay(back.json.next_due_date, 'UTC');
    const skipped = await portal(donor, 'POST', `${base}/skip`, { due_date: next });
    expect(skipped.status, skipped.text).toBe(200);
    expect(localDay(skipped.json.next_due_date, 'UTC')).not.toBe(next);

    const paused = await portal(donor, 'POST', `${base}/pause`, { resume_on: '2031-09-01' });
    expect(paused.status, paused.text).toBe(200);
    expect(paused.json.subscription_status).toBe('suspended');
    const resumed = await portal(donor, 'POST', `${base}/resume`);
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.json.subscription_status).toBe('active');

    // Another donor's subscription is not found, whatever the route.
    const foreign = `/portal/api/subscriptions/${other.subscription}`;
    for (const [method, path, body] of [
      ['PATCH', foreign, { amount: 900 }],
      ['POST', `${foreign}/skip`, { due_date: '2031-04-10' }],
      ['POST', `${foreign}/pause`, {}],
      ['POST', `${foreign}/cancel`, { reason: 'other' }],
    ] as const) {
      expect((await portal(donor, method, path, body)).status, `${method} ${path}`).toBe(404);
    }

    const cancelled = await portal(donor, 'POST', `${base}/cancel`, { reason: 'too_expensive', comment: 'Sorry' });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.json).toMatchObject({
      subscription_status: 'cancelled',
      cancellation: { reason: 'too_expensive' },
    });
    expect((await portal(donor, 'POST', `${base}/cancel`, { reason: 'other' })).status).toBe(409);
  });

  it('lists the gifts of a year; changes the payment method after a mailed code', async () => {
    setClock('2031-03-10T09:00:00');
    const donor = await signedInDonor();
    const gifts = await portal(donor, 'GET', '/portal/api/payments?year=2031');
    expect(gifts.status, gifts.text).toBe(200);
    expect(gifts.json.payments.length).toBe(1);
    expect((await portal(donor, 'GET', '/portal/api/payments?year=soon')).status).toBe(400);

    const sent = await portal(donor, 'POST', '/portal/api/codes');
    expect(sent.status, sent.text).toBe(202);
    expect((await portal(donor, 'POST', '/portal/api/codes')).status).toBe(429);
    await settle();
    const code = /\b(\d{6})\b/.exec((await mailTo(donor.email))[0]?.text ?? '')?.[1] ?? '';
    const path = `/portal/api/subscriptions/${donor.subscription}/payment-method`;
    const card = { number: '5555555555554444', expiry_month: 11, expiry_year: 2099, cvv: '321' };
    const wrong = await portal(donor, 'POST', path, {
      code: code === '000000' ? '000001' : '000000',
      payment_method: 'card',
      payment_information: card,
    });
    expect(wrong.status).toBe(400);
    expect(errorCodes(wrong)).toEqual(['error.portal.code_invalid']);
    const changed = await portal(donor, 'POST', path, { code, payment_method: 'card', payment_information: card });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json.status).toBe('active');
  });
});
