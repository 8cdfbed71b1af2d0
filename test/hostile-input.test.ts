import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ROUTE_TABLE } from '@svc/api';
import { FREE_JSON_LIMITS, freezeClock, newUuid, now } from '@svc/core';
import { type AnyRoute, routeKey } from '@svc/http';
import { createGateway } from '@svc/local';
import * as table from '@svc/table';
import fc from 'fast-check';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ALGORITHM, activeSigner } from '../services/identity/src/domain/signing-keys';
import { type ApiResponse, call, DEMO, seedDemo, tokenFor } from './support/api';

/**
 * Hostile input: free-JSON fields (prototype keys, nesting, odd numbers), bodies and headers
 * over the limits, forged-but-signed tokens, private webhook targets. None may give a 5xx, and
 * what is refused changes nothing.
 */
let token: string;
let paymentUuid: string;
let sourceUuid: string;
let supporterUuid: string;
let subscriptionUuid: string;

const card = { number: '4242424242424242', expiry_month: 12, expiry_year: 2099, cvv: '123' };
const paymentBody = (extra: Record<string, unknown> = {}) => ({
  account_uuid: DEMO.secondAccount,
  payment_method: 'card',
  profile: 'card',
  amount: { value: '1500', currency: 'CHF' },
  payment_information: card,
  ...extra,
});

async function ok(method: string, path: string, body: unknown, status = 201): Promise<Record<string, unknown>> {
  const response = await call(method, path, { token, body });
  expect(response.status, response.text).toBe(status);
  return response.json;
}

beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.client);
  paymentUuid = String((await ok('POST', '/payments', paymentBody())).uuid);
  sourceUuid = String((await ok('POST', '/payment-sources', paymentBody())).uuid);
  supporterUuid = String((await ok('POST', '/supporters', { organisation_uuid: DEMO.org, first_name: 'Ada' })).uuid);
  subscriptionUuid = String(
    (
      await ok('POST', '/subscriptions', {
        account_uuid: DEMO.secondAccount,
        payment_source_uuid: sourceUuid,
        supporter_uuid: supporterUuid,
        currency: 'CHF',
        amount: 100,
        recurring_interval: 'monthly',
      })
    ).uuid,
  );
});

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * Every route that takes a free-JSON object: how to send one (as JSON text, so even a value too
 * deep for this process's own JSON.stringify can be sent), and where the answer shows it.
 */
interface FreeJsonRoute {
  name: string;
  method: string;
  path: () => string;
  /** The request body around the value's JSON text. */
  envelope: (json: string) => string;
  stored: (response: ApiResponse) => unknown;
  /** Supporters take `{}` to mean "unset": the field is then left out. */
  emptyMeansUnset?: boolean;
  /** Flat key/value pairs with string values: no nesting at all. */
  flat?: boolean;
}

const FREE_JSON_ROUTES: readonly FreeJsonRoute[] = [
  {
    name: 'PUT /payments/{uuid}/custom-parameters',
    method: 'PUT',
    path: () => `/payments/${paymentUuid}/custom-parameters`,
    envelope: (json) => json,
    stored: (response) => response.json.custom_parameters,
  },
  {
    name: 'PATCH /payments/{uuid}/custom-parameters (onto an empty object)',
    method: 'PATCH',
    path: () => `/payments/${paymentUuid}/custom-parameters`,
    envelope: (json) => json,
    stored: (response) => response.json.custom_parameters,
  },
  {
    name: 'POST /payments custom_parameters',
    method: 'POST',
    path: () => '/payments',
    envelope: (json) => `${JSON.stringify(paymentBody()).slice(0, -1)},"custom_parameters":${json}}`,
    stored: (response) => response.json.custom_parameters,
  },
  {
    name: 'PUT /payment-sources/{uuid}/custom-parameters',
    method: 'PUT',
    path: () => `/payment-sources/${sourceUuid}/custom-parameters`,
    envelope: (json) => json,
    stored: (response) => response.json.custom_parameters,
  },
  {
    name: 'POST /supporters svc_parameters',
    method: 'POST',
    path: () => '/supporters',
    envelope: (json) => `{"organisation_uuid":"${DEMO.org}","svc_parameters":${json}}`,
    stored: (response) => response.json.svc_parameters,
    emptyMeansUnset: true,
  },
  {
    name: 'PATCH /supporters/{uuid} svc_parameters',
    method: 'PATCH',
    path: () => `/supporters/${supporterUuid}`,
    envelope: (json) => `{"svc_parameters":${json}}`,
    stored: (response) => response.json.svc_parameters,
    emptyMeansUnset: true,
  },
  {
    name: 'PATCH /supporters/{uuid} custom_parameters (string values only)',
    method: 'PATCH',
    path: () => `/supporters/${supporterUuid}`,
    envelope: (json) => `{"custom_parameters":${json}}`,
    stored: (response) => response.json.custom_parameters,
    emptyMeansUnset: true,
    flat: true,
  },
  {
    name: 'PATCH /subscriptions/{uuid} custom_parameters (string values only)',
    method: 'PATCH',
    path: () => `/subscriptions/${subscriptionUuid}`,
    envelope: (json) => `{"custom_parameters":${json}}`,
    stored: (response) => response.json.custom_parameters,
    flat: true,
  },
  {
    name: 'POST /subscriptions/{uuid}/invoices svc_parameters',
    method: 'POST',
    path: () => `/subscriptions/${subscriptionUuid}/invoices`,
    envelope: (json) => `{"svc_parameters":${json}}`,
    stored: (response) => response.json.svc_parameters,
  },
  {
    name: 'PATCH /subscriptions/{uuid} svc_parameters',
    method: 'PATCH',
    path: () => `/subscriptions/${subscriptionUuid}`,
    envelope: (json) => `{"svc_parameters":${json}}`,
    stored: (response) => response.json.svc_parameters,
  },
];

function send(route: FreeJsonRoute, json: string): Promise<ApiResponse> {
  if (route.method === 'PATCH' && route.path().endsWith('custom-parameters')) {
    // A merge keeps earlier keys; start each case from an empty object so the answer is the value.
    return call('PUT', route.path(), { token, body: {} }).then(() =>
      call(route.method, route.path(), {
        token,
        rawBody: route.envelope(json),
        headers: { 'content-type': 'application/json' },
      }),
    );
  }
  return call(route.method, route.path(), {
    token,
    rawBody: route.envelope(json),
    headers: { 'content-type': 'application/json' },
  });
}

/** `levels` nested objects as JSON text (the outermost is level 1). */
function nestedJson(levels: number): string {
  return `${'{"a":'.repeat(levels - 1)}{"leaf":"x"}${'}'.repeat(levels - 1)}`;
}

describe('free-JSON fields', () => {
  it.each(FREE_JSON_ROUTES.map((route) => [route.name, route]))(
    '%s refuses prototype keys with 400 and keeps what was stored',
    async (_name, route) => {
      for (const key of ['constructor', '__proto__', 'prototype']) {
        const response = await send(route, `{"${key}": "x", "kept": {"${key}": {"a": 1}}}`);
        expect(response.status, `${key}: ${response.text}`).toBe(400);
        expect(response.json.error.message[0].message).toMatch(/reserved/);
      }
    },
  );

  it.each(FREE_JSON_ROUTES.map((route) => [route.name, route]))(
    '%s takes 16 levels (flat ones none) and refuses 17 and 5 000 with 400',
    async (_name, route) => {
      const deepest = nestedJson(FREE_JSON_LIMITS.maxDepth);
      if (route.flat) {
        // String values only: any nesting is refused, deep or not.
        for (const levels of [2, FREE_JSON_LIMITS.maxDepth, 5000])
          expect((await send(route, nestedJson(levels))).status).toBe(400);
        return;
      }
      const accepted = await send(route, deepest);
      expect(accepted.status, accepted.text).toBeLessThan(300);
      expect(route.stored(accepted)).toEqual(JSON.parse(deepest));
      for (const levels of [FREE_JSON_LIMITS.maxDepth + 1, 5000]) {
        const refused = await send(route, nestedJson(levels));
        expect(refused.status, `${levels}: ${refused.text.slice(0, 200)}`).toBe(400);
      }
    },
  );

  it('answers 400 to a body nested 100 000 levels deep on every JSON route, never a 5xx', async () => {
    const raw = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    for (const path of ['/payments', '/search/payments', '/supporters', `/payments/${paymentUuid}/custom-parameters`]) {
      const method = path.endsWith('custom-parameters') ? 'PUT' : 'POST';
      const response = await call(method, path, {
        token,
        rawBody: `{"a": ${raw}}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status, path).toBe(400);
    }
  });

  const key = fc.oneof(
    { weight: 6, arbitrary: fc.string({ maxLength: 12 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', '', 'a.b', '$match', 'x'.repeat(300)),
    },
  );
  const leaf = fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.string({ unit: 'binary', maxLength: 8 }),
    fc.constantFrom('\ud800', 'x\udc00', '\ud83d\ude00'),
    fc.boolean(),
    fc.constant(null),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(1e300, -1e300, 5e-324, 2 ** 53, 0.1),
  );
  const { tree } = fc.letrec<{ tree: unknown; node: unknown }>((tie) => ({
    tree: fc.dictionary(key, tie('node'), { maxKeys: 5 }),
    node: fc.oneof({ depthSize: 'small', maxDepth: 20 }, leaf, fc.array(tie('node'), { maxLength: 4 }), tie('tree')),
  }));

  it.each(FREE_JSON_ROUTES.map((route) => [route.name, route]))(
    '%s never answers random JSON trees with a 5xx, and returns exactly what it accepted',
    async (_name, route) => {
      await fc.assert(
        fc.asyncProperty(tree, async (value) => {
          const json = JSON.stringify(value);
          const sent = JSON.parse(json) as Record<string, unknown>;
          const response = await send(route, json);
          expect(response.status, response.text.slice(0, 300)).toBeLessThan(500);
          if (response.status >= 300) expect(response.status).toBe(400);
          else if (route.emptyMeansUnset && Object.keys(sent).length === 0)
            expect(route.stored(response)).toBeUndefined();
          else expect(route.stored(response)).toEqual(sent);
        }),
        { numRuns: 40 },
      );
    },
  );

  it('never answers random search bodies with a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(tree, async (value) => {
        for (const path of ['/search/payments', '/search/subscriptions', '/search/organisations']) {
          const response = await call('POST', path, { token, body: { query: value, size: 1 } });
          expect(response.status, `${path} ${response.text.slice(0, 300)}`).toBeLessThan(500);
        }
      }),
      { numRuns: 25 },
    );
  });
});

describe('text that is not well-formed Unicode', () => {
  it('is refused with 400 wherever it stands in a JSON body, key or value', async () => {
    for (const raw of [
      `{"organisation_uuid":"${DEMO.org}","first_name":"\\ud800"}`,
      `{"organisation_uuid":"${DEMO.org}","svc_parameters":{"\\udc00":"x"}}`,
    ]) {
      const response = await call('POST', '/supporters', {
        token,
        rawBody: raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status, raw).toBe(400);
    }
    const emoji = await call('POST', '/supporters', {
      token,
      rawBody: `{"organisation_uuid":"${DEMO.org}","first_name":"\\ud83d\\ude00 Ada"}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(emoji.status, emoji.text).toBe(201);
    expect(emoji.json.first_name).toBe('😀 Ada');
  });
});

describe('limits on the request itself', () => {
  it('answers 413 over 256 KiB also on a route that takes no body, and runs nothing', async () => {
    const operator = await tokenFor(DEMO.operator);
    const response = await call('POST', `/operator/organisations/${DEMO.org}/approve`, {
      token: operator,
      rawBody: 'x'.repeat(256 * 1024 + 1),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(413);
    expect(response.json.error.code).toBe('payload_too_large');
  });

  it('answers headers over 16 KiB with 431 in the error shape', async () => {
    const gateway = await createGateway({ enableControl: false });
    const server = await gateway.listen(0);
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = httpRequest(
          { port, path: '/health', headers: { 'x-big': 'y'.repeat(20 * 1024) } },
          (response) => {
            let body = '';
            response.on('data', (chunk) => {
              body += chunk;
            });
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
          },
        );
        request.on('error', reject);
        request.end();
      });
      expect(answer.status).toBe(431);
      expect(JSON.parse(answer.body)).toMatchObject({
        request_id: expect.any(String),
        error: { http_code: 431, code: 'request_header_fields_too_large' },
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('access tokens', () => {
  async function signed(
    claims: { iat: number; exp: number },
    signer?: { kid: string; key: Parameters<SignJWT['sign']>[0] },
  ) {
    const { kid, key } = signer ?? (await activeSigner());
    return new SignJWT({})
      .setProtectedHeader({ alg: ALGORITHM, kid, typ: 'JWT' })
      .setSubject(DEMO.client.id)
      .setIssuer('svc')
      .setAudience('svc-api')
      .setIssuedAt(claims.iat)
      .setExpirationTime(claims.exp)
      .setJti(newUuid())
      .sign(key);
  }
  const organisations = (bearer: string) => call('GET', '/organisations', { token: bearer });

  it('refuses a correctly signed token issued more than 60 s ahead or living longer than an hour', async () => {
    await tokenFor(DEMO.client);
    // The service clock stands still, so the 60 s boundary is exact (a second ticking between
    // signing and checking would otherwise let `at + 61` through).
    const at = freezeClock(now());
    expect((await organisations(await signed({ iat: at + 30, exp: at + 3600 }))).status).toBe(200);
    expect((await organisations(await signed({ iat: at + 60, exp: at + 3600 }))).status).toBe(200);
    expect((await organisations(await signed({ iat: at + 61, exp: at + 3600 }))).status).toBe(401);
    expect((await organisations(await signed({ iat: at, exp: at + 3601 }))).status).toBe(401);
    const tenYears = await organisations(await signed({ iat: at - 10, exp: at + 10 * 365 * 86_400 }));
    expect(tenYears.status).toBe(401);
    expect(tenYears.json).toEqual({ message: expect.stringMatching(/lifetime/) });
  });

  it('refuses tokens of unknown key ids at once, reading the published keys at most once for a burst', async () => {
    const { privateKey } = await generateKeyPair(ALGORITHM);
    const reads = vi.spyOn(table, 'getItem');
    // A refresh that waited for its spacing would hang on this frozen timer and fail the test.
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const at = now();
      for (let i = 0; i < 10; i++) {
        const forged = await signed({ iat: at, exp: at + 600 }, { kid: `made-up-${i}`, key: privateKey });
        const response = await organisations(forged);
        expect(response.status).toBe(401);
      }
    } finally {
      vi.useRealTimers();
    }
    const keyReads = reads.mock.calls.filter(([key]) => String(key.pk).includes('SIGNING'));
    expect(keyReads.length).toBeLessThanOrEqual(1);
  });
});

describe('webhook targets', () => {
  const previous = process.env.SVC_WEBHOOK_ALLOW_PRIVATE;
  afterAll(() => {
    process.env.SVC_WEBHOOK_ALLOW_PRIVATE = previous;
  });
  const create = (endpoint: string) =>
    call('POST', '/webhooks', { token, body: { organisation_uuid: DEMO.org, endpoint } });

  it.each([
    'https://127.0.0.1/hook',
    'https://2130706433/hook',
    'https://0x7f.0.0.1/hook',
    'https://017700000001/hook',
    'https://10.1.2.3/hook',
    'https://192.168.0.10:8443/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[fd00:ec2::254]/hook',
    'https://[fe80::1]/hook',
    'https://0.0.0.0/hook',
  ])('refuses %s at create with 400 when private targets are not allowed', async (endpoint) => {
    process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'false';
    const response = await create(endpoint);
    expect(response.status, response.text).toBe(400);
    expect(response.json.error.message[0]).toMatchObject({ property: 'endpoint' });
  });

  it('accepts public literals and host names, and private literals where the stage allows them', async () => {
    process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'false';
    expect((await create('https://8.8.8.8/hook')).status).toBe(201);
    expect((await create('https://hooks.example.org/hook')).status).toBe(201);
    process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'true';
    expect((await create('https://127.0.0.1/hook')).status).toBe(201);
  });
});

describe('the security headers of every HTML page', () => {
  /** A request each page answers with HTML from real state, where the local runtime can make it. */
  async function realRequest(route: AnyRoute): Promise<ApiResponse | undefined> {
    const pending = async (path: string) => {
      const created = await ok(
        'POST',
        path,
        paymentBody({ payment_information: { ...card, number: '4000000000003220' } }),
      );
      const action = new URL(String((created.action as { url: string }).url));
      return { uuid: String(created.uuid), token: action.searchParams.get('token') ?? '' };
    };
    switch (routeKey(route)) {
      case 'GET /docs':
        return call('GET', '/docs');
      case 'GET /connect':
        return call('GET', '/connect?token=unknown');
      case 'GET /portal':
        return call('GET', '/portal?token=unknown');
      case 'GET /portal/returned':
        return call('GET', `/portal/returned?method=${newUuid()}&locale=de`);
      case 'GET /portal/home':
      case 'GET /portal/gifts':
      case 'GET /portal/subscriptions/{subscription_uuid}':
      case 'GET /portal/subscriptions/{subscription_uuid}/offer':
      case 'GET /portal/subscriptions/{subscription_uuid}/cancel':
        // Without a session: the portal's own 401 page.
        return call('GET', route.path.replace('{subscription_uuid}', newUuid()));
      case 'GET /simulated/payments/{payment_uuid}': {
        const { uuid, token: pageToken } = await pending('/payments');
        return call('GET', `/simulated/payments/${uuid}?token=${pageToken}`);
      }
      case 'POST /simulated/payments/{payment_uuid}': {
        const { uuid, token: pageToken } = await pending('/payments');
        return call('POST', `/simulated/payments/${uuid}`, {
          rawBody: `token=${pageToken}&decision=approve`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
      }
      case 'GET /simulated/payment-sources/{payment_source_uuid}': {
        const { uuid, token: pageToken } = await pending('/payment-sources');
        return call('GET', `/simulated/payment-sources/${uuid}?token=${pageToken}`);
      }
      case 'POST /simulated/payment-sources/{payment_source_uuid}': {
        const { uuid, token: pageToken } = await pending('/payment-sources');
        return call('POST', `/simulated/payment-sources/${uuid}`, {
          rawBody: `token=${pageToken}&decision=approve`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
      }
      default:
        if (route.path.startsWith('/connect/') || route.path.startsWith('/portal')) {
          // Without the page's CSRF cookie (or the portal's session): the page's own refusal, in HTML.
          return call(
            'POST',
            route.path.replace(/\{[a-z_]+\}/g, () => newUuid()),
            {
              rawBody: 'a=b',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
            },
          );
        }
        return undefined;
    }
  }

  it('is sent by every route of the route table that answers HTML', async () => {
    const pages = ROUTE_TABLE.filter(({ route }) => Object.values(route.responses).some((r) => r.html));
    expect(pages.length).toBeGreaterThanOrEqual(14);
    const checked: string[] = [];
    for (const { route } of pages) {
      let answer = await realRequest(route);
      if (!answer?.headers['content-type']?.startsWith('text/html')) {
        // A provider's return page needs that provider's payment, which only its stand-in
        // harness makes: its handler answers a page of its own kind (with a policy of its own),
        // and the whole stack in front of it runs as for any request.
        const original = route.handle;
        route.handle = async () => ({
          status: 200,
          html: '<!doctype html><title>page</title>',
          headers: { 'content-security-policy': "default-src 'none'" },
        });
        try {
          const path = route.path.replace(/\{[a-z_]+\}/g, () => newUuid());
          // A return by POST carries the result as a form field (Adyen's POST redirects).
          const form =
            route.method === 'POST'
              ? { rawBody: 'redirectResult=r', headers: { 'content-type': 'application/x-www-form-urlencoded' } }
              : {};
          answer = await call(route.method, `${path}?token=t&redirectResult=r`, { planted: true, ...form });
        } finally {
          route.handle = original;
        }
      }
      const key = routeKey(route);
      expect(answer.headers['content-type'], key).toMatch(/^text\/html/);
      expect(answer.headers['x-frame-options'], key).toBe('DENY');
      expect(answer.headers['x-content-type-options'], key).toBe('nosniff');
      expect(answer.headers['referrer-policy'], key).toBe('no-referrer');
      expect(answer.headers['content-security-policy'], key).toContain("frame-ancestors 'none'");
      checked.push(key);
    }
    expect(checked).toEqual(
      expect.arrayContaining([
        'GET /docs',
        'GET /connect',
        'POST /connect/sign-in',
        'GET /portal',
        'POST /portal',
        'GET /portal/home',
        'GET /portal/returned',
        'POST /portal/login-form',
        'POST /portal/logout',
        'GET /portal/gifts',
        'GET /portal/subscriptions/{subscription_uuid}',
        'GET /portal/subscriptions/{subscription_uuid}/offer',
        'GET /portal/subscriptions/{subscription_uuid}/cancel',
        ...['amount', 'interval', 'next-date', 'skip', 'pause', 'resume', 'cancel', 'code', 'payment-method'].map(
          (action) => `POST /portal/subscriptions/{subscription_uuid}/${action}`,
        ),
      ]),
    );
  });
});

describe('the local controls', () => {
  it('answer only a loopback Host: another name (DNS rebinding) is a 403 in the error shape', async () => {
    for (const host of ['127.0.0.1:3000', 'localhost', 'LOCALHOST:8080', '[::1]:3000']) {
      expect((await call('GET', '/_local/providers', { headers: { host } })).status, host).toBe(200);
    }
    for (const host of ['attacker.example', 'attacker.example:3000', '127.0.0.1.attacker.example', '', '[::2]:3000']) {
      const refused = await call('POST', '/_local/clock', { headers: { host }, body: { advance_seconds: 86_400 } });
      expect(refused.status, host).toBe(403);
      expect(refused.json.error).toMatchObject({ http_code: 403, code: 'forbidden' });
    }
  });

  it('take a POST only as JSON: a form or text (a cross-site form can send those) is a 415', async () => {
    const before = (await call('GET', '/_local/providers')).status;
    expect(before).toBe(200);
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x']) {
      const refused = await call('POST', '/_local/clock', {
        rawBody: '{"advance_seconds":86400}',
        headers: { 'content-type': type },
      });
      expect(refused.status, type).toBe(415);
      expect(refused.json.error).toMatchObject({ http_code: 415, code: 'unsupported_media_type' });
    }
    const noType = await call('POST', '/_local/settle', { rawBody: '', headers: { 'content-type': '' } });
    expect(noType.status).toBe(415);
    const json = await call('POST', '/_local/clock', {
      rawBody: '{"advance_seconds":0}',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(json.status).toBe(200);
  });
});
