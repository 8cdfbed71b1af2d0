import { advanceClock, freezeClock, newUuid } from '@svc/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { createClient } from '../../identity/src/index';
import { organisationSeedSchema, upsertOrganisation } from '../../organisations/src/index';
import { DEFAULT_SETTINGS, LINK_LIFETIME_SECONDS, linkTokenHash, PORTAL_LINK } from './index';

let token: string;
let otherToken: string;

beforeAll(async () => {
  await seedDemo();
  [token, otherToken] = await Promise.all([tokenFor(DEMO.client), tokenFor(DEMO.otherClient)]);
});

/** A new organisation with a client granted on it alone: settings tests never meet each other. */
async function freshOrganisation(): Promise<{ organisation: string; token: string }> {
  const organisation = newUuid();
  await upsertOrganisation(
    organisationSeedSchema.parse({ uuid: organisation, name: `Verein ${organisation.slice(0, 4)}` }),
  );
  const client = await createClient({ grants: [{ organisation_uuid: organisation }] });
  return { organisation, token: await tokenFor({ id: client.client_id, secret: client.client_secret }) };
}

const settingsPath = (organisation: string) => `/organisations/${organisation}/portal-settings`;

const SETTINGS = {
  enabled: true,
  features: {
    amount: true,
    interval: true,
    next_date: false,
    skip: true,
    pause: true,
    payment_method: true,
    cancel: true,
  },
  min_amount: 500,
  max_amount: 100_000,
  intervals: ['monthly', 'yearly', '1 * *'],
  cancel_reasons: ['too_expensive', 'other'],
  retention_offer: 'pause',
  brand: { name: 'Verein Sonnenschein', color: '#0a7d3b' },
  return_url: 'https://verein.example.org/danke',
};

function details(response: { json: { error: { message: Array<{ code: string; property: string }> } } }) {
  return response.json.error.message.map((d) => d.property);
}

describe('portal settings (contract section 12)', () => {
  it('answers the defaults until set (portal off), then exactly what was PUT', async () => {
    const { organisation, token: own } = await freshOrganisation();
    const before = await call('GET', settingsPath(organisation), { token: own });
    expect(before.status, before.text).toBe(200);
    expect(before.json).toEqual(DEFAULT_SETTINGS);
    expect(before.json.enabled).toBe(false);

    const put = await call('PUT', settingsPath(organisation), { token: own, body: SETTINGS });
    expect(put.status, put.text).toBe(200);
    expect(put.json).toEqual(SETTINGS);
    expect((await call('GET', settingsPath(organisation), { token: own })).json).toEqual(SETTINGS);
  });

  it('refuses bad settings with 400 naming each property, and changes nothing', async () => {
    const { organisation, token: own } = await freshOrganisation();
    await call('PUT', settingsPath(organisation), { token: own, body: SETTINGS });
    const bad = {
      ...SETTINGS,
      min_amount: 2_000,
      max_amount: 1_000,
      intervals: ['fortnightly'],
      cancel_reasons: ['Too Expensive!'],
      retention_offer: 'discount',
      brand: { name: 'X', color: 'green' },
      return_url: 'http://verein.example.org',
    };
    const response = await call('PUT', settingsPath(organisation), { token: own, body: bad });
    expect(response.status).toBe(400);
    expect(details(response)).toEqual(
      expect.arrayContaining(['intervals.0', 'cancel_reasons.0', 'retention_offer', 'brand.color', 'return_url']),
    );
    const missing = await call('PUT', settingsPath(organisation), {
      token: own,
      body: { ...SETTINGS, features: { amount: true } },
    });
    expect(missing.status).toBe(400);
    const unknown = await call('PUT', settingsPath(organisation), { token: own, body: { ...SETTINGS, colour: 'x' } });
    expect(unknown.status).toBe(400);
    const reversed = await call('PUT', settingsPath(organisation), {
      token: own,
      body: { ...SETTINGS, min_amount: 2_000, max_amount: 1_000 },
    });
    expect(details(reversed)).toEqual(['max_amount']);
    expect((await call('GET', settingsPath(organisation), { token: own })).json).toEqual(SETTINGS);
  });

  it('belongs to the organisation: another client gets 403, an unknown organisation 404', async () => {
    const { organisation } = await freshOrganisation();
    expect((await call('GET', settingsPath(organisation), { token: otherToken })).status).toBe(403);
    expect((await call('PUT', settingsPath(organisation), { token: otherToken, body: SETTINGS })).status).toBe(403);
    expect((await call('GET', settingsPath(newUuid()), { token })).status).toBe(404);
    expect((await call('GET', settingsPath(organisation))).status).toBe(401);
  });

  it('keeps every one of concurrent PUTs whole: the last written is what GET shows', async () => {
    const { organisation, token: own } = await freshOrganisation();
    const bodies = Array.from({ length: 6 }, (_, i) => ({ ...SETTINGS, min_amount: 100 + i }));
    const answers = await Promise.all(
      bodies.map((body) => call('PUT', settingsPath(organisation), { token: own, body })),
    );
    expect(answers.map((a) => a.status)).toEqual(bodies.map(() => 200));
    const final = (await call('GET', settingsPath(organisation), { token: own })).json;
    expect(bodies).toContainEqual(final);
  });
});

describe('portal links (contract section 12)', () => {
  async function supporterOf(organisation: string, as: string, fields: Record<string, unknown> = {}) {
    const response = await call('POST', '/supporters', {
      token: as,
      body: {
        organisation_uuid: organisation,
        first_name: 'Anna',
        email: 'Anna@Example.org',
        locale: 'fr_CH',
        ...fields,
      },
    });
    expect(response.status, response.text).toBe(201);
    return response.json.uuid as string;
  }

  it('makes a 24-hour link whose token is kept only as a keyed hash, bound to the supporter, e-mail and flow', async () => {
    freezeClock(1_800_000_000);
    const { organisation, token: own } = await freshOrganisation();
    await call('PUT', settingsPath(organisation), { token: own, body: SETTINGS });
    const supporter = await supporterOf(organisation, own);
    const response = await call('POST', `/supporters/${supporter}/portal-links`, {
      token: own,
      body: { flow: 'cancel' },
    });
    expect(response.status, response.text).toBe(201);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.json.expires_at).toBe(1_800_000_000 + LINK_LIFETIME_SECONDS);
    const url = new URL(response.json.url);
    expect(url.pathname).toBe('/portal');
    const linkToken = url.searchParams.get('token') ?? '';
    // At least 128 random bits: 32 bytes of base64url.
    expect(linkToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = await PORTAL_LINK.find(await linkTokenHash(linkToken));
    expect(stored).toMatchObject({
      organisation_uuid: organisation,
      supporter_uuid: supporter,
      email: 'anna@example.org',
      flow: 'cancel',
      locale: 'fr',
      return_url: SETTINGS.return_url,
    });
    expect(JSON.stringify(stored)).not.toContain(linkToken);
    // Two links are two tokens.
    const again = await call('POST', `/supporters/${supporter}/portal-links`, { token: own, body: { flow: 'cancel' } });
    expect(again.json.url).not.toBe(response.json.url);
    advanceClock(1);
  });

  it('refuses where no link can work: portal off (409), no e-mail, bad input (400), another organisation (403)', async () => {
    const { organisation, token: own } = await freshOrganisation();
    const supporter = await supporterOf(organisation, own);
    const off = await call('POST', `/supporters/${supporter}/portal-links`, { token: own, body: { flow: 'manage' } });
    expect(off.status).toBe(409);
    expect(off.json.error.message[0].code).toBe('error.portal.disabled');

    await call('PUT', settingsPath(organisation), { token: own, body: SETTINGS });
    const silent = await supporterOf(organisation, own, { email: undefined });
    const noEmail = await call('POST', `/supporters/${silent}/portal-links`, { token: own, body: { flow: 'manage' } });
    expect(noEmail.status).toBe(400);
    expect(noEmail.json.error.message[0].code).toBe('error.portal.no_email');

    for (const body of [
      { flow: 'delete_everything' },
      { flow: 'manage', locale: 'es' },
      { flow: 'manage', return_url: 'javascript:alert(1)' },
      { flow: 'manage', subscription_uuid: 'not-a-uuid' },
    ]) {
      const response = await call('POST', `/supporters/${supporter}/portal-links`, { token: own, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
    }
    expect(
      (await call('POST', `/supporters/${supporter}/portal-links`, { token: otherToken, body: { flow: 'manage' } }))
        .status,
    ).toBe(403);
    expect(
      (await call('POST', `/supporters/${newUuid()}/portal-links`, { token: own, body: { flow: 'manage' } })).status,
    ).toBe(404);
  });
});
