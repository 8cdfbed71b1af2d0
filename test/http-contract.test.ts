import { ROUTE_TABLE } from '@svc/api';
import { advanceClock, definedFields, freezeClock, newUuid, ValidationError } from '@svc/core';
import { createDomainHandler, defineRoute } from '@svc/http';
import { authenticator } from '@svc/identity';
import { toApiGatewayEvent } from '@svc/local';
import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { call, DEMO, seedDemo, tokenFor } from './support/api';

let token: string;
beforeAll(async () => {
  await seedDemo();
  token = await tokenFor(DEMO.client);
});

const protectedRoutes = ROUTE_TABLE.filter((entry) => entry.route.auth === 'token');
const concretePath = (template: string) => template.replace(/\{[^}]+\}/g, () => newUuid());

describe('authentication on every protected route', () => {
  it('has protected routes to check', () => {
    expect(protectedRoutes.length).toBeGreaterThanOrEqual(11);
  });

  it('answers 401 in the Simple shape without a token, with a malformed one and with a forged one', async () => {
    const [header, payload] = token.split('.');
    const forged = `${header}.${payload}.${Buffer.alloc(64, 7).toString('base64url')}`;
    for (const { route } of protectedRoutes) {
      const path = concretePath(route.path);
      for (const authorization of [undefined, 'Bearer', 'Basic abc', `Bearer ${forged}`, `Bearer ${token}x`]) {
        const response = await call(route.method, path, {
          headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
          rawBody: '{"malformed": ',
        });
        expect(response.status, `${route.method} ${path} ${authorization}`).toBe(401);
        expect(Object.keys(response.json)).toEqual(['message']);
      }
    }
  });
});

describe('errors and headers', () => {
  it('answers unknown paths with 404 in the Nested shape, with or without a token', async () => {
    for (const options of [{}, { token }]) {
      for (const [method, path] of [
        ['GET', '/nope'],
        ['POST', '/organisations'],
        ['DELETE', `/organisations/${DEMO.org}`],
        ['GET', '/organisations/a/b/c'],
      ] as const) {
        const response = await call(method, path, options);
        expect(response.status, `${method} ${path}`).toBe(404);
        expect(response.json).toEqual({
          request_id: response.headers['x-request-id'],
          error: {
            http_code: 404,
            code: 'not_found',
            message: [expect.objectContaining({ code: expect.any(String) })],
          },
        });
      }
    }
  });

  it('answers unknown paths with 404 whatever body comes with them', async () => {
    for (const [rawBody, contentType] of [
      ['{', 'application/json'],
      ['<x/>', 'text/xml'],
      ['a'.repeat(300 * 1024), 'application/octet-stream'],
    ] as const) {
      const response = await call('POST', '/nope', { rawBody, headers: { 'content-type': contentType } });
      expect(response.status).toBe(404);
    }
  });

  it('never answers bad input with a 5xx', async () => {
    const cases = [
      await call('POST', '/oauth2/token', {
        body: { grant_type: 'client_credentials', client_id: 'x'.repeat(3000), client_secret: 's' },
      }),
      await call('POST', '/oauth2/token', { body: [] }),
      await call('POST', '/oauth2/token', { body: null }),
      await call('POST', '/oauth2/token', { rawBody: '"x"', headers: { 'content-type': 'application/json' } }),
      await call('POST', '/_local/clock', { body: { advance_seconds: -5 } }),
      await call('POST', '/_local/clock', { body: { advance_seconds: 9007199254740000 } }),
      await call('POST', '/_local/clock', { body: { now: 'soon' } }),
      await call('POST', '/_local/clock', { rawBody: '{', headers: { 'content-type': 'application/json' } }),
      await call('GET', '//['),
      await call('GET', '/organisations/%E0%A4%A', { token }),
      await call('GET', `/accounts?organisation_uuid=${DEMO.org}&organisation_uuid=${DEMO.otherOrg}`, { token }),
      await call('GET', `/organisations/${'9'.repeat(5000)}`, { token }),
    ];
    for (const response of cases) {
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('puts an X-Request-Id on every response, equal to the body request_id where there is one', async () => {
    const responses = [
      await call('GET', '/health'),
      await call('POST', '/_local/clock', { body: { now: null } }),
      await call('POST', '/_local/clock', { body: { now: -1 } }),
      await call('POST', '/oauth2/token', {
        rawBody: 'x'.repeat(300 * 1024),
        headers: { 'content-type': 'application/json' },
      }),
      await call('POST', '/oauth2/token', { rawBody: '<a/>', headers: { 'content-type': 'application/xml' } }),
      await call('GET', '/organisations', { token }),
      await call('GET', `/organisations/${DEMO.otherOrg}`, { token }),
      await call('GET', '/organisations'),
      await call('POST', '/oauth2/token', { body: {} }),
    ];
    const ids = responses.map((r) => r.headers['x-request-id']);
    for (const [index, response] of responses.entries()) {
      expect(ids[index]).toMatch(/^[0-9a-f-]{36}$/);
      if (response.json?.request_id) expect(response.json.request_id).toBe(ids[index]);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('answers 413 in the Nested shape to bodies over 256 KiB and accepts 256 KiB exactly', async () => {
    const body = (size: number) => {
      const prefix = '{"grant_type":"client_credentials","client_id":"x","client_secret":"';
      return `${prefix}${'a'.repeat(size - prefix.length - 2)}"}`;
    };
    const tooLarge = await call('POST', '/oauth2/token', {
      rawBody: body(256 * 1024 + 1),
      headers: { 'content-type': 'application/json' },
    });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.json.error).toMatchObject({ http_code: 413, code: 'payload_too_large' });
    const atLimit = await call('POST', '/oauth2/token', {
      rawBody: body(256 * 1024),
      headers: { 'content-type': 'application/json' },
    });
    expect(atLimit.status).toBe(400);
    expect(atLimit.json.error.message[0].property).toBe('client_secret');
  });

  it('answers wrong JSON types with 400 naming the property', async () => {
    const response = await call('POST', '/oauth2/token', {
      body: { grant_type: 'client_credentials', client_id: 42, client_secret: ['x'] },
    });
    expect(response.status).toBe(400);
    expect(response.json.error.message.map((d: { property: string }) => d.property).sort()).toEqual([
      'client_id',
      'client_secret',
    ]);
  });

  it('serves health and the API description without auth', async () => {
    expect((await call('GET', '/health')).json).toEqual({ status: 'ok' });
    const spec = (await call('GET', '/openapi.json')).json;
    expect(spec.openapi).toBe('3.1.0');
    for (const { route } of ROUTE_TABLE.filter((e) => !e.route.hidden)) {
      expect(spec.paths[route.path]?.[route.method.toLowerCase()], route.path).toBeDefined();
    }
    expect(spec.paths['/oauth2/token'].post.requestBody.content['application/x-www-form-urlencoded']).toBeDefined();
    expect(spec.paths['/organisations/{organisation_uuid}'].get.parameters[0]).toMatchObject({
      name: 'organisation_uuid',
      in: 'path',
      required: true,
    });
    const docs = await call('GET', '/docs');
    expect(docs.headers['content-type']).toContain('text/html');
    expect(docs.headers['content-security-policy']).toContain("script-src 'self'");
    // The reference's assets come from the service itself, never from another origin.
    const sources = [...docs.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(sources.sort()).toEqual([
      '/docs/assets/docs.js',
      '/docs/assets/swagger-ui-bundle.js',
      '/docs/assets/swagger-ui.css',
      '/openapi.json',
    ]);
    for (const source of sources.filter((s) => s.startsWith('/docs/assets/'))) {
      const asset = await call('GET', source);
      expect(asset.status, source).toBe(200);
      expect(asset.headers['content-type']).toMatch(source.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
      expect(asset.text.length).toBeGreaterThan(source.endsWith('docs.js') ? 100 : 10_000);
    }
    expect((await call('GET', '/docs/assets/package.json')).status).toBe(404);
    expect((await call('GET', '/docs/assets/..%2F..%2Fpackage.json')).status).toBe(404);
  });
});

describe('Idempotency-Key', () => {
  let executions = 0;
  let gate: Promise<void> | undefined;
  let reachedGate: (() => void) | undefined;
  const handler = createDomainHandler(
    [
      defineRoute({
        method: 'POST',
        path: '/widgets',
        auth: 'token',
        operationId: 'createWidget',
        summary: 'test route',
        body: z.object({ name: z.string().min(1) }),
        responses: { 201: { description: 'created' } },
        handle: async ({ body, principal }) => {
          await principal();
          executions++;
          if (body.name === 'invalid') throw ValidationError.field('name', 'error.validation.not_valid', 'no');
          if (gate) {
            reachedGate?.();
            await gate;
          }
          return { status: 201, body: { uuid: newUuid(), name: body.name } };
        },
      }),
    ],
    authenticator,
  );
  const post = async (body: unknown, key: string | undefined, bearer = token) => {
    const event = toApiGatewayEvent(
      {
        method: 'POST',
        url: '/widgets',
        headers: {
          authorization: `Bearer ${bearer}`,
          'content-type': 'application/json',
          ...definedFields({ 'idempotency-key': key }),
        },
        body: Buffer.from(JSON.stringify(body)),
        sourceIp: '127.0.0.1',
      },
      'POST /widgets',
      undefined,
    );
    const result = await handler(event, {} as Context);
    return { status: result.statusCode, headers: result.headers ?? {}, json: JSON.parse(result.body ?? 'null') };
  };

  it('replays the first response with Idempotent-Replayed and runs the handler once', async () => {
    const key = newUuid();
    const before = executions;
    const first = await post({ name: 'a' }, key);
    const second = await post({ name: 'a' }, key);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.json).toEqual(first.json);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(executions - before).toBe(1);
  });

  it('answers 422 idempotency_key_reused to the same key with a different body', async () => {
    const key = newUuid();
    await post({ name: 'a' }, key);
    const reused = await post({ name: 'b' }, key);
    expect(reused.status).toBe(422);
    expect(reused.json.error).toMatchObject({
      http_code: 422,
      code: 'unprocessable_entity',
      message: [expect.objectContaining({ code: 'idempotency_key_reused' })],
    });
  });

  it('answers 409 while a request with the same key is in flight', async () => {
    const key = newUuid();
    let open: () => void = () => undefined;
    gate = new Promise((resolve) => {
      open = resolve;
    });
    const reached = new Promise<void>((resolve) => {
      reachedGate = resolve;
    });
    const first = post({ name: 'slow' }, key);
    await reached;
    const second = await post({ name: 'slow' }, key);
    expect(second.status).toBe(409);
    expect(second.json.error.code).toBe('conflict');
    open();
    gate = undefined;
    expect((await first).status).toBe(201);
    expect((await post({ name: 'slow' }, key)).headers['idempotent-replayed']).toBe('true');
  });

  it('runs the handler exactly once for 20 concurrent requests with one key', async () => {
    const key = newUuid();
    const before = executions;
    const results = await Promise.all(Array.from({ length: 20 }, () => post({ name: 'race' }, key)));
    expect(executions - before).toBe(1);
    const created = results.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.json.uuid)).size).toBe(1);
    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true);
  });

  it('scopes keys per client, releases them after a failure and forgets them after 24 h', async () => {
    const key = newUuid();
    const mine = await post({ name: 'a' }, key);
    const other = await post({ name: 'a' }, key, await tokenFor(DEMO.otherClient));
    expect(other.status).toBe(201);
    expect(other.json.uuid).not.toBe(mine.json.uuid);

    const failing = newUuid();
    expect((await post({ name: 'invalid' }, failing)).status).toBe(400);
    const before = executions;
    expect((await post({ name: 'invalid' }, failing)).status).toBe(400);
    expect(executions - before).toBe(1);

    freezeClock(Math.floor(Date.now() / 1000));
    const fresh = await tokenFor(DEMO.client);
    const dayKey = newUuid();
    const day1 = await post({ name: 'a' }, dayKey, fresh);
    advanceClock(24 * 3600 - 1);
    const sameDay = await post({ name: 'a' }, dayKey, await tokenFor(DEMO.client));
    expect(sameDay.json.uuid).toBe(day1.json.uuid);
    advanceClock(1);
    const later = await tokenFor(DEMO.client);
    const day2 = await post({ name: 'a' }, dayKey, later);
    expect(day2.status).toBe(201);
    expect(day2.json.uuid).not.toBe(day1.json.uuid);
  });

  it('refuses keys longer than 255 characters with 400', async () => {
    expect((await post({ name: 'a' }, 'k'.repeat(255))).status).toBe(201);
    const tooLong = await post({ name: 'a' }, 'k'.repeat(256));
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.error.message[0].property).toBe('Idempotency-Key');
  });
});
