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
import {
  expectPageHeaders,
  hiddenField,
  mailTo,
  PORTAL_SETTINGS_ON,
  postForm,
  redeem,
  settle,
  uniqueEmail,
} from './testing-portal';

/**
 * The donor's own pages over HTTP (issue 47 point 3): every form changes the subscription as the
 * domain does (read back through GET /subscriptions/{uuid} with the API token), needs the
 * session's CSRF token, is hidden and refused when the organisation turned its feature off, and
 * answers with the pages' security headers; errors come back as the page, never as JSON.
 */
const SETTINGS = { ...PORTAL_SETTINGS_ON, min_amount: 500, max_amount: 100_000 };

async function settings(changes: Record<string, unknown> = {}): Promise<void> {
  await ok('PUT', `/organisations/${DEMO.org}/portal-settings`, { ...SETTINGS, ...changes });
}

beforeAll(async () => {
  await setup();
  await settings();
  await settle();
});

interface Donor {
  email: string;
  subscription: string;
  cookie: string;
  csrf: string;
}

async function signedInDonor(link: Record<string, unknown> = { flow: 'manage' }): Promise<Donor> {
  const email = uniqueEmail();
  const supporter = (await ok('POST', '/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada', email }, 201))
    .uuid as string;
  const created = await newSubscription({ supporter_uuid: supporter });
  await billingRun();
  const body = { locale: 'de', ...link, ...(link.flow === 'manage' ? {} : { subscription_uuid: created.uuid }) };
  const made = await ok('POST', `/supporters/${supporter}/portal-links`, body, 201);
  const url = new URL(made.url);
  const { session } = await redeem(`${url.pathname}${url.search}`);
  if (!session) throw new Error('No session');
  const home = await page({ cookie: session } as Donor, '/portal/home');
  const csrf = hiddenField(home.text, 'csrf_token');
  if (!csrf) throw new Error(`No CSRF token on the home page: ${home.status}`);
  return { email, subscription: created.uuid as string, cookie: session, csrf };
}

const page = (donor: Pick<Donor, 'cookie'> | undefined, path: string) =>
  call('GET', path, { headers: donor ? { cookie: donor.cookie } : {} });

const send = (donor: Donor, action: string, fields: Record<string, string> = {}, csrf: string | null = donor.csrf) =>
  postForm(
    `/portal/subscriptions/${donor.subscription}/${action}`,
    { ...(csrf === null ? {} : { csrf_token: csrf }), ...fields },
    [donor.cookie],
  );

const stored = async (donor: Donor) => ok('GET', `/subscriptions/${donor.subscription}`);

function expectDone(response: ApiResponse, donor: Donor, done: string): void {
  expect(response.status, response.text).toBe(303);
  expect(response.headers.location).toMatch(new RegExp(`^/portal/subscriptions/${donor.subscription}\\?done=${done}`));
}

describe('the donor’s pages', () => {
  it('list the subscriptions on the home page, each linking to its page, with the gifts link', async () => {
    setClock('2031-03-10T09:00:00');
    const donor = await signedInDonor();
    const home = await page(donor, '/portal/home');
    expect(home.status).toBe(200);
    expectPageHeaders(home);
    expect(home.text).toContain(`href="/portal/subscriptions/${donor.subscription}?locale=de"`);
    expect(home.text).toMatch(/CHF\s25\.00/);
    expect(home.text).toContain('Jeden Monat');
    expect(home.text).toContain('href="/portal/gifts?year=2031&amp;locale=de"');
    const english = await page(donor, '/portal/home?locale=en');
    expect(english.text).toContain('Every month');
  });

  it('change the amount (major units, exactly), the interval, the date; skip, pause and resume', async () => {
    setClock('2031-03-10T09:00:00');
    const donor = await signedInDonor();
    const view = await page(donor, `/portal/subscriptions/${donor.subscription}?locale=en`);
    expect(view.status, view.text).toBe(200);
    expectPageHeaders(view);
    for (const action of ['amount', 'interval', 'next-date', 'skip', 'pause', 'code', 'cancel']) {
      expect(view.text, action).toContain(`action="/portal/subscriptions/${donor.subscription}/${action}"`);
    }

    expectDone(await send(donor, 'amount', { amount: '30.05' }), donor, 'amount');
    expect((await stored(donor)).amount).toBe(3005);
    const done = await page(donor, `/portal/subscriptions/${donor.subscription}?done=amount&locale=en`);
    expect(done.text).toContain('The amount has been changed.');

    // A fraction beyond the currency's exponent, words, or under the minimum: the page again, 400.
    for (const [amount, message] of [
      ['30.055', 'at most 2 decimal places'],
      ['lots', 'Enter an amount'],
      ['4.99', 'at least CHF'],
    ] as const) {
      const refused = await send(donor, 'amount', { amount, locale: 'en' });
      expect(refused.status, amount).toBe(400);
      expect(refused.headers['content-type']).toMatch(/^text\/html/);
      expect(refused.text).toContain(message);
      expect(refused.text).toContain('aria-invalid="true"');
      expect(refused.text).toContain(`value="${amount}"`);
    }
    expect((await stored(donor)).amount).toBe(3005);

    expectDone(await send(donor, 'interval', { recurring_interval: 'yearly' }), donor, 'interval');
    expect((await stored(donor)).recurring_interval).toBe('yearly');
    expect((await send(donor, 'interval', { recurring_interval: 'weekly' })).status).toBe(400);
    expectDone(await send(donor, 'interval', { recurring_interval: 'monthly' }), donor, 'interval');

    expectDone(await send(donor, 'next-date', { next_due_date: '2031-04-20' }), donor, 'next_date');
    const moved = await stored(donor);
    expect(localDay(moved.next_due_date, moved.timezone)).toBe('2031-04-20');
    expect((await send(donor, 'next-date', { next_due_date: '20.5.2031' })).status).toBe(400);

    const before = await stored(donor);
    const due = localDay(before.next_due_date, before.timezone);
    const skipPage = await page(donor, `/portal/subscriptions/${donor.subscription}`);
    expect(hiddenField(skipPage.text, 'due_date')).toBe(due);
    expectDone(await send(donor, 'skip', { due_date: due }), donor, 'skip');
    expect(localDay((await stored(donor)).next_due_date, before.timezone)).not.toBe(due);

    expectDone(await send(donor, 'pause', { resume_on: '2031-09-01' }), donor, 'pause');
    const paused = await stored(donor);
    expect(paused.subscription_status).toBe('suspended');
    expect(localDay(paused.suspension_end, paused.timezone)).toBe('2031-09-01');
    const pausedPage = await page(donor, `/portal/subscriptions/${donor.subscription}`);
    expect(pausedPage.text).toContain(`/subscriptions/${donor.subscription}/resume"`);
    expect(pausedPage.text).not.toContain(`/subscriptions/${donor.subscription}/pause"`);
    expectDone(await send(donor, 'resume'), donor, 'resume');
    expect((await stored(donor)).subscription_status).toBe('active');
    // Resuming an active subscription is not possible now: the page says so (409), nothing changes.
    const again = await send(donor, 'resume', { locale: 'en' });
    expect(again.status).toBe(409);
    expect(again.text).toContain('This is not possible for this donation now.');
  });

  it('cancel with a reason; with a retention offer the cancel button shows the offer first', async () => {
    setClock('2031-03-10T09:00:00');
    await settings({ retention_offer: 'lower_amount' });
    try {
      const donor = await signedInDonor({ flow: 'cancel' });
      const home = await page(donor, '/portal/home');
      expect(home.text).toContain(`href="/portal/subscriptions/${donor.subscription}/offer?locale=de"`);
      const view = await page(donor, `/portal/subscriptions/${donor.subscription}`);
      expect(view.text).toContain(`action="/portal/subscriptions/${donor.subscription}/offer"`);
      expect(view.text).not.toContain('name="reason"');
      const offer = await page(donor, `/portal/subscriptions/${donor.subscription}/offer?locale=en`);
      expect(offer.status).toBe(200);
      expectPageHeaders(offer);
      expect(offer.text).toContain(`action="/portal/subscriptions/${donor.subscription}/amount"`);
      expect(offer.text).toContain(`href="/portal/subscriptions/${donor.subscription}/cancel?locale=en"`);
      const form = await page(donor, `/portal/subscriptions/${donor.subscription}/cancel?locale=en`);
      expect(form.status).toBe(200);
      expectPageHeaders(form);
      expect(form.text).toContain('<option value="too_expensive">It is too expensive for me</option>');

      const noReason = await send(donor, 'cancel', { reason: '', locale: 'en' });
      expect(noReason.status).toBe(400);
      expect(noReason.text).toContain('Choose a reason.');
      expect((await send(donor, 'cancel', { reason: 'bored' })).status).toBe(400);
      expectDone(await send(donor, 'cancel', { reason: 'too_expensive', comment: 'Sorry' }), donor, 'cancel');
      expect(await stored(donor)).toMatchObject({
        subscription_status: 'cancelled',
        cancellation: { reason: 'too_expensive', comment: 'Sorry' },
      });
    } finally {
      await settings();
    }
  });

  it('change the payment method after a mailed code', async () => {
    setClock('2031-03-10T09:00:00');
    const donor = await signedInDonor({ flow: 'payment_method' });
    const home = await page(donor, '/portal/home');
    expect(home.text).toContain(`href="/portal/subscriptions/${donor.subscription}?locale=de#payment-method-heading"`);
    const sent = await send(donor, 'code');
    expectDone(sent, donor, 'code');
    const tooSoon = await send(donor, 'code', { locale: 'en' });
    expect(tooSoon.status).toBe(429);
    expect(tooSoon.text).toContain('A code was sent less than a minute ago');
    const form = await page(donor, sent.headers.location ?? '');
    expect(form.text).toContain('name="number"');
    // The demo account has no SEPA profile: only the card form.
    expect(form.text).not.toContain('name="iban"');
    await settle();
    const code = /\b(\d{6})\b/.exec((await mailTo(donor.email))[0]?.text ?? '')?.[1] ?? '';
    const card = {
      payment_method: 'card',
      number: '5555 5555 5555 4444',
      expiry_month: '11',
      expiry_year: '2099',
      cvc: '321',
    };
    const wrong = await send(donor, 'payment-method', {
      ...card,
      code: code === '000000' ? '000001' : '000000',
      locale: 'en',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('This code is wrong, used or expired.');
    expect(wrong.text).not.toContain('5555');
    const before = (await stored(donor)).payment_source_uuid;
    expectDone(await send(donor, 'payment-method', { ...card, code }), donor, 'payment_method');
    expect((await stored(donor)).payment_source_uuid).not.toBe(before);
  });

  it('refuse a form without or with a wrong CSRF token (403 page), and without a session (401 page)', async () => {
    setClock('2031-03-10T09:00:00');
    const donor = await signedInDonor();
    for (const csrf of [null, 'x'.repeat(43)]) {
      const refused = await send(donor, 'amount', { amount: '99' }, csrf);
      expect(refused.status).toBe(403);
      expectPageHeaders(refused);
    }
    const anonymous = await postForm(`/portal/subscriptions/${donor.subscription}/amount`, {
      csrf_token: donor.csrf,
      amount: '99',
    });
    expect(anonymous.status).toBe(401);
    expectPageHeaders(anonymous);
    expect(anonymous.text).toContain('<h1>Your session has ended</h1>');
    expect((await stored(donor)).amount).toBe(2500);
    for (const path of [`/portal/subscriptions/${donor.subscription}`, '/portal/gifts?year=2031']) {
      const page401 = await page(undefined, path);
      expect(page401.status, path).toBe(401);
      expectPageHeaders(page401);
    }
  });

  it('hide each form the organisation turned off, and refuse its POST', async () => {
    setClock('2031-03-10T09:00:00');
    const donor = await signedInDonor();
    const off = {
      amount: false,
      interval: false,
      next_date: false,
      skip: false,
      pause: false,
      payment_method: false,
      cancel: false,
    };
    await settings({ features: off });
    try {
      const view = await page(donor, `/portal/subscriptions/${donor.subscription}?locale=en`);
      expect(view.status).toBe(200);
      expect(view.text).not.toMatch(/action="\/portal\/subscriptions\/[^"]+\//);
      for (const [action, fields] of [
        ['amount', { amount: '99' }],
        ['interval', { recurring_interval: 'yearly' }],
        ['next-date', { next_due_date: '2031-04-20' }],
        ['pause', {}],
        ['cancel', { reason: 'other' }],
        ['code', {}],
      ] as const) {
        const refused = await send(donor, action, { ...fields, locale: 'en' });
        expect(refused.status, action).toBe(409);
        expect(refused.text).toContain('This change is not offered by');
      }
      expect(await stored(donor)).toMatchObject({
        amount: 2500,
        recurring_interval: 'monthly',
        subscription_status: 'active',
      });
    } finally {
      await settings();
    }
  });

  it('show the gifts of a year with links to the years before and after; another donor’s subscription is not found', async () => {
    setClock('2031-03-10T09:00:00');
    const donor = await signedInDonor();
    const other = await signedInDonor();
    const gifts = await page(donor, '/portal/gifts?year=2031&locale=en');
    expect(gifts.status, gifts.text).toBe(200);
    expectPageHeaders(gifts);
    expect(gifts.text).toContain('Your gifts in 2031');
    expect(gifts.text).toMatch(/CHF\s25\.00/);
    expect(gifts.text).toContain('href="/portal/gifts?year=2030&amp;locale=en"');
    expect(gifts.text).toContain('href="/portal/gifts?year=2032&amp;locale=en"');
    const none = await page(donor, '/portal/gifts?year=2030&locale=en');
    expect(none.text).toContain('No gifts in 2030.');
    const foreign = await page(donor, `/portal/subscriptions/${other.subscription}`);
    expect(foreign.status).toBe(404);
    expectPageHeaders(foreign);
    const change = await postForm(
      `/portal/subscriptions/${other.subscription}/amount`,
      { csrf_token: donor.csrf, amount: '99' },
      [donor.cookie],
    );
    expect(change.status).toBe(404);
    expect((await ok('GET', `/subscriptions/${other.subscription}`)).amount).toBe(2500);
  });
});
