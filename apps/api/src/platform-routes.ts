import { deferred, NotFoundError } from '@svc/core';
import { type AnyRoute, defineRoute } from '@svc/http';
import * as z from 'zod';
import { DOCS_HEADERS, DOCS_PAGE, docsAsset } from './docs-page';

const health = z.object({ status: z.literal('ok') });
const openApiDocument = deferred(() =>
  z.object({
    openapi: z.literal('3.1.0'),
    info: z.object({ title: z.string(), version: z.string(), description: z.string().optional() }),
    tags: z.array(z.object({ name: z.string(), description: z.string() })).optional(),
    paths: z.record(z.string(), z.record(z.string(), z.unknown())),
    webhooks: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
    components: z.record(z.string(), z.record(z.string(), z.unknown())),
  }),
);

/**
 * Health, the API description, and the fallback that answers unknown paths in our shape.
 * `document` gives the API description, built once on first use: from the route table locally,
 * or the one the platform bundle carries (built when it was bundled; see platform-bundle.ts).
 */
export function createPlatformRoutes(document: () => Promise<Record<string, unknown>>): AnyRoute[] {
  let spec: Promise<Record<string, unknown>> | undefined;
  const openApi = () => {
    spec ??= document();
    return spec;
  };
  return [
    defineRoute({
      method: 'GET',
      path: '/health',
      auth: 'none',
      limit: 'public-read',
      operationId: 'health',
      summary: 'Readiness',
      responses: { 200: { description: 'Once requests can be served', schema: health } },
      handle: async () => ({ status: 200, body: { status: 'ok' } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      auth: 'none',
      limit: 'public-read',
      operationId: 'openApi',
      summary: 'This API description (OpenAPI 3.1)',
      responses: { 200: { description: 'OpenAPI document', schema: openApiDocument } },
      handle: async () => ({ status: 200, body: await openApi() }),
    }),
    defineRoute({
      method: 'GET',
      path: '/docs',
      auth: 'none',
      limit: 'public-read',
      operationId: 'docs',
      summary: 'This API description, for people',
      responses: { 200: { description: 'HTML page', html: true } },
      handle: async () => ({ status: 200, html: DOCS_PAGE, headers: DOCS_HEADERS }),
    }),
    defineRoute({
      method: 'GET',
      path: '/docs/assets/{file}',
      auth: 'none',
      limit: 'public-read',
      hidden: true,
      operationId: 'docsAsset',
      summary: "The reference's stylesheet and scripts",
      params: z.object({ file: z.string().max(100) }),
      responses: { 200: { description: 'CSS or JavaScript' } },
      handle: async ({ params }) => {
        const asset = docsAsset(params.file);
        if (!asset) throw new NotFoundError('No such file');
        return {
          status: 200,
          text: asset.body,
          headers: {
            'content-type': asset.contentType,
            'cache-control': 'public, max-age=3600',
            'x-content-type-options': 'nosniff',
          },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '$default',
      auth: 'none',
      limit: 'public-read',
      operationId: 'fallback',
      summary: 'Unknown paths',
      hidden: true,
      responses: { 404: { description: 'Not found' } },
      handle: async () => {
        throw new NotFoundError('No such path');
      },
    }),
  ];
}
