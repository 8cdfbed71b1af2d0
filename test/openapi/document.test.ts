import { compileErrors, validate } from '@readme/openapi-parser';
import { describeApi } from '@svc/api';
import { EVENT_NAMES } from '@svc/events';
import { describe, expect, it } from 'vitest';
import { checkResponse } from './responses';

type Json = Record<string, unknown>;
const document = describeApi() as { paths: Record<string, Record<string, Json>> };

/** Every object schema in `schema` that lists properties but lets others through, by its path. */
function openObjects(schema: unknown, at: string): string[] {
  if (Array.isArray(schema)) return schema.flatMap((item, i) => openObjects(item, `${at}/${i}`));
  if (!schema || typeof schema !== 'object') return [];
  const node = schema as Json;
  const here = node.properties && node.additionalProperties !== false ? [at] : [];
  return [...here, ...Object.entries(node).flatMap(([key, value]) => openObjects(value, `${at}/${key}`))];
}

describe('the API description', () => {
  it('is valid OpenAPI 3.1 to a real validator', async () => {
    const result = await validate(structuredClone(document) as never);
    expect(result.valid ? '' : compileErrors(result)).toBe('');
    expect(result.specification).toBe('OpenAPI');
    expect((document as unknown as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('lists every event the service emits under webhooks, its data schema beside the envelope', () => {
    const webhooks = (document as unknown as { webhooks: Record<string, { post: Json }> }).webhooks;
    expect(Object.keys(webhooks).sort()).toEqual([...EVENT_NAMES].sort());
    const schemas = (document as unknown as { components: { schemas: Record<string, Json> } }).components.schemas;
    for (const name of EVENT_NAMES) {
      const post = webhooks[name]?.post as { requestBody: { content: Record<string, { schema: Json }> } };
      const envelope = post.requestBody.content['application/json'] as { schema: Json };
      const event = (envelope.schema.properties as Record<string, Json>).event as Json;
      const data = (event.properties as Record<string, Json>).data as { $ref: string };
      expect(schemas[data.$ref.replace('#/components/schemas/', '')], name).toMatchObject({ type: 'object' });
    }
    expect(schemas.Payment?.properties).toHaveProperty('svc_parameters');
    expect(schemas.OnboardingProcess?.properties).not.toHaveProperty('token');
  });

  it('groups every operation under its domain, and names the token flow', () => {
    const untagged = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, operation]) =>
        Array.isArray(operation.tags) && operation.tags.length === 1 ? [] : [`${method} ${path}`],
      ),
    );
    expect(untagged).toEqual([]);
    expect(document.paths['/payments']?.post?.tags).toEqual(['Payments']);
    const schemes = (document as unknown as { components: { securitySchemes: Json } }).components.securitySchemes;
    expect(schemes.oauth2).toMatchObject({
      type: 'oauth2',
      flows: { clientCredentials: { tokenUrl: '/oauth2/token' } },
    });
  });

  it('closes every response object that declares its fields (an undeclared field is a difference)', () => {
    const open: string[] = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(operation.responses as Json)) {
          const schema = ((response as Json).content as Json | undefined)?.['application/json'];
          open.push(...openObjects(schema, `${method.toUpperCase()} ${path} ${status}`));
        }
      }
    }
    expect(open).toEqual([]);
  });

  it('gives every successful JSON answer a schema, and every page its media type', () => {
    const bare: string[] = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(operation.responses as Json)) {
          const content = (response as Json).content as Json | undefined;
          const noBody = status === '204' || status.startsWith('3');
          if (!noBody && !content) bare.push(`${method.toUpperCase()} ${path} ${status}`);
        }
      }
    }
    expect(bare).toEqual([]);
  });
});

describe('the response check', () => {
  const health = (body: unknown, status = 200, type = 'application/json') =>
    checkResponse('GET', '/health', status, type, body)?.errors ?? ['not checked'];
  const payment = (body: unknown) =>
    checkResponse('GET', '/payments/6f1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f60', 200, 'application/json', body)?.errors;

  it('passes an answer as described', () => {
    expect(health({ status: 'ok' })).toEqual([]);
  });

  it('names an undeclared field, a missing field, a wrong type and an undeclared status', () => {
    expect(health({ status: 'ok', extra: 1 }).join()).toMatch(/additional properties.*extra/);
    expect(health({}).join()).toMatch(/required property 'status'/);
    expect(payment({ uuid: 1 })?.join()).toMatch(/\/uuid must be string/);
    expect(health({ status: 'ok' }, 201).join()).toMatch(/status 201 is not declared/);
    expect(health('<html>', 200, 'text/html').join()).toMatch(/declares JSON/);
  });

  it('holds errors against the Nested shape, and 401s against the Simple one', () => {
    const nested = { request_id: 'r', error: { http_code: 404, code: 'not_found', message: [] } };
    expect(checkResponse('GET', '/health', 404, 'application/json', nested)?.errors).toEqual([]);
    const get = '/payments/6f1d2c3a-4b5e-4f60-8a71-9b2c3d4e5f60';
    expect(checkResponse('GET', get, 401, 'application/json', { message: 'No token' })?.errors).toEqual([]);
    expect(checkResponse('GET', get, 401, 'application/json', nested)?.errors.join()).toMatch(/additional/);
    expect(checkResponse('GET', get, 403, 'application/json', { message: 'x' })?.errors.join()).toMatch(/request_id/);
  });

  it('leaves paths outside the route table to the gateway', () => {
    expect(checkResponse('GET', '/nowhere', 404, 'application/json', {})).toBeUndefined();
    expect(checkResponse('GET', '//[', 404, 'application/json', {})).toBeUndefined();
  });
});
