import { createHash } from 'node:crypto';
import { freezeClock, now } from '@svc/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, DEMO, seedDemo, tokenFor } from '../../../../test/support/api';

/**
 * Gift Aid through the API (contract section 13): declarations recorded, listed and cancelled
 * for a caller with a grant on the supporter's organisation, and the claim schedule of the
 * organisation's GBP gifts covered by a declaration, in HMRC's columns.
 */
const at = (iso: string) => freezeClock(Date.parse(iso) / 1000);

type Client = { id: string; secret: string };

/** Tokens live an hour of the service clock, which these tests move by days. */
const tokens = new Map<string, { token: string; at: number }>();
async function tokenOf(client: Client): Promise<string> {
  const cached = tokens.get(client.id);
  if (cached && now() >= cached.at && now() - cached.at < 1800) return cached.token;
  const token = await tokenFor(client);
  tokens.set(client.id, { token, at: now() });
  return token;
}

async function api(method: string, path: string, body?: unknown, client: Client = DEMO.client) {
  return call(method, path, { token: await tokenOf(client), ...(body === undefined ? {} : { body }) });
}
async function ok(method: string, path: string, body?: unknown, status = 200) {
  const response = await api(method, path, body);
  expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
  return response.json;
}

const UK_ADDRESS = {
  house_number: '10',
  street: 'Downing Street',
  postal_code: 'sw1a 2aa',
  city: 'London',
  country: 'GB',
};

async function supporter(fields: Record<string, unknown> = {}): Promise<string> {
  const created = await ok(
    'POST',
    '/supporters',
    { organisation_uuid: DEMO.org, first_name: 'Ada', last_name: 'Lovelace', ...UK_ADDRESS, ...fields },
    201,
  );
  return created.uuid as string;
}

/** A card payment of the supporter, in pence of `currency` (GBP by default). */
async function give(supporterUuid: string, pence: number, currency = 'GBP') {
  return ok(
    'POST',
    '/payments',
    {
      account_uuid: DEMO.account,
      payment_method: 'card',
      profile: 'card-test',
      amount: { value: String(pence), currency },
      payment_information: { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' },
      supporter: { uuid: supporterUuid },
    },
    201,
  );
}

const declarations = (supporterUuid: string) => `/supporters/${supporterUuid}/gift-aid-declarations`;

async function declare(supporterUuid: string, fields: Record<string, unknown> = {}) {
  return ok(
    'POST',
    declarations(supporterUuid),
    { scope: 'future', text_version: 'web-2025', declared_at: now(), channel: 'online', ...fields },
    201,
  );
}

const TEXT = 'I want to Gift Aid my donation and any donations I make in the future or have made in the past 4 years.';

beforeAll(async () => {
  at('2025-05-01T09:00:00Z');
  await seedDemo();
});

describe('Gift Aid declarations', () => {
  it('are recorded with the wording’s version and hash, listed, and cancelled once, keeping the record', async () => {
    at('2025-05-02T09:00:00Z');
    const donor = await supporter();
    const first = await declare(donor, { text: TEXT, declared_at: now() - 3600, channel: 'written' });
    expect(first).toEqual({
      uuid: expect.any(String),
      supporter_uuid: donor,
      organisation_uuid: DEMO.org,
      scope: 'future',
      text_version: 'web-2025',
      text_hash: createHash('sha256').update(TEXT).digest('hex'),
      declared_at: now() - 3600,
      channel: 'written',
      created: now(),
    });
    // The version's wording is kept: a later declaration of that version has its hash without sending it.
    const second = await declare(donor, { scope: 'past_and_future', channel: 'oral', declared_at: now() - 1800 });
    expect(second.text_hash).toBe(first.text_hash);
    const unknownVersion = await declare(donor, { text_version: 'paper-1', scope: 'single' });
    expect(unknownVersion.text_hash).toBeUndefined();
    // One version, one wording.
    const changed = await api('POST', declarations(donor), {
      scope: 'future',
      text_version: 'web-2025',
      text: `${TEXT} Changed.`,
      declared_at: now(),
      channel: 'online',
    });
    expect(changed.status).toBe(409);
    expect(changed.json.error.message[0]).toMatchObject({
      code: 'error.gift_aid.text_version_taken',
      property: 'text',
    });

    const listed = await ok('GET', declarations(donor));
    expect(listed.map((d: { uuid: string }) => d.uuid)).toEqual([first.uuid, second.uuid, unknownVersion.uuid]);

    at('2025-05-03T10:00:00Z');
    const cancelled = await ok('DELETE', `${declarations(donor)}/${first.uuid}`);
    expect(cancelled).toEqual({ ...first, cancelled_at: now() });
    at('2025-05-04T10:00:00Z');
    const again = await ok('DELETE', `${declarations(donor)}/${first.uuid}`);
    expect(again.cancelled_at).toBe(cancelled.cancelled_at);
    const after = await ok('GET', declarations(donor));
    expect(after).toHaveLength(3);
    expect(after[0]).toEqual(cancelled);
    expect(after[1].cancelled_at).toBeUndefined();
  });

  it('need a grant on the supporter’s organisation: 404 for what does not exist, 403 for what is not yours', async () => {
    at('2025-05-05T09:00:00Z');
    const donor = await supporter();
    const declaration = await declare(donor);
    const body = { scope: 'future', text_version: 'v1', declared_at: now(), channel: 'online' };
    for (const response of [
      await api('POST', declarations(donor), body, DEMO.otherClient),
      await api('GET', declarations(donor), undefined, DEMO.otherClient),
      await api('DELETE', `${declarations(donor)}/${declaration.uuid}`, undefined, DEMO.otherClient),
    ]) {
      expect(response.status).toBe(403);
      expect(response.json.error.code).toBe('forbidden');
    }
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await api('GET', declarations(unknown))).status).toBe(404);
    expect((await api('GET', declarations('not-a-uuid'))).status).toBe(404);
    expect((await api('POST', declarations(unknown), body)).status).toBe(404);
    expect((await api('DELETE', `${declarations(donor)}/${unknown}`)).status).toBe(404);
    // A declaration is found under its own supporter only.
    const other = await supporter();
    expect((await api('DELETE', `${declarations(other)}/${declaration.uuid}`)).status).toBe(404);
    expect((await ok('GET', declarations(donor)))[0].cancelled_at).toBeUndefined();
    const claims = await api(
      'GET',
      `/gift-aid/claims?organisation_uuid=${DEMO.org}&from=2025-01-01&to=2025-12-31`,
      undefined,
      DEMO.otherClient,
    );
    expect(claims.status).toBe(403);
  });

  it.each([
    [{ scope: 'forever' }, 'scope'],
    [{ channel: 'fax' }, 'channel'],
    [{ text_version: '' }, 'text_version'],
    [{ text_version: '#x' }, 'text_version'],
    [{ text_version: undefined }, 'text_version'],
    [{ declared_at: '2025-05-01' }, 'declared_at'],
    [{ declared_at: 1.5 }, 'declared_at'],
    [{ declared_at: 'future' }, 'declared_at'],
    [{ text: '' }, 'text'],
    [{ amount: 5 }, 'amount'],
  ])('refuses %j with a 400 naming %s, and stores nothing', async (fields: Record<string, unknown>, property) => {
    at('2025-05-06T09:00:00Z');
    const donor = await supporter();
    const body: Record<string, unknown> = {
      scope: 'future',
      text_version: 'web-2025',
      declared_at: now(),
      channel: 'online',
      ...fields,
    };
    if (fields.declared_at === 'future') body.declared_at = now() + 60;
    const response = await api('POST', declarations(donor), body);
    expect(response.status, response.text).toBe(400);
    expect(response.json.error.code).toBe('bad_request');
    expect(response.json.error.message.map((d: { property: string }) => d.property)).toContain(property);
    expect(await ok('GET', declarations(donor))).toEqual([]);
  });

  it.each([
    ['organisation_uuid missing', 'from=2025-01-01&to=2025-12-31', 'organisation_uuid'],
    ['a date that does not exist', `organisation_uuid=${DEMO.org}&from=2025-02-29&to=2025-12-31`, 'from'],
    ['a date in another form', `organisation_uuid=${DEMO.org}&from=01/01/2025&to=2025-12-31`, 'from'],
    ['to before from', `organisation_uuid=${DEMO.org}&from=2025-06-01&to=2025-05-31`, 'to'],
    ['more than five years', `organisation_uuid=${DEMO.org}&from=2020-01-01&to=2025-01-01`, 'to'],
  ])('refuses a claim query with %s (400)', async (_, query, property) => {
    const response = await api('GET', `/gift-aid/claims?${query}`);
    expect(response.status, response.text).toBe(400);
    expect(response.json.error.message.map((d: { property: string }) => d.property)).toContain(property);
  });
});

describe('the Gift Aid claim schedule', () => {
  it('lists the covered GBP gifts in HMRC’s columns, aggregates small ones, and leaves out the uncovered', async () => {
    // Declarations first, then the gifts of June 2025 (British Summer Time).
    at('2025-06-01T08:00:00Z');
    const ada = await supporter({ honorific_prefix: 'Dr', first_name: 'Ada', last_name: 'King-Noel' });
    await declare(ada);
    const cancelling = await supporter({ first_name: 'Bea', last_name: 'Stone', house_number: 'Rose Cottage' });
    const bea = await declare(cancelling, { scope: 'past_and_future' });
    const undeclared = await supporter({ first_name: 'Cal', last_name: 'Nodecl' });
    const abroad = await supporter({
      first_name: 'Dora',
      last_name: 'Weit',
      house_number: '5',
      street: 'Bahnhofstrasse',
      postal_code: '8001',
      city: 'Zürich',
      country: 'CH',
    });
    await declare(abroad, { channel: 'written' });
    const once = await supporter({ first_name: 'Eve', last_name: 'Once' });

    at('2025-06-02T09:30:00Z');
    await give(ada, 2500);
    await give(ada, 1500);
    await give(ada, 4000, 'CHF');
    await give(cancelling, 4500);
    await give(undeclared, 5000);
    await give(abroad, 6000);
    await give(once, 7000);
    at('2025-06-02T12:00:00Z');
    await declare(once, { scope: 'single' });
    at('2025-06-02T20:00:00Z');
    await give(once, 8000);

    // Bea cancels on the 10th: her gift of the 20th is not covered, that of the 2nd is.
    at('2025-06-10T12:00:00Z');
    await ok('DELETE', `${declarations(cancelling)}/${bea.uuid}`);
    at('2025-06-20T09:00:00Z');
    await give(cancelling, 3000);
    await give(ada, 1900);
    // A partial refund: the claim takes what the donor finally gave.
    const refunded = await give(ada, 10_000);
    await ok('POST', `/payments/${refunded.uuid}/refunds`, { amount: { value: '2500', currency: 'GBP' } });

    at('2025-07-01T09:00:00Z');
    const response = await api('GET', `/gift-aid/claims?organisation_uuid=${DEMO.org}&from=2025-06-01&to=2025-06-30`);
    expect(response.status, response.text).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    const lines = response.text.split('\r\n');
    expect(lines[0]).toBe(
      'Title,First name,Last name,House name or number,Postcode,Aggregated donations,Sponsored event,Donation date,Amount',
    );
    expect(lines.at(-1)).toBe('');
    const rows = lines.slice(1, -1).sort();
    expect(rows).toEqual(
      [
        'Dr,Ada,King Noel,10,SW1A 2AA,,,02/06/25,25.00',
        'Dr,Ada,King Noel,10,SW1A 2AA,,,20/06/25,75.00',
        ',Bea,Stone,Rose Cottage,SW1A 2AA,,,02/06/25,45.00',
        ',Dora,Weit,"5, Bahnhofstrasse, 8001, Zurich, CH",X,,,02/06/25,60.00',
        ',Eve,Once,10,SW1A 2AA,,,02/06/25,70.00',
        ',,,,,Online donations of 20.00 or less,,20/06/25,34.00',
      ].sort(),
    );
    expect(response.headers['x-gift-aid-donations']).toBe('7');
    expect(response.headers['x-gift-aid-total']).toBe('309.00');
    expect(response.headers['x-gift-aid-left-out']).toBe('0');
  });

  it('is empty but for its header when nothing qualifies', async () => {
    const response = await api('GET', `/gift-aid/claims?organisation_uuid=${DEMO.org}&from=2024-01-01&to=2024-01-31`);
    expect(response.status).toBe(200);
    expect(response.text).toBe(
      'Title,First name,Last name,House name or number,Postcode,Aggregated donations,Sponsored event,Donation date,Amount\r\n',
    );
  });

  it('is refused (409) to an organisation whose receipt settings name another country than GB', async () => {
    const settings = {
      country: 'CH',
      legal_name: 'Other Charity',
      address: { line1: 'Seestrasse 1', postal_code: '8002', city: 'Zürich', country: 'CH' },
      tax_exemption_reference: 'Kantonales Steueramt Zürich',
      signatory: 'Anna Muster',
      min_total: 5000,
    };
    const put = await api('PUT', `/organisations/${DEMO.otherOrg}/receipt-settings`, settings, DEMO.otherClient);
    expect(put.status, put.text).toBe(200);
    const response = await api(
      'GET',
      `/gift-aid/claims?organisation_uuid=${DEMO.otherOrg}&from=2025-01-01&to=2025-12-31`,
      undefined,
      DEMO.otherClient,
    );
    expect(response.status).toBe(409);
    expect(response.json.error.message[0].code).toBe('error.gift_aid.not_uk');
  });
});
