import { freezeClock, newUuid, ValidationError } from '@svc/core';
import { getItem, transactWrite } from '@svc/table';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { createClient } from '../../identity/src/index';
import { organisationSeedSchema, upsertOrganisation } from '../../organisations/src/index';
import {
  findSupporter,
  findSupporterByEmail,
  SUPPORTER,
  type Supporter,
  supporterFromPaymentInput,
  supporterShape,
  supporterWrite,
} from './index';

let token: string;
let otherToken: string;

beforeAll(async () => {
  await seedDemo();
  [token, otherToken] = await Promise.all([tokenFor(DEMO.client), tokenFor(DEMO.otherClient)]);
});

const UNKNOWN = '11111111-2222-4333-8444-555555555555';

async function create(body: Record<string, unknown>, as = token) {
  return call('POST', '/supporters', { token: as, body: { organisation_uuid: DEMO.org, ...body } });
}

async function createOk(body: Record<string, unknown>, as = token): Promise<Supporter> {
  const response = await create(body, as);
  expect(response.status, response.text).toBe(201);
  return response.json;
}

/** A new organisation with its own client, so list tests see only their own supporters. */
async function freshOrganisation(): Promise<{ organisation: string; token: string }> {
  const organisation = newUuid();
  await upsertOrganisation(organisationSeedSchema.parse({ uuid: organisation, name: `Org ${organisation}` }));
  const client = await createClient({ grants: [{ organisation_uuid: organisation }] });
  return { organisation, token: await tokenFor({ id: client.client_id, secret: client.client_secret }) };
}

function details(response: { json: { error: { message: Array<{ code: string; property: string }> } } }) {
  return response.json.error.message.map((d) => ({ code: d.code, property: d.property }));
}

describe('create, read and update', () => {
  it('creates a supporter and reads it back, with unset fields omitted', async () => {
    freezeClock(1_700_000_000);
    // A token is valid from the service time it was issued at, so take one on the moved clock.
    const early = await tokenFor(DEMO.client);
    const response = await create(
      {
        first_name: 'Anna',
        last_name: 'Muster',
        email: 'anna@example.org',
        email_permission: true,
        custom_parameters: { campaign: 'spring' },
        svc_parameters: { fundraising_automation: { crm_id: 'crm-1' } },
      },
      early,
    );
    expect(response.status).toBe(201);
    expect(response.json).toEqual({
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      organisation_uuid: DEMO.org,
      created: 1_700_000_000,
      first_name: 'Anna',
      last_name: 'Muster',
      email: 'anna@example.org',
      email_permission: true,
      custom_parameters: { campaign: 'spring' },
      svc_parameters: { fundraising_automation: { crm_id: 'crm-1' } },
    });
    const read = await call('GET', `/supporters/${response.json.uuid}`, { token: early });
    expect(read.status).toBe(200);
    expect(read.json).toEqual(response.json);
  });

  it('treats null, "" and {} on create as unset', async () => {
    const supporter = await createOk({ first_name: 'Ben', city: null, phone: '', custom_parameters: {} });
    expect(Object.keys(supporter).sort()).toEqual(['created', 'first_name', 'organisation_uuid', 'uuid']);
  });

  it('updates only the fields sent and removes those sent as null, "" or {}', async () => {
    const supporter = await createOk({
      first_name: 'Carla',
      last_name: 'Old',
      city: 'Bern',
      phone: '+41 31 000 00 00',
      custom_parameters: { a: '1' },
    });
    const response = await call('PATCH', `/supporters/${supporter.uuid}`, {
      token,
      body: { last_name: 'New', city: null, phone: '', custom_parameters: {}, email_permission: false },
    });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      uuid: supporter.uuid,
      organisation_uuid: DEMO.org,
      created: supporter.created,
      first_name: 'Carla',
      last_name: 'New',
      email_permission: false,
    });
    expect(response.text).not.toContain('null');
    expect((await call('GET', `/supporters/${supporter.uuid}`, { token })).json).toEqual(response.json);
  });

  it('replaces custom_parameters whole and answers an empty update with the supporter unchanged', async () => {
    const supporter = await createOk({ custom_parameters: { a: '1', b: '2' } });
    const replaced = await call('PATCH', `/supporters/${supporter.uuid}`, {
      token,
      body: { custom_parameters: { c: '3' } },
    });
    expect(replaced.json.custom_parameters).toEqual({ c: '3' });
    const unchanged = await call('PATCH', `/supporters/${supporter.uuid}`, { token, body: {} });
    expect(unchanged.status).toBe(200);
    expect(unchanged.json).toEqual(replaced.json);
  });

  it('refuses organisation_uuid on update and leaves the supporter where it was', async () => {
    const supporter = await createOk({ first_name: 'Dora' });
    const response = await call('PATCH', `/supporters/${supporter.uuid}`, {
      token,
      body: { organisation_uuid: DEMO.otherOrg, first_name: 'Moved' },
    });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('bad_request');
    expect(details(response)).toContainEqual({ code: 'error.validation.not_valid', property: 'organisation_uuid' });
    const read = await call('GET', `/supporters/${supporter.uuid}`, { token });
    expect(read.json).toMatchObject({ organisation_uuid: DEMO.org, first_name: 'Dora' });
  });

  it('refuses unknown and response-only fields', async () => {
    for (const body of [{ nickname: 'x' }, { uuid: UNKNOWN }, { created: 1 }]) {
      const response = await create(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(details(response)[0]?.code).toBe('error.validation.unknown_field');
    }
    const supporter = await createOk({});
    const patch = await call('PATCH', `/supporters/${supporter.uuid}`, { token, body: { nickname: 'x' } });
    expect(patch.status).toBe(400);
  });

  it('refuses an invalid e-mail address on create and on update', async () => {
    const response = await create({ email: 'not-an-e-mail' });
    expect(response.status).toBe(400);
    expect(details(response)).toEqual([{ code: 'error.validation.not_valid', property: 'email' }]);
    const supporter = await createOk({ email: 'valid@example.org' });
    const patch = await call('PATCH', `/supporters/${supporter.uuid}`, { token, body: { email: 'a@b' } });
    expect(patch.status).toBe(400);
    expect(details(patch)).toEqual([{ code: 'error.validation.not_valid', property: 'email' }]);
  });

  it('refuses nested or non-string custom parameters, naming the key', async () => {
    const nested = await create({ custom_parameters: { campaign: { name: 'spring' } } });
    expect(nested.status).toBe(400);
    expect(details(nested)).toEqual([
      { code: 'error.validation.invalid_type', property: 'custom_parameters.campaign' },
    ]);
    const number = await create({ custom_parameters: { amount: 5 } });
    expect(number.status).toBe(400);
    expect(details(number)[0]?.property).toBe('custom_parameters.amount');
  });

  it('takes svc_parameters only as an object of storable values', async () => {
    for (const svc_parameters of ['crm-1', ['crm-1'], { n: 1e300 }, { constructor: 'x' }]) {
      const response = await create({ svc_parameters });
      expect(response.status, JSON.stringify(svc_parameters)).toBe(400);
      expect(details(response)[0]?.property).toMatch(/^svc_parameters/);
    }
    // Free JSON keeps at most 16 levels (the top object is the first).
    const nest = (levels: number): Record<string, unknown> => (levels === 1 ? { leaf: 'x' } : { a: nest(levels - 1) });
    expect((await create({ svc_parameters: nest(17) })).status).toBe(400);
    expect((await createOk({ svc_parameters: nest(16) })).svc_parameters).toEqual(nest(16));
    const ok = await createOk({
      svc_parameters: { fundraising_automation: { crm_id: 'x', tags: ['a'], score: 3, gone: null } },
    });
    expect(ok.svc_parameters).toEqual({ fundraising_automation: { crm_id: 'x', tags: ['a'], score: 3, gone: null } });
  });

  it('refuses over-long strings and wrong types', async () => {
    const long = await create({ first_name: 'x'.repeat(101) });
    expect(long.status).toBe(400);
    expect(details(long)).toEqual([{ code: 'error.validation.too_big', property: 'first_name' }]);
    const wrongType = await create({ email_permission: 'yes' });
    expect(details(wrongType)).toEqual([{ code: 'error.validation.invalid_type', property: 'email_permission' }]);
  });

  it('requires an existing organisation_uuid on create', async () => {
    const missing = await call('POST', '/supporters', { token, body: { first_name: 'No org' } });
    expect(missing.status).toBe(400);
    expect(details(missing)).toEqual([{ code: 'error.validation.not_blank', property: 'organisation_uuid' }]);
    const malformed = await create({ organisation_uuid: 'nope' });
    expect(malformed.status).toBe(400);
    expect(details(malformed)[0]?.property).toBe('organisation_uuid');
    const unknown = await create({ organisation_uuid: UNKNOWN });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('not_found');
  });

  it('answers 403 across tenants on every supporter path', async () => {
    const theirs = await createOk({ organisation_uuid: DEMO.otherOrg, first_name: 'Theirs' }, otherToken);
    const attempts = [
      await call('GET', `/supporters?organisation_uuid=${DEMO.otherOrg}`, { token }),
      await create({ organisation_uuid: DEMO.otherOrg }),
      await call('GET', `/supporters/${theirs.uuid}`, { token }),
      await call('PATCH', `/supporters/${theirs.uuid}`, { token, body: { first_name: 'Mine now' } }),
    ];
    for (const response of attempts) {
      expect(response.status).toBe(403);
      expect(response.json.error).toMatchObject({ http_code: 403, code: 'forbidden' });
      expect(response.json.request_id).toBe(response.headers['x-request-id']);
    }
    const read = await call('GET', `/supporters/${theirs.uuid}`, { token: otherToken });
    expect(read.json.first_name).toBe('Theirs');
    const mine = await call('GET', '/supporters', { token });
    expect(mine.json.map((s: Supporter) => s.uuid)).not.toContain(theirs.uuid);
  });

  it('lets a grant on one account of the organisation work with its supporters', async () => {
    const client = await createClient({ grants: [{ organisation_uuid: DEMO.org, account_uuid: DEMO.account }] });
    const accountToken = await tokenFor({ id: client.client_id, secret: client.client_secret });
    const supporter = await createOk({ first_name: 'Eva' }, accountToken);
    expect((await call('GET', `/supporters/${supporter.uuid}`, { token: accountToken })).status).toBe(200);
  });

  it('answers 404 for unknown and malformed supporter uuids, and accepts upper case', async () => {
    for (const path of [`/supporters/${UNKNOWN}`, '/supporters/not-a-uuid', '/supporters/123']) {
      for (const method of ['GET', 'PATCH']) {
        const response = await call(method, path, {
          token,
          body: method === 'PATCH' ? { first_name: 'X' } : undefined,
        });
        expect(response.status, `${method} ${path}`).toBe(404);
        expect(response.json.error.code).toBe('not_found');
      }
    }
    const supporter = await createOk({});
    const upper = await call('GET', `/supporters/${supporter.uuid.toUpperCase()}`, { token });
    expect(upper.status).toBe(200);
    expect(upper.json.uuid).toBe(supporter.uuid);
  });

  it('lands every one of 20 concurrent updates of different fields', async () => {
    const supporter = await createOk({});
    const fields = [
      'raw',
      'raw_name',
      'legal_entity',
      'honorific_prefix',
      'salutation',
      'first_name',
      'middle_name',
      'last_name',
      'care_of',
      'raw_address',
      'street',
      'house_number',
      'address_addendum',
      'post_office_box',
      'postal_code',
      'city',
      'region_level_1',
      'region_level_2',
      'country',
      'phone',
    ];
    const responses = await Promise.all(
      fields.map((field) =>
        call('PATCH', `/supporters/${supporter.uuid}`, { token, body: { [field]: `value of ${field}` } }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(fields.map(() => 200));
    const read = await call('GET', `/supporters/${supporter.uuid}`, { token });
    for (const field of fields) expect(read.json[field], field).toBe(`value of ${field}`);
  });
});

describe('the e-mail index (the donor portal’s login)', () => {
  /** The stored item, and the index keys its description makes from it (what table:reindex writes). */
  async function stored(uuid: string) {
    const item = (await getItem(SUPPORTER.key(uuid))) ?? {};
    return { item, remade: SUPPORTER.indexKeys(SUPPORTER.fromItem(item)) };
  }

  it('finds a supporter by its e-mail in any case, follows a changed one and drops a removed one', async () => {
    const email = `Index-${newUuid()}@Example.org`;
    const created = await createOk({ email });
    expect((await findSupporterByEmail(DEMO.org, email.toLowerCase()))?.uuid).toBe(created.uuid);
    expect(await findSupporterByEmail(DEMO.otherOrg, email)).toBeUndefined();
    // The index keys carry a keyed hash, never the address; they can be made again from the item.
    const first = await stored(created.uuid);
    expect(String(first.item.gsi2pk)).toMatch(new RegExp(`^ORG#${DEMO.org}#SUPPORTER_EMAIL#[0-9a-f]{64}$`));
    expect(JSON.stringify([first.item.gsi2pk, first.item.gsi2sk])).not.toMatch(/example/i);
    expect(first.remade).toMatchObject({ gsi2pk: first.item.gsi2pk, gsi2sk: first.item.gsi2sk });

    const changed = `changed-${newUuid()}@example.org`;
    expect((await call('PATCH', `/supporters/${created.uuid}`, { token, body: { email: changed } })).status).toBe(200);
    expect(await findSupporterByEmail(DEMO.org, email)).toBeUndefined();
    expect((await findSupporterByEmail(DEMO.org, changed))?.uuid).toBe(created.uuid);
    const second = await stored(created.uuid);
    expect(second.item.gsi2pk).not.toBe(first.item.gsi2pk);
    expect(second.remade).toMatchObject({ gsi2pk: second.item.gsi2pk, gsi2sk: second.item.gsi2sk });
    // The API shows the record alone.
    const read = await call('GET', `/supporters/${created.uuid}`, { token });
    expect(Object.keys(read.json)).not.toContain('email_hash');
    expect(Object.keys((await findSupporter(created.uuid)) ?? {})).not.toContain('email_hash');

    expect((await call('PATCH', `/supporters/${created.uuid}`, { token, body: { email: null } })).status).toBe(200);
    expect(await findSupporterByEmail(DEMO.org, changed)).toBeUndefined();
    const third = await stored(created.uuid);
    expect(third.item).not.toHaveProperty('gsi2pk');
    expect(third.item).not.toHaveProperty('email_hash');
    expect(third.remade).not.toHaveProperty('gsi2pk');
  });
});

describe('list', () => {
  it('lists oldest first as a plain array, paged by from and size', async () => {
    // Tokens are valid from the service time they were issued at: move the clock first.
    freezeClock(1_710_000_000);
    const { organisation, token: orgToken } = await freshOrganisation();
    const created: Supporter[] = [];
    for (let i = 0; i < 5; i++) {
      freezeClock(1_710_000_000 + i);
      created.push(await createOk({ organisation_uuid: organisation, first_name: `N${i}` }, orgToken));
    }
    const all = await call('GET', '/supporters', { token: orgToken });
    expect(all.status).toBe(200);
    expect(Array.isArray(all.json)).toBe(true);
    expect(all.json).toEqual(created);
    const page = await call('GET', '/supporters?from=1&size=2', { token: orgToken });
    expect(page.json.map((s: Supporter) => s.first_name)).toEqual(['N1', 'N2']);
    const last = await call('GET', '/supporters?from=4&size=10', { token: orgToken });
    expect(last.json.map((s: Supporter) => s.first_name)).toEqual(['N4']);
    expect((await call('GET', '/supporters?from=5', { token: orgToken })).json).toEqual([]);
    const newest = await call('GET', '/supporters?sort_order=desc&size=2', { token: orgToken });
    expect(newest.json.map((s: Supporter) => s.first_name)).toEqual(['N4', 'N3']);
    const byCreated = await call('GET', '/supporters?sort_by=created&sort_order=desc&from=1&size=2', {
      token: orgToken,
    });
    expect(byCreated.json.map((s: Supporter) => s.first_name)).toEqual(['N3', 'N2']);
  });

  it('returns 100 supporters unless size says otherwise', async () => {
    const { organisation, token: orgToken } = await freshOrganisation();
    for (let made = 0; made < 101; made += 20) {
      const batch = Math.min(20, 101 - made);
      await Promise.all(Array.from({ length: batch }, () => createOk({ organisation_uuid: organisation }, orgToken)));
    }
    expect((await call('GET', '/supporters', { token: orgToken })).json).toHaveLength(100);
    expect((await call('GET', '/supporters?size=1000', { token: orgToken })).json).toHaveLength(101);
    expect((await call('GET', '/supporters?size=0', { token: orgToken })).json).toEqual([]);
  });

  it('sorts by a field in both directions, supporters without it last', async () => {
    const { organisation, token: orgToken } = await freshOrganisation();
    for (const last_name of ['Müller', 'adams', undefined, 'Zwicky', 'Baker']) {
      await createOk({ organisation_uuid: organisation, last_name }, orgToken);
    }
    const names = async (query: string) =>
      (await call('GET', `/supporters?${query}`, { token: orgToken })).json.map((s: Supporter) => s.last_name);
    expect(await names('sort_by=last_name')).toEqual(['adams', 'Baker', 'Müller', 'Zwicky', undefined]);
    expect(await names('sort_by=last_name&sort_order=asc')).toEqual(['adams', 'Baker', 'Müller', 'Zwicky', undefined]);
    expect(await names('sort_by=last_name&sort_order=desc')).toEqual(['Zwicky', 'Müller', 'Baker', 'adams', undefined]);
    expect(await names('sort_by=last_name&sort_order=desc&from=3&size=1')).toEqual(['adams']);
  });

  it('lists every granted organisation without a filter and one with it', async () => {
    const first = await freshOrganisation();
    const second = await freshOrganisation();
    const a = await createOk({ organisation_uuid: first.organisation }, first.token);
    const b = await createOk({ organisation_uuid: second.organisation }, second.token);
    const client = await createClient({
      grants: [{ organisation_uuid: first.organisation }, { organisation_uuid: second.organisation }],
    });
    const both = await tokenFor({ id: client.client_id, secret: client.client_secret });
    const all = await call('GET', '/supporters', { token: both });
    expect(all.json.map((s: Supporter) => s.uuid).sort()).toEqual([a.uuid, b.uuid].sort());
    const filtered = await call('GET', `/supporters?organisation_uuid=${second.organisation.toUpperCase()}`, {
      token: both,
    });
    expect(filtered.json.map((s: Supporter) => s.uuid)).toEqual([b.uuid]);
    const forbidden = await call('GET', `/supporters?organisation_uuid=${first.organisation}`, {
      token: second.token,
    });
    expect(forbidden.status).toBe(403);
  });

  it('refuses invalid query values, naming the parameter', async () => {
    for (const [query, property] of [
      ['size=1001', 'size'],
      ['size=abc', 'size'],
      ['size=-1', 'size'],
      ['from=1.5', 'from'],
      ['sort_by=shoe_size', 'sort_by'],
      ['sort_order=up', 'sort_order'],
      ['organisation_uuid=nope', 'organisation_uuid'],
    ]) {
      const response = await call('GET', `/supporters?${query}`, { token });
      expect(response.status, query).toBe(400);
      expect(response.json.error.code).toBe('bad_request');
      expect(
        details(response).map((d) => d.property),
        query,
      ).toEqual([property]);
    }
    const tooBig = await call('GET', '/supporters?size=1001', { token });
    expect(details(tooBig)[0]?.code).toBe('error.validation.too_big');
  });
});

describe('payment helpers', () => {
  it('builds a new supporter from a payment request, keeping email_permission', () => {
    freezeClock(1_720_000_000);
    const given = newUuid();
    const supporter = supporterFromPaymentInput(DEMO.org, {
      uuid: given,
      salutation: 'Frau',
      first_name: 'Gina',
      last_name: 'Beispiel',
      street: 'Hauptstrasse',
      house_number: '1',
      address_addendum: '',
      postal_code: '8001',
      city: 'Zürich',
      country: 'CH',
      email: 'gina@example.org',
      email_permission: false,
      custom_parameters: { source: 'form' },
    });
    expect(supporter).toEqual({
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      organisation_uuid: DEMO.org,
      created: 1_720_000_000,
      salutation: 'Frau',
      first_name: 'Gina',
      last_name: 'Beispiel',
      street: 'Hauptstrasse',
      house_number: '1',
      postal_code: '8001',
      city: 'Zürich',
      country: 'CH',
      email: 'gina@example.org',
      email_permission: false,
      custom_parameters: { source: 'form' },
    });
    expect(supporter.uuid).not.toBe(given);
  });

  it('names supporter.<field> when the payment request carries a bad supporter', () => {
    const cases: Array<[unknown, string, string]> = [
      [{ email: 'nope' }, 'supporter.email', 'error.validation.not_valid'],
      [
        { custom_parameters: { campaign: { x: 1 } } },
        'supporter.custom_parameters.campaign',
        'error.validation.invalid_type',
      ],
      [{ phone: '123' }, 'supporter.phone', 'error.validation.unknown_field'],
      [{ email_permission: 'yes' }, 'supporter.email_permission', 'error.validation.invalid_type'],
      [{ uuid: 'not-a-uuid' }, 'supporter.uuid', 'error.validation.not_valid'],
      ['Anna', 'supporter', 'error.validation.invalid_type'],
    ];
    for (const [input, property, code] of cases) {
      let thrown: unknown;
      try {
        supporterFromPaymentInput(DEMO.org, input);
      } catch (error) {
        thrown = error;
      }
      if (!(thrown instanceof ValidationError)) throw new Error(`${property}: no ValidationError`);
      expect(thrown.statusCode).toBe(400);
      expect(thrown.details.map((d) => ({ property: d.property, code: d.code }))).toEqual([{ property, code }]);
    }
  });

  it('writes the supporter inside a transaction, after which the API serves it', async () => {
    const supporter = supporterFromPaymentInput(DEMO.org, { first_name: 'Hanna', email_permission: true });
    const companion = supporterFromPaymentInput(DEMO.org, { first_name: 'Companion' });
    await transactWrite([{ item: await supporterWrite(supporter) }, { item: await supporterWrite(companion) }]);
    const read = await call('GET', `/supporters/${supporter.uuid}`, { token });
    expect(read.status).toBe(200);
    expect(read.json).toEqual(supporterShape(supporter));
    expect(await findSupporter(supporter.uuid)).toEqual(supporter);
    expect((await call('GET', '/supporters', { token })).json.map((s: Supporter) => s.uuid)).toContain(supporter.uuid);
  });

  it('never overwrites an existing supporter', async () => {
    const supporter = supporterFromPaymentInput(DEMO.org, { first_name: 'Ida' });
    await transactWrite([{ item: await supporterWrite(supporter) }]);
    const conflict = new Error('taken');
    await expect(
      transactWrite([
        { item: await supporterWrite({ ...supporter, first_name: 'Overwritten' }), onConditionFailed: () => conflict },
      ]),
    ).rejects.toBe(conflict);
    expect((await findSupporter(supporter.uuid))?.first_name).toBe('Ida');
  });

  it('finds nothing for an unknown or malformed uuid', async () => {
    expect(await findSupporter(UNKNOWN)).toBeUndefined();
    expect(await findSupporter('x'.repeat(5000))).toBeUndefined();
  });
});
