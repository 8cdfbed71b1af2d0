import * as z from 'zod';
import type { AnyRoute, ResponseSpec } from './route';

type JsonSchema = Record<string, unknown>;

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
  });
  return rest;
}

function parameters(schema: z.ZodType | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (!schema) return [];
  const json = toSchema(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: property,
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
  }));
}

const NESTED_ERROR: JsonSchema = {
  type: 'object',
  required: ['request_id', 'error'],
  additionalProperties: false,
  properties: {
    request_id: { type: 'string' },
    error: {
      type: 'object',
      required: ['http_code', 'code', 'message'],
      additionalProperties: false,
      properties: {
        http_code: { type: 'integer' },
        code: { type: 'string' },
        message: {
          type: 'array',
          items: {
            type: 'object',
            required: ['code', 'message'],
            additionalProperties: false,
            properties: { code: { type: 'string' }, property: { type: 'string' }, message: { type: 'string' } },
          },
        },
      },
    },
  },
};

const SIMPLE_ERROR: JsonSchema = {
  type: 'object',
  required: ['message'],
  additionalProperties: false,
  properties: { message: { type: 'string' } },
};

const json = (schema: JsonSchema) => ({ content: { 'application/json': { schema } } });

/** A response's body: its schema, an HTML page, or for an error without one the Nested shape. */
function responseBody(status: string, spec: ResponseSpec): JsonSchema {
  if (spec.html) return { content: { 'text/html': { schema: { type: 'string' } } } };
  if (spec.schema) return json(toSchema(spec.schema, 'output'));
  if (Number(status) >= 400) return json({ $ref: '#/components/schemas/Error' });
  return {};
}

/** OpenAPI 3.1 built from the very zod schemas that validate requests. */
export function buildOpenApi(routes: readonly AnyRoute[], info: { title: string; version: string }): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    if (route.hidden || route.path === '$default') continue;
    const responses: Record<string, JsonSchema> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = { description: spec.description, ...responseBody(status, spec) };
    }
    if (route.auth === 'token') {
      responses['401'] ??= {
        description: 'Missing, malformed, forged or expired token',
        ...json({ $ref: '#/components/schemas/SimpleError' }),
      };
    }
    responses.default = {
      description: 'Error',
      ...json({ $ref: '#/components/schemas/Error' }),
    };
    const operation: JsonSchema = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
      responses,
      ...(route.auth === 'token' ? { security: [{ bearer: [] }] } : { security: [] }),
    };
    if (route.body) {
      const media = (route.accepts ?? ['json']).map((format) =>
        format === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
      );
      const schema = toSchema(route.body, 'input');
      operation.requestBody = { required: true, content: Object.fromEntries(media.map((m) => [m, { schema }])) };
    }
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, JsonSchema>)[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info,
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: {
        Error: NESTED_ERROR,
        SimpleError: SIMPLE_ERROR,
      },
    },
  };
}
