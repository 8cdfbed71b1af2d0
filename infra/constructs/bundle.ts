import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { BuildOptions, Metafile } from 'esbuild';

/**
 * How every function's code is built (esbuild): the CDK app's assets (ServiceFunction),
 * `pnpm invoke` (infra/invoke/run.ts) and the init bench (bench/init-time.ts) all build with
 * `bundleOptions`, so what runs locally and what is measured is what is deployed.
 */
export const BUNDLE = {
  format: 'esm',
  target: 'node22',
  mainFields: ['module', 'main'],
  // The embedded search engine of the local runtime: never loaded in AWS (the Data API is).
  externalModules: ['@electric-sql/pglite'],
  // CommonJS dependencies bundled into ESM still call require() for Node built-ins.
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
} as const;

/** Fixed at bundle time (the platform's API description and reference). */
export interface BundleTime {
  /** esbuild `define`s. */
  define: Record<string, string>;
  /** Module aliases. */
  alias: Record<string, string>;
  /** Files copied beside the code: path in the bundle → source path. */
  files?: Record<string, string>;
}

/** The handler's module in the bundle (the function's handler is `index.handler`). */
export const BUNDLE_ENTRY = 'index.mjs';

/**
 * The function's code as `index.mjs` plus `chunks/`: code splitting, so what a module imports
 * with `import()` (the Stripe SDK, Tracer and the X-Ray SDK, …) is a chunk of its own, read and
 * compiled at its first use instead of at every cold start. Minified, with source maps (names and
 * lines for stack traces, not the sources).
 */
export function bundleOptions(entry: string, outdir: string, bundleTime?: BundleTime): BuildOptions {
  return {
    entryPoints: { index: entry },
    outdir,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    platform: 'node',
    format: BUNDLE.format,
    target: BUNDLE.target,
    mainFields: [...BUNDLE.mainFields],
    external: [...BUNDLE.externalModules],
    banner: { js: BUNDLE.banner },
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    define: bundleTime?.define ?? {},
    alias: bundleTime?.alias ?? {},
    metafile: true,
    logLevel: 'warning',
  };
}

/** Copies the bundle-time files beside the code. */
export function copyBundleFiles(outdir: string, bundleTime?: BundleTime): void {
  for (const [target, source] of Object.entries(bundleTime?.files ?? {})) {
    mkdirSync(dirname(join(outdir, target)), { recursive: true });
    copyFileSync(source, join(outdir, target));
  }
}

/**
 * What a cold start reads and compiles: the entry module and the chunks it imports statically
 * (transitively), in bytes; chunks behind `import()` wait for their first use.
 */
export function bytesAtInit(metafile: Metafile, outdir: string): number {
  const outputs = metafile.outputs;
  const key = Object.keys(outputs).find((path) => path.endsWith(`/${BUNDLE_ENTRY}`) || path === BUNDLE_ENTRY);
  if (!key) throw new Error(`No ${BUNDLE_ENTRY} among the bundle's outputs (${outdir})`);
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const imported of outputs[path]?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
    }
  };
  visit(key);
  return [...seen].reduce((sum, path) => sum + (outputs[path]?.bytes ?? 0), 0);
}
