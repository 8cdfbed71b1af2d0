import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `/docs`: the API description rendered by Swagger UI (swagger-ui-dist: it renders OpenAPI 3.1
 * with its `webhooks`, and is a set of static files that fetch nothing from elsewhere, so the
 * reference works offline and from our own function). The platform bundle carries the two
 * files in `docs-assets/` beside its code (platform-bundle.ts copies them); the local runtime
 * reads them from the installed package.
 */
export const DOCS_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js'] as const;
export const DOCS_ASSET_DIR = 'docs-assets';

/** The API description's file beside the platform bundle's code (read at the first `/openapi.json`). */
export const OPENAPI_DOCUMENT_FILE = 'openapi.json';

/** Where the installed swagger-ui-dist keeps its files (bundling copies them from here). */
export function swaggerUiDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#reference',
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    defaultModelExpandDepth: 3,
    displayRequestDuration: true,
    tryItOutEnabled: false,
    validatorUrl: null,
  });
});
`;

export const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc fundraising payments API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<noscript><p>The reference needs JavaScript; the description itself is at <a href="/openapi.json">/openapi.json</a>.</p></noscript>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/docs.js"></script>
</body>
</html>
`;

/** No origin but our own: the page and its assets come from the service, the description too. */
export const DOCS_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
};

const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
};

const read = new Map<string, string>();

/** One of the reference's static files (read once per container), or undefined for any other name. */
export function docsAsset(file: string): { body: string; contentType: string } | undefined {
  if (file === 'docs.js') return { body: INIT_SCRIPT, contentType: TYPES['.js'] as string };
  if (!(DOCS_ASSETS as readonly string[]).includes(file)) return undefined;
  let body = read.get(file);
  if (body === undefined) {
    const bundled = join(dirname(fileURLToPath(import.meta.url)), DOCS_ASSET_DIR, file);
    body = readFileSync(existsSync(bundled) ? bundled : join(swaggerUiDir(), file), 'utf8');
    read.set(file, body);
  }
  return { body, contentType: TYPES[file.slice(file.lastIndexOf('.'))] as string };
}
