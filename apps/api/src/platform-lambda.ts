import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UnauthorizedError } from '@svc/core';
import { createDomainHandler } from '@svc/http';
import { OPENAPI_DOCUMENT_FILE } from './docs-page';
import { createPlatformRoutes } from './platform-routes';

/**
 * Set by the bundler (platform-bundle.ts): the API description built from the route table when it
 * was bundled is then a file beside the bundle, read at the first `/openapi.json`, instead of every
 * domain's code. Unset (the local runtime, tests), the route table is loaded when the description
 * is first asked for.
 */
declare const __SVC_OPENAPI_PREBUILT__: boolean | undefined;

/**
 * Health, the API description and the fallback. Every route here is public, so no
 * authenticator is needed: health checks and cold starts stay light.
 */
const routes = createPlatformRoutes(
  typeof __SVC_OPENAPI_PREBUILT__ !== 'undefined' && __SVC_OPENAPI_PREBUILT__
    ? async () =>
        JSON.parse(
          await readFile(join(dirname(fileURLToPath(import.meta.url)), OPENAPI_DOCUMENT_FILE), 'utf8'),
        ) as Record<string, unknown>
    : async () => (await import('./api-document')).describeApi(),
);
const noTokens = {
  verifyAccessToken: () => Promise.reject(new UnauthorizedError('No route here takes a token')),
  loadPrincipal: () => Promise.reject(new UnauthorizedError('No route here takes a token')),
};

export const handler = createDomainHandler(routes, noTokens);
