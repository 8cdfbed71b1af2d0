import { definedFields } from '@svc/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, DEMO, seedDemo, tokenFor } from '../../../test/support/api';
import { MAX_ENDPOINTS_PER_ORGANISATION } from './repository/endpoint-count';

let token: string;

beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.otherClient);
});

const api = (method: string, path: string, body?: unknown) => call(method, path, { token, ...definedFields({ body }) });

let made = 0;
const create = () =>
  api('POST', '/webhooks', {
    organisation_uuid: DEMO.otherOrg,
    endpoint: `https://hooks.example.org/limit/${++made}`,
  });

async function endpointCount(): Promise<number> {
  const listed = await api('GET', `/webhooks?organisation_uuid=${DEMO.otherOrg}`);
  expect(listed.status).toBe(200);
  return (listed.json as unknown[]).length;
}

describe('endpoints per organisation', () => {
  it('are capped: one over the cap is refused with a 409 in the error shape, and nothing is stored', async () => {
    const before = await endpointCount();
    for (let i = before; i < MAX_ENDPOINTS_PER_ORGANISATION; i++) expect((await create()).status).toBe(201);
    const over = await create();
    expect(over.status, JSON.stringify(over.json)).toBe(409);
    expect(over.json.error.code).toBe('conflict');
    expect(over.json.error.message).toEqual([
      expect.objectContaining({ code: 'error.webhook_endpoint.limit_reached', property: 'organisation_uuid' }),
    ]);
    expect(await endpointCount()).toBe(MAX_ENDPOINTS_PER_ORGANISATION);
  });

  it('racing creates at the cap: exactly as many succeed as there is room for', async () => {
    // Room for one: delete one endpoint (its slot is released with it).
    const listed = await api('GET', `/webhooks?organisation_uuid=${DEMO.otherOrg}`);
    const [first] = listed.json as Array<{ uuid: string }>;
    expect((await api('DELETE', `/webhooks/${String(first?.uuid)}`)).status).toBe(204);
    expect(await endpointCount()).toBe(MAX_ENDPOINTS_PER_ORGANISATION - 1);
    const answers = await Promise.all(Array.from({ length: 8 }, () => create()));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses, JSON.stringify(answers.map((a) => a.json))).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    expect(await endpointCount()).toBe(MAX_ENDPOINTS_PER_ORGANISATION);
  });

  it('another organisation is not counted against it', async () => {
    const demoToken = await tokenFor(DEMO.client);
    const created = await call('POST', '/webhooks', {
      token: demoToken,
      body: { organisation_uuid: DEMO.org, endpoint: 'https://hooks.example.org/limit/demo' },
    });
    expect(created.status).toBe(201);
  });
});
