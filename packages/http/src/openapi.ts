import * as z from 'zod';
import type { AnyRoute } from './route';

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
  properties: {
    request_id: { type: 'string' },
    error: {
      type: 'object',
      required: ['http_code', 'code', 'message'],
      properties: {
        http_code: { type: 'integer' },
        code: { type: 'string' },
        message: {
          type: 'array',
          items: {
            type: 'object',
            properties: { code: { type: 'string' }, property: { type: 'string' }, message: { type: 'string' } },
          },
        },
      },
    },
  },
};

/** OpenAPI 3.1 built from the very zod schemas that validate requests. */
export function buildOpenApi(routes: readonly AnyRoute[], info: { title: string; version: string }): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    if (route.hidden || route.path === '$default') continue;
    const responses: Record<string, JsonSchema> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = {
        description: spec.description,
        ...(spec.schema ? { content: { 'application/json': { schema: toSchema(spec.schema, 'output') } } } : {}),
      };
    }
    if (route.auth === 'token') {
      responses['401'] ??= {
        description: 'Missing, malformed, forged or expired token',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/SimpleError' } } },
      };
    }
    responses.default = {
      description: 'Error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
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
        SimpleError: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } },
      },
    },
  };
}
