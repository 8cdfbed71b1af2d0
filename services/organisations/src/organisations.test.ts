import { beforeAll, describe, expect, it } from 'vitest';
import { call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { createClient } from '../../identity/src/index';
import { organisationSeedSchema, upsertOrganisation } from './index';

let token: string;
let otherToken: string;

beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.client);
  otherToken = await tokenFor(DEMO.otherClient);
});

describe('organisations', () => {
  it('lists only what the grants cover, in the list shape with created as a string', async () => {
    const response = await call('GET', '/organisations', { token });
    expect(response.status).toBe(200);
    expect(response.json).toEqual([
      {
        uuid: DEMO.org,
        name: 'Demo Foundation',
        created: expect.stringMatching(/^\d+$/),
        approval_status: 'approved',
        active: true,
        // Beyond the interface's list fields: what the single answer shows (issue 34).
        merchant_category_code: expect.any(String),
        locale: expect.any(String),
        accounts: expect.arrayContaining([{ uuid: DEMO.account }]),
      },
    ]);
  });

  it('lists at most 500 organisations', async () => {
    const uuids = Array.from({ length: 501 }, (_, i) => `5e000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    for (let i = 0; i < uuids.length; i += 50) {
      await Promise.all(
        uuids
          .slice(i, i + 50)
          .map((uuid) => upsertOrganisation(organisationSeedSchema.parse({ uuid, name: `Org ${uuid}` }))),
      );
    }
    const created = await createClient({ grants: uuids.map((uuid) => ({ organisation_uuid: uuid })) });
    const many = await tokenFor({ id: created.client_id, secret: created.client_secret });
    const response = await call('GET', '/organisations', { token: many });
    expect(response.status).toBe(200);
    expect(response.json).toHaveLength(500);
    expect(new Set(response.json.map((o: { uuid: string }) => o.uuid)).size).toBe(500);
  });

  it('returns the single shape with accounts and an integer created', async () => {
    const response = await call('GET', `/organisations/${DEMO.org}`, { token });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      uuid: DEMO.org,
      name: 'Demo Foundation',
      created: expect.any(Number),
      active: true,
      approval_status: 'approved',
      merchant_category_code: '8398',
      locale: 'de_CH',
      accounts: [{ uuid: DEMO.account }, { uuid: DEMO.secondAccount }],
    });
  });

  it('serves addresses, one address and metadata', async () => {
    const list = await call('GET', `/organisations/${DEMO.org}/addresses`, { token });
    expect(list.status).toBe(200);
    expect(list.json).toEqual([
      {
        uuid: DEMO.orgAddress,
        created: expect.any(Number),
        address_line1: 'Bahnhofstrasse 1',
        address_line2: '',
        postal_code: '8001',
        city: 'Zürich',
        country_code: 'CH',
        type: 'billing',
      },
    ]);
    const one = await call('GET', `/organisations/${DEMO.org}/addresses/${DEMO.orgAddress}`, { token });
    expect(one.json).toEqual(list.json[0]);
    const metadata = await call('GET', `/organisations/${DEMO.org}/metadata`, { token });
    expect(metadata.json).toEqual({ crm: 'demo' });
  });

  it('answers 403 across tenants on every organisation path', async () => {
    for (const path of [
      `/organisations/${DEMO.otherOrg}`,
      `/organisations/${DEMO.otherOrg}/addresses`,
      `/organisations/${DEMO.otherOrg}/metadata`,
      `/accounts/${DEMO.otherAccount}`,
      `/accounts/${DEMO.otherAccount}/billing-data`,
      `/accounts/${DEMO.otherAccount}/addresses`,
      `/accounts/${DEMO.otherAccount}/metadata`,
      `/accounts?organisation_uuid=${DEMO.otherOrg}`,
    ]) {
      const response = await call('GET', path, { token });
      expect(response.status, path).toBe(403);
      expect(response.json.error).toMatchObject({ http_code: 403, code: 'forbidden' });
      expect(response.json.request_id).toBe(response.headers['x-request-id']);
    }
    expect((await call('GET', `/organisations/${DEMO.org}`, { token: otherToken })).status).toBe(403);
  });

  it('answers 404 for unknown and malformed uuids', async () => {
    const unknown = '11111111-2222-4333-8444-555555555555';
    for (const path of [
      `/organisations/${unknown}`,
      `/organisations/${unknown}/addresses`,
      `/organisations/${DEMO.org}/addresses/${unknown}`,
      `/accounts/${unknown}`,
      `/accounts/${DEMO.account}/addresses/${unknown}`,
      '/organisations/not-a-uuid',
      '/organisations/not-a-uuid/metadata',
      '/accounts/123',
      `/organisations/${DEMO.org}/addresses/xyz`,
    ]) {
      const response = await call('GET', path, { token });
      expect(response.status, path).toBe(404);
      expect(response.json.error).toMatchObject({ http_code: 404, code: 'not_found' });
    }
  });
});

describe('POST /search/organisations', () => {
  it('finds only what the grants cover, in the single shape, with aggregations', async () => {
    const response = await call('POST', '/search/organisations', {
      token,
      body: {
        query: { $match: { name: 'demo foundation' } },
        aggs: { by_status: { type: 'term', field: 'approval_status' } },
      },
    });
    expect(response.status).toBe(200);
    expect(response.json.summary.hits).toBe(1);
    expect(response.json.hits[0]).toMatchObject({
      uuid: DEMO.org,
      merchant_category_code: '8398',
      created: expect.any(Number),
    });
    expect(response.json.aggregations.by_status).toEqual([{ key: 'approved', doc_count: 1 }]);
    const everything = await call('POST', '/search/organisations', { token, body: { query: { $match: {} } } });
    expect(everything.json.hits.map((o: { uuid: string }) => o.uuid)).not.toContain(DEMO.otherOrg);
    const other = await call('POST', '/search/organisations', {
      token: otherToken,
      body: { query: { $term: { uuid: DEMO.org } } },
    });
    expect(other.json.summary.hits).toBe(0);
  });

  it('answers 400 naming the property for an invalid request', async () => {
    const response = await call('POST', '/search/organisations', {
      token,
      body: { query: { $range: { created: 'soon' } } },
    });
    expect(response.status).toBe(400);
    expect(response.json.error.message[0].property).toContain('query');
  });
});

describe('accounts', () => {
  it('lists accounts in the list shape, filtered by organisation', async () => {
    const all = await call('GET', '/accounts', { token });
    expect(all.status).toBe(200);
    expect(all.json.map((a: { uuid: string }) => a.uuid).sort()).toEqual([DEMO.account, DEMO.secondAccount].sort());
    expect(all.json[0]).toEqual({
      uuid: expect.any(String),
      name: expect.any(String),
      created: expect.any(Number),
      active: true,
      organisation_uuid: DEMO.org,
      organisation: { uuid: DEMO.org, name: 'Demo Foundation', created: expect.any(Number), active: true },
    });
    const filtered = await call('GET', `/accounts?organisation_uuid=${DEMO.org}`, { token });
    expect(filtered.json).toEqual(all.json);
  });

  it('returns the single shape with the organisation object in place of organisation_uuid', async () => {
    const response = await call('GET', `/accounts/${DEMO.account}`, { token });
    expect(response.json).toEqual({
      uuid: DEMO.account,
      name: 'Main account',
      created: expect.any(Number),
      active: true,
      organisation: { uuid: DEMO.org, name: 'Demo Foundation', created: expect.any(Number), active: true },
    });
  });

  it('returns billing data with the organisation and account names', async () => {
    const response = await call('GET', `/accounts/${DEMO.account}/billing-data`, { token });
    expect(response.json).toEqual({
      organisation_name: 'Demo Foundation',
      account_name: 'Main account',
      account_holder: 'Demo Foundation',
      iban: 'CH93 0076 2011 6238 5295 7',
      vat_number: 'CHE-123.456.789 MWST',
      recipient_emails: ['finance@example.org'],
      address: {
        address_line1: 'Bahnhofstrasse 1',
        address_line2: '',
        postal_code: '8001',
        city: 'Zürich',
        country_code: 'CH',
      },
    });
    expect((await call('GET', `/accounts/${DEMO.secondAccount}/metadata`, { token })).json).toEqual({
      purpose: 'events',
    });
    expect((await call('GET', `/accounts/${DEMO.account}/addresses`, { token })).json).toEqual([]);
  });

  it("lists and reads an account's own addresses, apart from the organisation's", async () => {
    const org = '3d8e0f52-7a41-4c6b-9e2d-5f1a2b3c4d5e';
    const account = '4e9f1a63-8b52-4d7c-8f3e-6a2b3c4d5e6f';
    const address = '5fa02b74-9c63-4e8d-9a4f-7b3c4d5e6f70';
    await upsertOrganisation(
      organisationSeedSchema.parse({
        uuid: org,
        name: 'Account Address Foundation',
        accounts: [
          {
            uuid: account,
            name: 'Shop',
            addresses: [
              { uuid: address, address_line1: 'Marktgasse 5', postal_code: '3011', city: 'Bern', country_code: 'CH' },
            ],
          },
        ],
      }),
    );
    const created = await createClient({ grants: [{ organisation_uuid: org }] });
    const granted = await tokenFor({ id: created.client_id, secret: created.client_secret });
    const list = await call('GET', `/accounts/${account}/addresses`, { token: granted });
    expect(list.json).toEqual([
      {
        uuid: address,
        created: expect.any(Number),
        address_line1: 'Marktgasse 5',
        address_line2: '',
        postal_code: '3011',
        city: 'Bern',
        country_code: 'CH',
        type: 'billing',
      },
    ]);
    const one = await call('GET', `/accounts/${account}/addresses/${address}`, { token: granted });
    expect(one.status).toBe(200);
    expect(one.json).toEqual(list.json[0]);
    expect((await call('GET', `/organisations/${org}/addresses`, { token: granted })).json).toEqual([]);
    expect((await call('GET', `/accounts/${account}/addresses/${address}`, { token })).status).toBe(403);
  });

  it('limits an account-level grant to that account', async () => {
    const created = await createClient({ grants: [{ organisation_uuid: DEMO.org, account_uuid: DEMO.account }] });
    const narrow = await tokenFor({ id: created.client_id, secret: created.client_secret });
    expect((await call('GET', `/accounts/${DEMO.account}`, { token: narrow })).status).toBe(200);
    expect((await call('GET', `/accounts/${DEMO.secondAccount}`, { token: narrow })).status).toBe(403);
    const accounts = await call('GET', '/accounts', { token: narrow });
    expect(accounts.json.map((a: { uuid: string }) => a.uuid)).toEqual([DEMO.account]);
    const organisation = await call('GET', `/organisations/${DEMO.org}`, { token: narrow });
    expect(organisation.json.accounts).toEqual([{ uuid: DEMO.account }]);
    for (const path of [
      `/organisations/${DEMO.org}/metadata`,
      `/organisations/${DEMO.org}/addresses`,
      `/organisations/${DEMO.org}/addresses/${DEMO.orgAddress}`,
    ]) {
      expect((await call('GET', path, { token: narrow })).status, path).toBe(403);
    }
  });

  it('treats upper-case uuids as the same records', async () => {
    const upper = await call('GET', `/organisations/${DEMO.org.toUpperCase()}`, { token });
    expect(upper.status).toBe(200);
    expect(upper.json.uuid).toBe(DEMO.org);
    const accounts = await call('GET', `/accounts?organisation_uuid=${DEMO.org.toUpperCase()}`, { token });
    expect(accounts.status).toBe(200);
    expect(accounts.json).toHaveLength(2);
  });

  it('rejects a malformed organisation_uuid filter with 400', async () => {
    const response = await call('GET', '/accounts?organisation_uuid=nope', { token });
    expect(response.status).toBe(400);
    expect(response.json.error.message[0].property).toBe('organisation_uuid');
  });
});
