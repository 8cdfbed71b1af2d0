import { advanceClock, ForbiddenError, freezeClock, now, UnauthorizedError } from '@svc/core';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, seedDemo } from '../../../test/support/api';
import {
  checkCsrf,
  LINK_LIFETIME_SECONDS,
  linkTokenHash,
  PORTAL_LINK,
  requirePortalSession,
  SESSION_IDLE_SECONDS,
  SESSION_MAX_SECONDS,
} from './index';
import {
  cookieNamed,
  expectPageHeaders,
  hiddenField,
  linkFor,
  type PortalOrganisation,
  portalOrganisation,
  postForm,
  redeem,
  refreshToken,
  supporterOf,
  uniqueEmail,
} from './testing-portal';

let org: PortalOrganisation;

beforeAll(async () => {
  await seedDemo();
  org = await portalOrganisation();
});

beforeEach(async () => {
  freezeClock(now());
  // Tests move the clock by hours: each starts with a token of its own time.
  await refreshToken(org);
});

const cookiesOf = (session: string) => ({ [session.split('=')[0] ?? '']: session.slice(session.indexOf('=') + 1) });

async function freshLink(fields: Record<string, unknown> = {}, body?: Record<string, unknown>) {
  const email = uniqueEmail();
  const supporter = await supporterOf(org, { email, ...fields });
  return { email, supporter, ...(await linkFor(org, supporter, body)) };
}

describe('GET /portal?token=… (contract section 12)', () => {
  it('shows the link’s page with a Continue form, and opening it (twice) uses nothing up', async () => {
    const { path, token } = await freshLink({ locale: 'fr_CH' });
    const first = await call('GET', path);
    const second = await call('GET', path);
    for (const page of [first, second]) {
      expect(page.status, page.text).toBe(200);
      expectPageHeaders(page);
      expect(page.text).toContain('<html lang="fr-CH">');
      expect(page.text).toContain('Gérer vos dons à Verein Sonnenschein');
      expect(page.text).toMatch(/<form method="post" action="\/portal">/);
      expect(hiddenField(page.text, 'token')).toBe(token);
      // No session before the button: no CSRF meta, no session cookie.
      expect(page.text).not.toContain('name="csrf-token"');
      expect(cookieNamed(page, 'svc_portal_session')).toBeUndefined();
    }
    expect((await PORTAL_LINK.find(await linkTokenHash(token)))?.used_at).toBeUndefined();
    // The CSRF cookie of the form: HttpOnly, Secure, SameSite=Strict, under /portal.
    const csrf = cookieNamed(first, 'svc_portal_csrf')?.header ?? '';
    for (const attribute of ['HttpOnly', 'Secure', 'SameSite=Strict', 'Path=/portal']) {
      expect(csrf).toContain(attribute);
    }
    // Still redeemable after being opened.
    const { response, session } = await redeem(path);
    expect(response.status, response.text).toBe(303);
    expect(session).toBeDefined();
  });

  it('switches language by a link, in every portal locale', async () => {
    const { path } = await freshLink({ locale: 'de_CH' });
    const page = await call('GET', path);
    expect(page.text).toContain('<html lang="de-CH">');
    for (const [locale, lang, button] of [
      ['de', 'de-CH', 'Weiter'],
      ['fr', 'fr-CH', 'Continuer'],
      ['it', 'it-CH', 'Continua'],
      ['en', 'en-GB', 'Continue'],
    ] as const) {
      expect(page.text).toContain(`href="${path}&amp;locale=${locale}"`);
      const switched = await call('GET', `${path}&locale=${locale}`);
      expect(switched.text).toContain(`<html lang="${lang}">`);
      expect(switched.text).toContain(`>${button}</button>`);
    }
  });

  it('says which problem a link has, in the donor’s language, with the form for a fresh link', async () => {
    const { path, token } = await freshLink({ locale: 'it_CH' });
    advanceClock(LINK_LIFETIME_SECONDS);
    const expired = await call('GET', path);
    expect(expired.status).toBe(410);
    expectPageHeaders(expired);
    expect(expired.text).toContain('Questo link è scaduto');
    expect(expired.text).toContain('action="/portal/login-form"');
    expect(hiddenField(expired.text, 'organisation_uuid')).toBe(org.organisation);
    // The same link by POST: refused, nothing started.
    const late = await postForm('/portal', { token, csrf: 'x'.repeat(43) }, [`svc_portal_csrf=${'x'.repeat(43)}`]);
    expect(late.status).toBe(410);
    expect(cookieNamed(late, 'svc_portal_session')).toBeUndefined();

    const unknown = await call('GET', '/portal?token=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(unknown.status).toBe(404);
    expectPageHeaders(unknown);
    expect(unknown.text).toContain('<html lang="en-GB">');
    expect(unknown.text).toContain('This link is not valid');
    const unknownInFrench = await call('GET', '/portal?token=nope&locale=fr');
    expect(unknownInFrench.text).toContain('Ce lien n&#39;est pas valable');
    const withOrganisation = await call('GET', `/portal?token=nope&organisation_uuid=${org.organisation}`);
    expect(withOrganisation.text).toContain('action="/portal/login-form"');
    expect(withOrganisation.text).toContain('Verein Sonnenschein');
  });

  it('is the organisation’s way in without a token: the form for a link by e-mail', async () => {
    const page = await call('GET', `/portal?organisation_uuid=${org.organisation}&locale=de`);
    expect(page.status, page.text).toBe(200);
    expectPageHeaders(page);
    expect(page.text).toContain('Link per E-Mail erhalten');
    expect(page.text).toMatch(/<label for="email">E-Mail-Adresse<\/label>/);
    expect((await call('GET', '/portal')).status).toBe(404);
  });
});

describe('POST /portal: the Continue button', () => {
  it('redeems the link and starts a session: a cookie HttpOnly, Secure, SameSite=Strict under /portal, then home', async () => {
    const { path, token } = await freshLink();
    const { response } = await redeem(path);
    expect(response.status, response.text).toBe(303);
    expect(response.headers.location).toBe('/portal/home');
    const cookie = cookieNamed(response, 'svc_portal_session')?.header ?? '';
    expect(cookie).toMatch(/^svc_portal_session=[A-Za-z0-9_-]{43};/);
    for (const attribute of [
      'HttpOnly',
      'Secure',
      'SameSite=Strict',
      'Path=/portal',
      `Max-Age=${SESSION_MAX_SECONDS}`,
    ]) {
      expect(cookie.split('; ')).toContain(attribute);
    }
    expect((await PORTAL_LINK.find(await linkTokenHash(token)))?.used_at).toBe(now());
  });

  it('redeems a link once: a second press and the page afterwards find it used', async () => {
    const { path } = await freshLink({ locale: 'en_GB' });
    const page = await call('GET', path);
    const csrf = cookieNamed(page, 'svc_portal_csrf')?.pair ?? '';
    const fields = { token: hiddenField(page.text, 'token') ?? '', csrf: hiddenField(page.text, 'csrf') ?? '' };
    expect((await postForm('/portal', fields, [csrf])).status).toBe(303);
    const second = await postForm('/portal', fields, [csrf]);
    expect(second.status).toBe(409);
    expect(second.text).toContain('This link has already been used');
    expect(cookieNamed(second, 'svc_portal_session')).toBeUndefined();
    const after = await call('GET', path);
    expect(after.status).toBe(409);
    expect(hiddenField(after.text, 'organisation_uuid')).toBe(org.organisation);
  });

  it('starts exactly one session for concurrent presses of one link', async () => {
    const { path } = await freshLink();
    const page = await call('GET', path);
    const csrf = cookieNamed(page, 'svc_portal_csrf')?.pair ?? '';
    const fields = { token: hiddenField(page.text, 'token') ?? '', csrf: hiddenField(page.text, 'csrf') ?? '' };
    const answers = await Promise.all(Array.from({ length: 8 }, () => postForm('/portal', fields, [csrf])));
    expect(answers.map((a) => a.status).sort()).toEqual([303, 409, 409, 409, 409, 409, 409, 409]);
    expect(answers.filter((a) => cookieNamed(a, 'svc_portal_session')).length).toBe(1);
  });

  it('refuses a POST without the form’s CSRF pair (403 page), and then still redeems with it', async () => {
    const { path, token } = await freshLink();
    const page = await call('GET', path);
    const csrf = hiddenField(page.text, 'csrf') ?? '';
    const noCookie = await postForm('/portal', { token, csrf });
    const wrong = await postForm('/portal', { token, csrf: 'y'.repeat(43) }, [`svc_portal_csrf=${csrf}`]);
    for (const refused of [noCookie, wrong]) {
      expect(refused.status).toBe(403);
      expectPageHeaders(refused);
      expect(cookieNamed(refused, 'svc_portal_session')).toBeUndefined();
    }
    expect((await PORTAL_LINK.find(await linkTokenHash(token)))?.used_at).toBeUndefined();
    expect((await postForm('/portal', { token, csrf }, [`svc_portal_csrf=${csrf}`])).status).toBe(303);
  });

  it('redeems nothing once the supporter’s e-mail changed', async () => {
    const { path, supporter } = await freshLink({ locale: 'en_GB' });
    const patched = await call('PATCH', `/supporters/${supporter}`, {
      token: org.token,
      body: { email: uniqueEmail() },
    });
    expect(patched.status, patched.text).toBe(200);
    const { response, session } = await redeem(path);
    expect(response.status).toBe(410);
    expect(response.text).toContain('This link is no longer valid');
    expect(session).toBeUndefined();
  });
});

describe('the portal session', () => {
  async function signedIn(fields: Record<string, unknown> = {}) {
    const { path, supporter } = await freshLink(fields, { flow: 'cancel', locale: 'en' });
    const { session } = await redeem(path);
    if (!session) throw new Error('no session');
    return { session, supporter };
  }

  it('opens the home page with the donor’s name, the organisation’s brand and the CSRF meta', async () => {
    const { session } = await signedIn({ first_name: 'Zoë', last_name: 'Keller' });
    const home = await call('GET', '/portal/home', { headers: { cookie: session } });
    expect(home.status, home.text).toBe(200);
    expectPageHeaders(home);
    expect(home.text).toContain('Hello Zoë Keller');
    expect(home.text).toContain('<p class="brand-name">Verein Sonnenschein</p>');
    // Dark blue brand: white text on it (WCAG contrast).
    expect(home.text).toContain('--brand: #0a3d62;');
    expect(home.text).toContain('--on-brand: #ffffff;');
    const meta = /<meta name="csrf-token" content="([A-Za-z0-9_-]{43})">/.exec(home.text);
    expect(meta).not.toBeNull();
    const donor = await requirePortalSession({ cookies: cookiesOf(session) });
    expect(meta?.[1]).toBe(donor.csrf_token);
    expect(donor).toMatchObject({ organisation_uuid: org.organisation, locale: 'en', flow: 'cancel' });
    expect(home.text).toContain('href="https://verein.example.org/danke"');
    const german = await call('GET', '/portal/home?locale=de', { headers: { cookie: session } });
    expect(german.text).toContain('Guten Tag Zoë Keller');
  });

  it('needs a session: the home page without one is a 401 page, the JSON side a 401', async () => {
    const none = await call('GET', '/portal/home');
    expect(none.status).toBe(401);
    expectPageHeaders(none);
    expect(none.text).toContain('Your session has ended');
    const forged = `svc_portal_session=${'A'.repeat(43)}`;
    expect((await call('GET', '/portal/home', { headers: { cookie: forged } })).status).toBe(401);
    await expect(requirePortalSession({ cookies: {} })).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(requirePortalSession({ cookies: cookiesOf(forged) })).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('ends after 30 idle minutes, and slides with activity', async () => {
    const { session } = await signedIn();
    const cookies = cookiesOf(session);
    advanceClock(SESSION_IDLE_SECONDS - 60);
    await expect(requirePortalSession({ cookies })).resolves.toBeDefined();
    // Active just now: another 29 minutes are fine.
    advanceClock(SESSION_IDLE_SECONDS - 60);
    expect((await call('GET', '/portal/home', { headers: { cookie: session } })).status).toBe(200);
    advanceClock(SESSION_IDLE_SECONDS);
    await expect(requirePortalSession({ cookies })).rejects.toBeInstanceOf(UnauthorizedError);
    const ended = await call('GET', '/portal/home', { headers: { cookie: session } });
    expect(ended.status).toBe(401);
    expect(ended.text).toContain('Your session has ended');
    // The ended session still knows its organisation: the page offers the fresh-link form.
    expect(hiddenField(ended.text, 'organisation_uuid')).toBe(org.organisation);
    expect(cookieNamed(ended, 'svc_portal_session')?.header).toContain('Max-Age=0');
  });

  it('ends after 2 hours however active', async () => {
    const { session } = await signedIn();
    const cookies = cookiesOf(session);
    // Active every 20 minutes (never idle) up to a second before the 2 hours.
    for (let step = 0; step < 5; step++) {
      advanceClock(20 * 60);
      await expect(requirePortalSession({ cookies })).resolves.toBeDefined();
    }
    advanceClock(SESSION_MAX_SECONDS - 100 * 60 - 1);
    expect((await call('GET', '/portal/home', { headers: { cookie: session } })).status).toBe(200);
    advanceClock(1);
    await expect(requirePortalSession({ cookies })).rejects.toBeInstanceOf(UnauthorizedError);
    expect((await call('GET', '/portal/home', { headers: { cookie: session } })).status).toBe(401);
  });

  it('checks the CSRF token of a session’s requests: the header or the form field, nothing else', async () => {
    const { session } = await signedIn();
    const donor = await requirePortalSession({ cookies: cookiesOf(session) });
    expect(() => checkCsrf({ headers: { 'x-csrf-token': donor.csrf_token } }, donor)).not.toThrow();
    expect(() => checkCsrf({ headers: {}, body: { csrf_token: donor.csrf_token } }, donor)).not.toThrow();
    for (const request of [
      { headers: {} },
      { headers: { 'x-csrf-token': `${donor.csrf_token}x` } },
      { headers: { 'x-csrf-token': donor.csrf_token.slice(1) } },
      { headers: {}, body: { csrf_token: 'nope' } },
    ]) {
      expect(() => checkCsrf(request, donor)).toThrow(ForbiddenError);
    }
  });

  it('signs out with the session’s CSRF token only: the session is gone', async () => {
    const { session } = await signedIn();
    const donor = await requirePortalSession({ cookies: cookiesOf(session) });
    const refused = await postForm('/portal/logout', { csrf_token: 'wrong' }, [session]);
    expect(refused.status).toBe(403);
    await expect(requirePortalSession({ cookies: cookiesOf(session) })).resolves.toBeDefined();
    const out = await postForm('/portal/logout', { csrf_token: donor.csrf_token }, [session]);
    expect(out.status, out.text).toBe(200);
    expectPageHeaders(out);
    expect(out.text).toContain('You are signed out');
    expect(cookieNamed(out, 'svc_portal_session')?.header).toContain('Max-Age=0');
    await expect(requirePortalSession({ cookies: cookiesOf(session) })).rejects.toBeInstanceOf(UnauthorizedError);
  });
});
