import { advanceClock, freezeClock, now } from '@svc/core';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ApiResponse, call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { PROCESS_LIFETIME_SECONDS } from './domain/processes';
import { CSRF_COOKIE } from './page/session';

/**
 * The hosted page without a browser: the forms as a browser without JavaScript sends them,
 * through the local gateway. (test/browser drives the same page in Chromium.)
 */
let partner: string;

beforeAll(async () => {
  await seedDemo();
  partner = await tokenFor(DEMO.partner);
});

beforeEach(() => {
  freezeClock(now());
});

let sequence = 0;
async function newProcess(extra: Record<string, unknown> = {}) {
  sequence += 1;
  const created = await call('POST', '/onboarding/processes', {
    token: partner,
    body: {
      onboarding_configuration_uuid: DEMO.onboardingConfiguration,
      user: { email: `page${sequence}-${now()}@example.ch`, first_name: 'Léa', last_name: 'Rossi', locale: 'fr_CH' },
      organisation: {
        name: `Association ${sequence}`,
        merchant_category_code: '8641',
        main_address: {
          address_line1: 'Rue du Lac 2',
          address_line2: '',
          postal_code: '1003',
          city: 'Lausanne',
          country: 'CH',
        },
        billing_information: { iban: 'CH93 0076 2011 6238 5295 7', bank_name: 'Banque', account_holder: 'Association' },
      },
      ...extra,
    },
  });
  expect(created.status, created.text).toBe(201);
  return created.json as { uuid: string; token: string; initialisation_data: { user: { email: string } } };
}

/** A browser's cookie jar for /connect, one per walk. */
class Browser {
  cookies = new Map<string, string>();

  private remember(response: ApiResponse) {
    for (const cookie of response.cookies) {
      const [pair = ''] = cookie.split(';');
      const at = pair.indexOf('=');
      this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return response;
  }

  private cookieHeader() {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async get(path: string, headers: Record<string, string> = {}) {
    return this.remember(await call('GET', path, { headers: { cookie: this.cookieHeader(), ...headers } }));
  }

  async post(path: string, form: Record<string, string>) {
    return this.remember(
      await call('POST', path, {
        rawBody: new URLSearchParams(form).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: this.cookieHeader() },
      }),
    );
  }
}

/** The hidden fields and prefilled values of the page's (first) form. */
function formOf(page: ApiResponse): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of page.text.matchAll(/<input\b[^>]*>/g)) {
    const name = /\bname="([^"]*)"/.exec(match[0])?.[1];
    const value = /\bvalue="([^"]*)"/.exec(match[0])?.[1] ?? '';
    const type = /\btype="([^"]*)"/.exec(match[0])?.[1];
    if (!name || (type === 'radio' && !/\bchecked\b/.test(match[0]))) continue;
    fields[name] = value.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'");
  }
  for (const match of page.text.matchAll(/<select\b[^>]*name="([^"]*)"[^>]*>([\s\S]*?)<\/select>/g)) {
    const selected = /<option\b[^>]*value="([^"]*)"[^>]*\bselected\b/.exec(match[2] ?? '')?.[1];
    if (match[1] && selected !== undefined) fields[match[1]] = selected;
  }
  return fields;
}

const b64 = (url: string) => Buffer.from(url).toString('base64');
const PASSWORD = 'a long enough password';

async function onboardThroughPage(browser: Browser, token: string, query = '') {
  const start = await browser.get(`/connect?token=${encodeURIComponent(token)}${query}`);
  expect(start.status).toBe(200);
  const review = await browser.post('/connect/email', formOf(start));
  expect(review.status, review.text).toBe(200);
  return browser.post('/connect/onboard', { ...formOf(review), password: PASSWORD, password_confirmation: PASSWORD });
}

describe('the hosted page', () => {
  it('onboards a new user without JavaScript and sends them to the validated redirect target (303)', async () => {
    const process = await newProcess();
    const target = 'https://partner.example.org/welcome?step=done#top';
    const done = await onboardThroughPage(
      new Browser(),
      process.token,
      `&redirect_url=${encodeURIComponent(b64(target))}`,
    );
    expect(done.status, done.text).toBe(303);
    expect(done.headers.location).toBe(target);
    const read = await call('GET', `/onboarding/processes/${process.uuid}`, { token: partner });
    expect(read.json.status).toBe('succeeded');
    expect(
      (await call('GET', `/organisations/${read.json.results.organisation.uuid}`, { token: partner })).status,
    ).toBe(200);
  });

  it.each([
    ['another host', 'https://evil.example.com/welcome'],
    ['plain http', 'http://partner.example.org/welcome'],
    ['a www host for an apex base URL', 'https://www.partner.example.org/'],
    ['text that is not base64', null],
  ])('falls back to the partner base URL for %s (rule 6)', async (_label, target) => {
    const process = await newProcess();
    const param = target === null ? '%%%not-base64' : encodeURIComponent(b64(target));
    const done = await onboardThroughPage(new Browser(), process.token, `&redirect_url=${param}`);
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe('https://partner.example.org');
  });

  it('signs in a known user, offers their organisations and connects the one picked', async () => {
    const first = await newProcess();
    const onboarded = await onboardThroughPage(new Browser(), first.token);
    expect(onboarded.status).toBe(303);
    const organisation = (await call('GET', `/onboarding/processes/${first.uuid}`, { token: partner })).json.results
      .organisation.uuid;
    const [integration] = (
      await call('GET', `/partner-integrations?organisation_uuid=${organisation}`, { token: partner })
    ).json;
    await call('POST', `/partner-integrations/${integration.uuid}/disable`, { token: partner });

    const second = await newProcess({ user: { ...first.initialisation_data.user } });
    const browser = new Browser();
    const start = await browser.get(`/connect?token=${second.token}`);
    const signIn = await browser.post('/connect/email', formOf(start));
    expect(signIn.text).toContain('action="/connect/sign-in"');
    const wrong = await browser.post('/connect/sign-in', { ...formOf(signIn), password: 'not the password' });
    expect(wrong.status).toBe(403);
    expect(wrong.text).toMatch(/role="alert"/);
    expect(wrong.text).toMatch(/aria-invalid="true"/);
    const pick = await browser.post('/connect/sign-in', { ...formOf(signIn), password: PASSWORD });
    expect(pick.status, pick.text).toBe(200);
    expect(pick.text).toContain(`value="${organisation}"`);
    const done = await browser.post('/connect/connect', formOf(pick));
    expect(done.status, done.text).toBe(303);
    expect(done.headers.location).toBe('https://partner.example.org');
    expect((await call('GET', `/organisations/${organisation}`, { token: partner })).status).toBe(200);
  });

  it('refuses a sign-in unchecked once the address has had 10 wrong passwords (429, said so on the page)', async () => {
    const first = await newProcess();
    expect((await onboardThroughPage(new Browser(), first.token)).status).toBe(303);
    const email = first.initialisation_data.user.email;
    // Ten wrong passwords through the API, five on each of two processes (each process's bound).
    for (const guesser of [await newProcess(), await newProcess()]) {
      for (let i = 0; i < 5; i += 1) {
        const wrong = await call('POST', `/onboarding/processes/token/${guesser.token}/connect`, {
          body: { email, password: `wrong ${i}`, organisation_uuid: DEMO.org },
        });
        expect(wrong.status).toBe(403);
      }
    }
    const second = await newProcess({ user: { ...first.initialisation_data.user } });
    const browser = new Browser();
    const signIn = await browser.post('/connect/email', formOf(await browser.get(`/connect?token=${second.token}`)));
    const locked = await browser.post('/connect/sign-in', { ...formOf(signIn), password: PASSWORD });
    expect(locked.status).toBe(429);
    expect(locked.text).toContain('Trop de tentatives');
  });

  it('refuses a form without the matching CSRF cookie (403) and changes nothing', async () => {
    const process = await newProcess();
    const browser = new Browser();
    const start = await browser.get(`/connect?token=${process.token}`);
    expect(start.cookies.join()).toMatch(new RegExp(`${CSRF_COOKIE}=[^;]+; Path=/connect; HttpOnly; SameSite=Strict`));
    const review = await browser.post('/connect/email', formOf(start));
    const form = { ...formOf(review), password: PASSWORD, password_confirmation: PASSWORD };
    const stranger = new Browser();
    const forged = await stranger.post('/connect/onboard', form);
    expect(forged.status).toBe(403);
    expect(forged.headers['content-type']).toMatch(/^text\/html/);
    const mismatched = await browser.post('/connect/onboard', { ...form, csrf: 'x'.repeat(43) });
    expect(mismatched.status).toBe(403);
    const read = await call('GET', `/onboarding/processes/${process.uuid}`, { token: partner });
    expect(read.json.status).toBe('pending');
  });

  it('re-renders the form with localised field errors for bad input and keeps what was typed', async () => {
    const process = await newProcess();
    const browser = new Browser();
    const start = await browser.get(`/connect?token=${process.token}`);
    const review = await browser.post('/connect/email', formOf(start));
    const form = formOf(review);
    const bad = await browser.post('/connect/onboard', {
      ...form,
      iban: 'CH00 1234',
      organisation_name: '',
      password: PASSWORD,
      password_confirmation: PASSWORD,
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('lang="fr-CH"');
    expect(bad.text).toMatch(/id="iban"[^>]*aria-invalid="true"|aria-invalid="true"[^>]*id="iban"/);
    expect(bad.text).toMatch(
      /id="organisation_name"[^>]*aria-invalid="true"|aria-invalid="true"[^>]*id="organisation_name"/,
    );
    expect(bad.text).toContain('value="CH00 1234"');
    const differ = await browser.post('/connect/onboard', {
      ...form,
      password: PASSWORD,
      password_confirmation: 'other',
    });
    expect(differ.status).toBe(400);
    expect(differ.text).not.toContain(PASSWORD);
    expect((await call('GET', `/onboarding/processes/${process.uuid}`, { token: partner })).json.status).toBe(
      'pending',
    );
  });

  it('shows clear pages for unknown, used and expired links', async () => {
    const unknown = await new Browser().get('/connect?token=nope');
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^text\/html/);
    expect(unknown.text).toMatch(/<h1>/);
    expect((await new Browser().get('/connect')).status).toBe(404);

    const used = await newProcess();
    await onboardThroughPage(new Browser(), used.token);
    const again = await new Browser().get(`/connect?token=${used.token}`);
    expect(again.status).toBe(409);
    expect(again.text).toContain('https://partner.example.org');

    const expiring = await newProcess();
    const browser = new Browser();
    const start = await browser.get(`/connect?token=${expiring.token}`);
    advanceClock(PROCESS_LIFETIME_SECONDS);
    expect((await new Browser().get(`/connect?token=${expiring.token}`)).status).toBe(410);
    const late = await browser.post('/connect/email', formOf(start));
    expect(late.status).toBe(410);
  });

  it('speaks the requested, the process’s or the browser’s language', async () => {
    const process = await newProcess();
    const fr = await new Browser().get(`/connect?token=${process.token}`);
    expect(fr.text).toContain('lang="fr-CH"');
    const it_ = await new Browser().get(`/connect?token=${process.token}&locale=it_CH`);
    expect(it_.text).toContain('lang="it-CH"');
    const bare = await newProcess({ user: undefined });
    const en = await new Browser().get(`/connect?token=${bare.token}`, { 'accept-language': 'en-GB,en;q=0.8' });
    expect(en.text).toContain('lang="en-GB"');
  });

  it('sends security headers and escapes data it shows', async () => {
    const process = await newProcess({ external_id: 'x' });
    const page = await new Browser().get(`/connect?token=${process.token}`);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(page.headers['content-security-policy']).toContain('form-action');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.text).toContain('src="data:image/svg+xml;base64,');

    const hostile = await newProcess({
      organisation: { name: '<script>alert(1)</script>' },
      user: {
        email: `x${now()}@example.ch`,
        first_name: '"><img src=x onerror=alert(1)>',
        last_name: 'L',
        locale: 'en_GB',
      },
    });
    const browser = new Browser();
    const review = await browser.post('/connect/email', formOf(await browser.get(`/connect?token=${hostile.token}`)));
    expect(review.text).not.toContain('<script>alert(1)</script>');
    expect(review.text).not.toContain('"><img');
    expect(review.text).toContain('&lt;script&gt;');
  });

  it('serves its stylesheet and script under content-hashed names', async () => {
    const page = await new Browser().get(`/connect?token=${(await newProcess()).token}`);
    const css = /href="(\/connect\/assets\/connect\.[\w-]+\.css)"/.exec(page.text)?.[1];
    const js = /src="(\/connect\/assets\/connect\.[\w-]+\.js)"/.exec(page.text)?.[1];
    expect(css && js).toBeTruthy();
    const style = await call('GET', css as string);
    expect(style.status).toBe(200);
    expect(style.headers['content-type']).toMatch(/^text\/css/);
    expect(style.headers['cache-control']).toContain('immutable');
    expect((await call('GET', js as string)).headers['content-type']).toMatch(/javascript/);
    expect((await call('GET', '/connect/assets/connect.nope.css')).status).toBe(404);
  });
});
