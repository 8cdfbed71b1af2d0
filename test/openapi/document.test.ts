import { compileErrors, validate } from '@readme/openapi-parser';
import { API_EXAMPLES, describeApi, WITHOUT_EXAMPLE } from '@svc/api';
import { EVENT_NAMES } from '@svc/events';
import { describe, expect, it } from 'vitest';
import { checkResponse, unheldExample } from './responses';

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

describe('the examples taken from the contract tests (apps/api/src/api-examples.json)', () => {
  const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));

  it('give every operation a successful exchange, and every answer still holds against its schema', () => {
    const missing = operations
      .map((operation) => operation.operationId as string)
      .filter((id) => !(id in WITHOUT_EXAMPLE))
      .filter((id) => !Object.keys(API_EXAMPLES[id]?.responses ?? {}).some((status) => Number(status) < 400));
    expect(missing, 'run the tests, then `pnpm docs:examples`').toEqual([]);
    const unheld = Object.entries(API_EXAMPLES).flatMap(([id, example]) =>
      unheldExample(id, example).map((problem) => `${id}: ${problem}`),
    );
    expect(unheld, 'the API moved: `pnpm docs:examples` replaces what no longer holds').toEqual([]);
  });

  it('stand in the description: request, parameters, answers, and each error status the tests met', () => {
    const create = document.paths['/payments']?.post as {
      requestBody: { content: Record<string, { example?: unknown }> };
      responses: Record<string, { content?: Record<string, { example?: unknown; schema: Json }> }>;
    };
    const example = API_EXAMPLES.initialisePayment;
    expect(create.requestBody.content['application/json']?.example).toEqual(example?.request);
    expect(create.responses['201']?.content?.['application/json']?.example).toEqual(example?.responses['201']);
    // Error statuses are listed per operation, in the shape each has (401 Simple, the others Nested).
    expect(create.responses['400']?.content?.['application/json']).toMatchObject({
      schema: { $ref: '#/components/schemas/Error' },
      example: { error: { http_code: 400 } },
    });
    expect(create.responses['401']?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/SimpleError',
    });
    const get = document.paths['/payments/{payment_uuid}']?.get as {
      parameters: Array<{ name: string; example?: string }>;
    };
    expect(get.parameters.find((parameter) => parameter.name === 'payment_uuid')?.example).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('are caught when they stop holding: a changed answer, a request the route refuses, a URL of another operation', () => {
    const example = API_EXAMPLES.initialisePayment;
    if (!example) throw new Error('no example of POST /payments');
    const success = example.responses['201'] as Json;
    expect(
      unheldExample('initialisePayment', { ...example, responses: { 201: { ...success, extra: 1 } } }).join(),
    ).toMatch(/additional/);
    expect(unheldExample('initialisePayment', { ...example, request: { amount: 'ten' } }).join()).toMatch(/request/);
    expect(unheldExample('initialisePayment', { ...example, url: '/supporters' }).join()).toMatch(/reaches/);
  });
});
