import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeApi } from './api-description';
import { DOCS_ASSET_DIR, DOCS_ASSETS, swaggerUiDir } from './docs-page';

/** The module name the platform bundle imports its API description from (an esbuild alias). */
export const OPENAPI_DOCUMENT_MODULE = '@svc/openapi-document';

/**
 * How the platform function is bundled: the API description is built here from the route table
 * and written to `<root>/.cdk-generated/openapi.json` (a fixed path, so the bundle's hash moves
 * only with the document); `__SVC_OPENAPI_PREBUILT__` tells the entry (platform-lambda.ts) to
 * import it from there, and the entry then bundles that JSON instead of every domain's code. The
 * CDK app and the init bench bundle with these.
 */
export function platformBundling(root: string): {
  define: Record<string, string>;
  alias: Record<string, string>;
  /** Files copied beside the bundle: path in the bundle → path on this machine (the reference's assets). */
  files: Record<string, string>;
} {
  const dir = join(root, '.cdk-generated');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'openapi.json');
  writeFileSync(file, `${JSON.stringify(describeApi())}\n`);
  const assets = swaggerUiDir();
  return {
    define: { __SVC_OPENAPI_PREBUILT__: 'true' },
    alias: { [OPENAPI_DOCUMENT_MODULE]: file },
    files: Object.fromEntries(DOCS_ASSETS.map((name) => [`${DOCS_ASSET_DIR}/${name}`, join(assets, name)])),
  };
}
