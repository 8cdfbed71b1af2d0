import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeApi } from './api-document';
import { DOCS_ASSET_DIR, DOCS_ASSETS, OPENAPI_DOCUMENT_FILE, swaggerUiDir } from './docs-page';

/**
 * How the platform function is bundled: the API description is built here from the route table
 * and written to `<root>/.cdk-generated/openapi.json`, which goes beside the bundle's code as a
 * file (as the reference's assets do) rather than into it: a cold start parses none of it.
 * `__SVC_OPENAPI_PREBUILT__` tells the entry (platform-lambda.ts) to read that file, and the entry
 * then bundles no domain's code. The CDK app, `pnpm invoke` and the init bench bundle with these.
 */
export function platformBundling(root: string): {
  define: Record<string, string>;
  alias: Record<string, string>;
  /** Files copied beside the bundle: path in the bundle → path on this machine (the description, the reference's assets). */
  files: Record<string, string>;
} {
  const dir = join(root, '.cdk-generated');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, OPENAPI_DOCUMENT_FILE);
  // Written whole, then moved in place: a synth running beside this one never copies half a file.
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, `${JSON.stringify(describeApi())}\n`);
  renameSync(partial, file);
  const assets = swaggerUiDir();
  return {
    define: { __SVC_OPENAPI_PREBUILT__: 'true' },
    alias: {},
    files: {
      [OPENAPI_DOCUMENT_FILE]: file,
      ...Object.fromEntries(DOCS_ASSETS.map((name) => [`${DOCS_ASSET_DIR}/${name}`, join(assets, name)])),
    },
  };
}
