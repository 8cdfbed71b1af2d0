import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { findAccount } from '@svc/organisations';
import { db, tableName } from '@svc/table';
import { describe, expect, it } from 'vitest';
import { call, DEMO, tokenFor } from '../../../test/support/api';
import { DEMO_SEED } from './demo-seed';
import { applySeed, parseSeed } from './seed';

async function snapshot() {
  const items = (await db().send(new ScanCommand({ TableName: tableName() }))).Items ?? [];
  return items
    .filter((item) => item.entity !== 'client')
    .map((item) => JSON.stringify(item))
    .sort();
}

describe('seed files', () => {
  it('apply idempotently: a second run changes no record and keeps created times', async () => {
    const seed = parseSeed(DEMO_SEED);
    await applySeed(seed);
    const first = await snapshot();
    await applySeed(seed);
    expect(await snapshot()).toEqual(first);
    const token = await tokenFor(DEMO.client);
    expect((await call('GET', '/organisations', { token })).json).toHaveLength(1);
  });

  it('update a record in place when its uuid is seen again', async () => {
    const seed = parseSeed(DEMO_SEED);
    await applySeed(seed);
    const token = await tokenFor(DEMO.client);
    const before = (await call('GET', `/organisations/${DEMO.org}`, { token })).json;
    const renamed = structuredClone(seed);
    const organisation = renamed.organisations[0];
    if (!organisation) throw new Error('demo seed has no organisation');
    organisation.name = 'Renamed Foundation';
    await applySeed(renamed);
    const after = (await call('GET', `/organisations/${DEMO.org}`, { token })).json;
    expect(after).toEqual({ ...before, name: 'Renamed Foundation' });
  });

  it('give every account the default card, twint and sepa_dd profiles unless it lists its own', async () => {
    await applySeed(parseSeed(DEMO_SEED));
    expect((await findAccount(DEMO.account))?.payment_method_profiles).toEqual([
      { name: 'card-test', payment_method: 'card', provider: 'simulated' },
    ]);
    expect((await findAccount(DEMO.secondAccount))?.payment_method_profiles.map((p) => p.name)).toEqual([
      'card',
      'twint',
      'sepa_dd',
    ]);
  });

  it('take routed profiles, and refuse a bad candidate naming its field', async () => {
    const seed = structuredClone(DEMO_SEED) as {
      organisations: Array<{ accounts: Array<{ uuid: string; payment_method_profiles?: unknown[] }> }>;
    };
    const account = seed.organisations[0]?.accounts[0];
    if (!account) throw new Error('The demo seed has an account');
    account.payment_method_profiles = [
      {
        name: 'card-route',
        payment_method: 'card',
        route: [
          { provider: 'stripe', weight: 3 },
          { provider: 'adyen', merchant_account: 'CharityECOM', when: { currency: ['CHF', 'EUR'] }, weight: 1 },
        ],
      },
    ];
    await applySeed(parseSeed(seed));
    expect((await findAccount(account.uuid))?.payment_method_profiles[0]?.route).toHaveLength(2);
    account.payment_method_profiles = [
      {
        name: 'bad',
        payment_method: 'card',
        route: [{ provider: 'stripe' }, { provider: 'adyen', merchant_account: 'no spaces' }],
      },
    ];
    expect(() => parseSeed(seed)).toThrow(/payment_method_profiles\.0\.route\.1\.merchant_account/);
  });

  it('refuse an invalid file with every problem named', () => {
    expect(() =>
      parseSeed({ organisations: [{ uuid: 'nope', name: '' }], clients: [{ client_id: 'a', client_secret: 'short' }] }),
    ).toThrow(/organisations\.0\.uuid[\s\S]*organisations\.0\.name[\s\S]*clients\.0\.client_secret/);
  });

  interface Partner {
    logos: { horizontal: string; square: string };
    descriptions: Record<string, string>;
    base_url: string;
    allow_self_disconnect: boolean;
    support_url?: string;
    return_label: string;
  }
  describe("validate a partner's registration data", () => {
    const partner = () => structuredClone((DEMO_SEED as unknown as { partners: Partner[] }).partners[0]) as Partner;
    const refusal = (changed: Partner) => () => parseSeed({ partners: [changed] });

    it('accepts the demo partner', () => {
      expect(parseSeed({ partners: [partner()] }).partners).toHaveLength(1);
    });

    it.each([
      [
        'a horizontal logo of the wrong size',
        (p: Partner) => {
          p.logos.horizontal = p.logos.square;
        },
        /logos\.horizontal/,
      ],
      [
        'a square logo that is not SVG',
        (p: Partner) => {
          p.logos.square = '<png/>';
        },
        /logos\.square/,
      ],
      [
        'a logo with a script',
        (p: Partner) => {
          p.logos.square = p.logos.square.replace('</svg>', '<script>alert(1)</script></svg>');
        },
        /logos\.square/,
      ],
      [
        'a description over 150 characters',
        (p: Partner) => {
          p.descriptions.fr = 'x'.repeat(151);
        },
        /descriptions\.fr/,
      ],
      [
        'a base URL without https',
        (p: Partner) => {
          p.base_url = 'http://partner.example.org';
        },
        /base_url/,
      ],
      [
        'no self-disconnect and no support URL',
        (p: Partner) => {
          p.allow_self_disconnect = false;
          delete p.support_url;
        },
        /support_url/,
      ],
      [
        'an empty return label',
        (p: Partner) => {
          p.return_label = ' ';
        },
        /return_label/,
      ],
    ])('refuses %s', (_label, change, property) => {
      const changed = partner();
      change(changed);
      expect(refusal(changed)).toThrow(property);
    });

    it('refuses two partners with one onboarding configuration', () => {
      const second = { ...partner(), client_id: 'second-partner' };
      expect(() => parseSeed({ partners: [partner(), second] })).toThrow(/partners\.1\.onboarding_configuration_uuid/);
    });

    it('accepts a partner that allows self-disconnect without a support URL', () => {
      const changed = partner();
      changed.allow_self_disconnect = true;
      delete changed.support_url;
      expect(parseSeed({ partners: [changed] }).partners[0]?.allow_self_disconnect).toBe(true);
    });
  });
});
