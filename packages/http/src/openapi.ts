import { createHash } from 'node:crypto';
import * as z from 'zod';
import type { AnyRoute, ResponseSpec } from './route';

type JsonSchema = Record<string, unknown>;

/** Schemas shared by several places in the document (`components.schemas`), by name. */
export type SharedSchemas = Record<string, JsonSchema>;

/**
 * A zod schema as JSON Schema inside the API description. Definitions zod puts in `$defs` (a
 * recursive JSON value, say) move to `components.schemas`, named by their content, and their
 * references follow: `#/$defs/…` would point at the document's root.
 */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output', shared: SharedSchemas): JsonSchema {
  const {
    $schema: _ignored,
    $defs: defs,
    ...rest
  } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema & {
    $defs?: Record<string, JsonSchema>;
  };
  if (!defs) return rest;
  const names = new Map<string, string>();
  for (const [name, definition] of Object.entries(defs)) {
    const digest = createHash('sha256').update(JSON.stringify(definition)).digest('hex').slice(0, 10);
    names.set(`#/$defs/${name}`, `#/components/schemas/Shared_${digest}`);
  }
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!node || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [
        key,
        key === '$ref' && typeof value === 'string' ? (names.get(value) ?? value) : rewrite(value),
      ]),
    );
  };
  for (const [name, definition] of Object.entries(defs)) {
    const target = names.get(`#/$defs/${name}`)?.slice('#/components/schemas/'.length);
    if (target) shared[target] = rewrite(definition) as JsonSchema;
  }
  return rewrite(rest) as JsonSchema;
}

function parameters(schema: z.ZodType | undefined, where: 'path' | 'query', shared: SharedSchemas): JsonSchema[] {
  if (!schema) return [];
  const json = jsonSchemaOf(schema, 'input', shared);
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
function responseBody(status: string, spec: ResponseSpec, shared: SharedSchemas): JsonSchema {
  if (spec.html) return { content: { 'text/html': { schema: { type: 'string' } } } };
  if (spec.text) return { content: { 'text/plain': { schema: { type: 'string' } } } };
  if (spec.media) return { content: { [spec.media]: { schema: { type: 'string', format: 'binary' } } } };
  if (spec.schema) return json(jsonSchemaOf(spec.schema, 'output', shared));
  if (Number(status) >= 400) return json({ $ref: '#/components/schemas/Error' });
  return {};
}

/** OpenAPI 3.1 built from the very zod schemas that validate requests. */
export function buildOpenApi(
  routes: readonly AnyRoute[],
  info: { title: string; version: string; description?: string },
  options: { tagOf?: (route: AnyRoute) => string } = {},
): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const shared: SharedSchemas = {};
  for (const route of routes) {
    if (route.hidden || route.path === '$default') continue;
    const responses: Record<string, JsonSchema> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = { description: spec.description, ...responseBody(status, spec, shared) };
    }
    if (route.auth === 'token') {
      responses['401'] ??= {
        description: 'Missing, malformed, forged or expired token',
        ...json({ $ref: '#/components/schemas/SimpleError' }),
      };
    }
    if (route.auth === 'token' || route.limit === 'credentials') {
      responses['429'] ??= {
        description:
          route.limit === 'credentials'
            ? 'Too many token requests from this address (the credentials limit); nothing was done'
            : "Over the client's request limit; nothing was done",
        headers: {
          'Retry-After': {
            description: 'Seconds to wait before sending again',
            schema: { type: 'integer', minimum: 1 },
          },
        },
        ...json({ $ref: '#/components/schemas/Error' }),
      };
    }
    responses.default = {
      description: 'Error',
      ...json({ $ref: '#/components/schemas/Error' }),
    };
    const operation: JsonSchema = {
      operationId: route.operationId,
      ...(options.tagOf ? { tags: [options.tagOf(route)] } : {}),
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      parameters: [...parameters(route.params, 'path', shared), ...parameters(route.query, 'query', shared)],
      responses,
      ...(route.auth === 'token' ? { security: [{ oauth2: [] }] } : { security: [] }),
    };
    if (route.body) {
      const media = (route.accepts ?? ['json']).map((format) =>
        format === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
      );
      const schema = jsonSchemaOf(route.body, 'input', shared);
      // A body the route may go without (a refund of the whole amount) is not required.
      operation.requestBody = {
        required: !route.body.safeParse(undefined).success,
        content: Object.fromEntries(media.map((m) => [m, { schema }])),
      };
    }
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, JsonSchema>)[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info,
    paths,
    components: {
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: 'Client credentials: the token endpoint answers a bearer token (a JWT) for 3600 s',
          flows: { clientCredentials: { tokenUrl: '/oauth2/token', scopes: {} } },
        },
      },
      schemas: {
        Error: NESTED_ERROR,
        SimpleError: SIMPLE_ERROR,
        ...shared,
      },
    },
  };
}
