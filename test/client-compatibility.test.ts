import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, DEMO, GOOD_CARD_INFORMATION, seedDemo, tokenFor } from './support/api';

/**
 * What published clients of this interface (a PHP library, an n8n node, a CRM plugin) rely on
 * beyond the bodies: the exact `Content-Type` of JSON answers, a `Location` on what a POST
 * created, and list items that carry what the single answer carries, so a client can find its
 * own resource in a list.
 */
let token: string;
beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.client);
});

const get = (path: string) => call('GET', path, { token });
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  call('POST', path, { token, body, headers });

const PAYMENT = {
  account_uuid: DEMO.secondAccount,
  payment_method: 'card',
  profile: 'card',
  amount: { value: '1200', currency: 'CHF' },
  payment_information: GOOD_CARD_INFORMATION,
  test_mode: true,
};

describe('Content-Type of JSON answers', () => {
  it('is exactly application/json on successes, errors of each shape, and unknown paths', async () => {
    const answers: ApiResponse[] = [
      await get('/organisations'),
      await post('/payments', PAYMENT),
      await post('/payments', { ...PAYMENT, amount: { value: '0', currency: 'CHF' } }),
      await call('GET', '/organisations'),
      await get(`/payments/${DEMO.org}`),
      await get('/no/such/path'),
      await call('POST', '/oauth2/token', {
        body: { grant_type: 'client_credentials', client_id: 'x', client_secret: 'y' },
      }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 201, 400, 401, 404, 404, 401]);
    for (const answer of answers) expect(answer.headers['content-type'], answer.text).toBe('application/json');
  });

  it('keeps the hosted pages’ own types', async () => {
    expect((await call('GET', '/docs')).headers['content-type']).toMatch(/^text\/html/);
  });

  it('takes JSON requests with or without a charset', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8']) {
      const created = await call('POST', '/payments', {
        token,
        rawBody: JSON.stringify(PAYMENT),
        headers: { 'content-type': type },
      });
      expect(created.status, `${type}: ${created.text}`).toBe(201);
    }
  });
});

describe('Location of what a POST created', () => {
  it('names the created resource on a 201, where GET reads it', async () => {
    const created = await post('/payments', PAYMENT);
    expect(created.headers.location).toBe(`/payments/${created.json.uuid}`);
    expect((await get(created.headers.location as string)).json.uuid).toBe(created.json.uuid);
    const supporter = await post('/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada' });
    expect(supporter.status).toBe(201);
    expect(supporter.headers.location).toBe(`/supporters/${supporter.json.uuid}`);
  });

  it('sets none on answers that created nothing', async () => {
    const created = await post('/payments', PAYMENT);
    const refund = await post(`/payments/${created.json.uuid}/refunds`, {});
    expect(refund.status).toBe(200);
    expect(refund.headers.location).toBeUndefined();
  });
});

describe('list items carry what the single answer carries', () => {
  /** Fields only the single answer has, each with its reason. */
  const SINGLE_ONLY: Record<string, { fields: string[]; why: string }> = {
    '/webhooks': { fields: ['hmac_key'], why: 'a secret: shown only to the one who reads that endpoint' },
  };

  async function compare(list: string, single: (uuid: string) => string, created?: () => Promise<ApiResponse>) {
    const made = await created?.();
    if (made) expect(made.status, made.text).toBe(201);
    const items = (await get(list)).json as Array<Record<string, unknown>>;
    expect(items.length, list).toBeGreaterThan(0);
    for (const item of items.slice(0, 3)) {
      const one = (await get(single(String(item.uuid)))).json as Record<string, unknown>;
      const exempt = new Set(SINGLE_ONLY[list.split('?')[0] as string]?.fields ?? []);
      const missing = Object.keys(one).filter((field) => !(field in item) && !exempt.has(field));
      expect(missing, `${list} item ${item.uuid} lacks what its single answer has`).toEqual([]);
      for (const field of exempt) expect(item, `${list} must not carry ${field}`).not.toHaveProperty(field);
    }
  }

  it('for webhook endpoints: a client finds its own by its URL, and never sees a secret', async () => {
    const url = 'https://crm.example.org/hooks/svc';
    const made = await post('/webhooks', { organisation_uuid: DEMO.org, endpoint: url, username: 'crm' });
    expect(made.status, made.text).toBe(201);
    const listed = (await get(`/webhooks?organisation_uuid=${DEMO.org}`)).json as Array<Record<string, unknown>>;
    expect(listed.find((endpoint) => endpoint.endpoint === url)).toMatchObject({
      uuid: made.json.uuid,
      username: 'crm',
    });
    await compare(`/webhooks?organisation_uuid=${DEMO.org}`, (uuid) => `/webhooks/${uuid}`);
  });

  it('for organisations, accounts, supporters, plans and event subscriptions', async () => {
    await compare('/organisations', (uuid) => `/organisations/${uuid}`);
    await compare('/accounts', (uuid) => `/accounts/${uuid}`);
    await compare(
      `/supporters?organisation_uuid=${DEMO.org}`,
      (uuid) => `/supporters/${uuid}`,
      () => post('/supporters', { organisation_uuid: DEMO.org, first_name: 'Grace' }),
    );
    await compare('/subscription-plans', (uuid) => `/subscription-plans/${uuid}`);
    const endpoint = (await get(`/webhooks?organisation_uuid=${DEMO.org}`)).json[0];
    await compare(
      `/event-subscriptions?organisation_uuid=${DEMO.org}`,
      (uuid) => `/event-subscriptions/${uuid}`,
      () =>
        post('/event-subscriptions', {
          organisation_uuid: DEMO.org,
          action_configuration_uuid: endpoint?.uuid,
          action_type: 'webhook',
          event_name: 'svc.payments.payment.succeeded',
        }),
    );
  });
});
