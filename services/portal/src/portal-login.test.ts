import { advanceClock, freezeClock, newUuid, now } from '@svc/core';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, seedDemo } from '../../../test/support/api';
import { LOGIN_LIMITS } from './index';
import {
  expectPageHeaders,
  mailTo,
  type PortalOrganisation,
  portalOrganisation,
  postForm,
  redeem,
  refreshToken,
  settle,
  supporterOf,
  uniqueEmail,
} from './testing-portal';

let org: PortalOrganisation;
let address = 0;
/** A caller address no other test uses (the per-address limit counts by it). */
const nextAddress = () => `198.51.100.${++address}`;

const login = (body: Record<string, unknown>, sourceIp: string) => call('POST', '/portal/login', { body, sourceIp });

beforeAll(async () => {
  await seedDemo();
  await settle();
  org = await portalOrganisation();
});

beforeEach(async () => {
  // Windows are clock-aligned: each test starts at a window's start, so none ends mid-test.
  freezeClock((Math.floor(now() / LOGIN_LIMITS.email.windowSeconds) + 1) * LOGIN_LIMITS.email.windowSeconds);
  await refreshToken(org);
});

describe('POST /portal/login (contract section 12)', () => {
  it('answers 202 with the same body whether or not the e-mail is a donor’s, and mails only a donor', async () => {
    const email = uniqueEmail();
    await supporterOf(org, { email: email.toUpperCase(), first_name: 'Lea', locale: 'it_CH' });
    const off = await portalOrganisation({ enabled: false });
    const offEmail = uniqueEmail();
    await supporterOf(off, { email: offEmail });
    const stranger = uniqueEmail();
    const ip = nextAddress();
    const answers = [
      await login({ organisation_uuid: org.organisation, email }, ip),
      await login({ organisation_uuid: org.organisation, email: stranger }, ip),
      await login({ organisation_uuid: off.organisation, email: offEmail }, ip),
      await login({ organisation_uuid: newUuid(), email }, ip),
    ];
    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(202);
      expect(answer.headers['cache-control']).toBe('no-store');
    }
    expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);
    await settle();
    // Known (any case) and portal on: a fresh manage link, in the supporter's language.
    const [mail, ...more] = await mailTo(email.toUpperCase());
    expect(more).toEqual([]);
    expect(mail?.subject).toBe('Gestire le sue donazioni: Verein Sonnenschein');
    const url = new URL(mail?.links[0] ?? '');
    expect(url.pathname).toBe('/portal');
    const { response } = await redeem(`${url.pathname}${url.search}`);
    expect(response.status).toBe(303);
    expect(await mailTo(stranger)).toEqual([]);
    expect(await mailTo(offEmail)).toEqual([]);
  });

  it('finds the supporter by the e-mail it has now: a changed address moves it', async () => {
    const before = uniqueEmail('before');
    const after = uniqueEmail('after');
    const supporter = await supporterOf(org, { email: before });
    const patched = await call('PATCH', `/supporters/${supporter}`, { token: org.token, body: { email: after } });
    expect(patched.status, patched.text).toBe(200);
    const ip = nextAddress();
    expect((await login({ organisation_uuid: org.organisation, email: before }, ip)).status).toBe(202);
    expect((await login({ organisation_uuid: org.organisation, email: after }, ip)).status).toBe(202);
    // Removed: found no more.
    const gone = uniqueEmail('gone');
    const removed = await supporterOf(org, { email: gone });
    expect((await call('PATCH', `/supporters/${removed}`, { token: org.token, body: { email: null } })).status).toBe(
      200,
    );
    expect((await login({ organisation_uuid: org.organisation, email: gone }, ip)).status).toBe(202);
    await settle();
    expect(await mailTo(before)).toEqual([]);
    expect(await mailTo(after)).toHaveLength(1);
    expect(await mailTo(gone)).toEqual([]);
  });

  it('refuses bad input with 400', async () => {
    const ip = nextAddress();
    for (const body of [
      { organisation_uuid: 'nope', email: 'a@example.org' },
      { organisation_uuid: org.organisation, email: 'not an address' },
      { organisation_uuid: org.organisation },
      { organisation_uuid: org.organisation, email: 'a@example.org', extra: true },
    ]) {
      expect((await login(body, ip)).status, JSON.stringify(body)).toBe(400);
    }
  });

  it(`allows ${LOGIN_LIMITS.email.max} requests per e-mail in 15 minutes, then 429 in the error shape, known e-mail or not`, async () => {
    for (const known of [true, false]) {
      const email = uniqueEmail();
      if (known) await supporterOf(org, { email });
      const answers = [];
      // From different addresses: the e-mail's own limit.
      for (let i = 0; i <= LOGIN_LIMITS.email.max; i++) {
        answers.push(await login({ organisation_uuid: org.organisation, email }, nextAddress()));
      }
      expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202, 429]);
      const refused = answers.at(-1);
      expect(refused?.json.error).toMatchObject({ http_code: 429, code: 'too_many_requests' });
      expect(Number(refused?.headers['retry-after'])).toBe(LOGIN_LIMITS.email.windowSeconds);
      // Any case is the same e-mail.
      expect(
        (await login({ organisation_uuid: org.organisation, email: email.toUpperCase() }, nextAddress())).status,
      ).toBe(429);
    }
    // The next window takes requests again.
    const email = uniqueEmail();
    for (let i = 0; i < LOGIN_LIMITS.email.max; i++)
      await login({ organisation_uuid: org.organisation, email }, nextAddress());
    expect((await login({ organisation_uuid: org.organisation, email }, nextAddress())).status).toBe(429);
    advanceClock(LOGIN_LIMITS.email.windowSeconds);
    expect((await login({ organisation_uuid: org.organisation, email }, nextAddress())).status).toBe(202);
  });

  it(`allows ${LOGIN_LIMITS.address.max} requests per address in a minute, then 429; an IPv6 address counts by its /64`, async () => {
    const ip = nextAddress();
    const statuses = [];
    for (let i = 0; i <= LOGIN_LIMITS.address.max; i++) {
      statuses.push((await login({ organisation_uuid: org.organisation, email: uniqueEmail() }, ip)).status);
    }
    expect(statuses.filter((status) => status === 202)).toHaveLength(LOGIN_LIMITS.address.max);
    expect(statuses.at(-1)).toBe(429);
    advanceClock(LOGIN_LIMITS.address.windowSeconds);
    expect((await login({ organisation_uuid: org.organisation, email: uniqueEmail() }, ip)).status).toBe(202);

    const prefix = `2001:db8:${(address + 1000).toString(16)}:1`;
    const v6 = Array.from({ length: LOGIN_LIMITS.address.max + 1 }, (_, i) => `${prefix}::${(i + 1).toString(16)}`);
    const v6Statuses = [];
    for (const source of v6) {
      v6Statuses.push((await login({ organisation_uuid: org.organisation, email: uniqueEmail() }, source)).status);
    }
    expect(v6Statuses.at(-1)).toBe(429);
    expect(v6Statuses.filter((status) => status === 202)).toHaveLength(LOGIN_LIMITS.address.max);
  });

  it('holds the limits for requests sent at once: exactly the limit is admitted', async () => {
    const email = uniqueEmail();
    const parallelByEmail = await Promise.all(
      Array.from({ length: 12 }, () => login({ organisation_uuid: org.organisation, email }, nextAddress())),
    );
    expect(parallelByEmail.filter((a) => a.status === 202)).toHaveLength(LOGIN_LIMITS.email.max);
    expect(parallelByEmail.filter((a) => a.status === 429)).toHaveLength(12 - LOGIN_LIMITS.email.max);

    const ip = nextAddress();
    const parallelByAddress = await Promise.all(
      Array.from({ length: 30 }, () => login({ organisation_uuid: org.organisation, email: uniqueEmail() }, ip)),
    );
    expect(parallelByAddress.filter((a) => a.status === 202)).toHaveLength(LOGIN_LIMITS.address.max);
    expect(parallelByAddress.filter((a) => a.status === 429)).toHaveLength(30 - LOGIN_LIMITS.address.max);
  });
});

describe('the login form of the pages (POST /portal/login-form)', () => {
  it('answers the same "check your e-mail" page for a donor and a stranger, and mails the donor', async () => {
    const email = uniqueEmail();
    await supporterOf(org, { email, locale: 'de_CH' });
    const ip = nextAddress();
    const fields = (address_: string) => ({ organisation_uuid: org.organisation, email: address_, locale: 'de' });
    const known = await postForm('/portal/login-form', fields(email), [], ip);
    const stranger = uniqueEmail();
    const unknown = await postForm('/portal/login-form', fields(stranger), [], ip);
    for (const page of [known, unknown]) {
      expect(page.status, page.text).toBe(200);
      expectPageHeaders(page);
      expect(page.text).toContain('Prüfen Sie Ihre E-Mails');
    }
    expect(known.text.replace(email, '')).toBe(unknown.text.replace(stranger, ''));
    await settle();
    expect(await mailTo(email)).toHaveLength(1);
  });

  it('sends the form back with the error for a bad address (400), and a 429 page over a limit', async () => {
    const ip = nextAddress();
    const bad = await postForm('/portal/login-form', { organisation_uuid: org.organisation, email: 'nope' }, [], ip);
    expect(bad.status).toBe(400);
    expectPageHeaders(bad);
    expect(bad.text).toContain('aria-invalid="true"');
    expect(bad.text).toContain('Enter an e-mail address');
    const email = uniqueEmail();
    let last = bad;
    for (let i = 0; i <= LOGIN_LIMITS.email.max; i++) {
      last = await postForm('/portal/login-form', { organisation_uuid: org.organisation, email }, [], nextAddress());
    }
    expect(last.status).toBe(429);
    expectPageHeaders(last);
    expect(last.headers['retry-after']).toBe(String(LOGIN_LIMITS.email.windowSeconds));
    expect(last.text).toContain('Too many requests');
    // The JSON route and the form count together.
    expect((await login({ organisation_uuid: org.organisation, email }, nextAddress())).status).toBe(429);
  });
});
