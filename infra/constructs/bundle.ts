import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type BuildOptions, build, buildSync, type Metafile } from 'esbuild';
import { REPO_ROOT } from './repo-paths';

/**
 * Powertools Tracer and the X-Ray SDK behind it (about 115 KiB minified), loaded synchronously
 * and only where the stage traces calls (`packages/core/src/tracing.ts`):
 * - `bundled` (stages that trace): in the code, where it loads fastest (a package beside the code
 *   cost a traced payments cold start about 10 ms more);
 * - `beside` (stages that do not): a package of its own beside the code
 *   (`node_modules/@aws-lambda-powertools/tracer`: CommonJS files for Tracer and its middy
 *   middleware), found by the code's `require` from any chunk, so an untraced cold start never
 *   reads it (26 ms less for payments) and a function switched to tracing by hand still works.
 */
export const TRACER_MODULE = '@aws-lambda-powertools/tracer';

export type TracerPlacement = 'bundled' | 'beside';

/**
 * The construct-tree context key by which a stack tells its functions that the stage traces calls
 * (set before they are created: their code is built when they are).
 */
export const TRACE_CALLS_CONTEXT = 'svc:traceCalls';

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
  // CommonJS dependencies bundled into ESM still call require() for Node built-ins. The import
  // is aliased: a module of ours importing createRequire into a chunk's scope would otherwise
  // collide with the banner's (it did in an unminified build).
  banner:
    "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);",
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
 * with `import()` (the Stripe SDK, the search engine's client and query builder, …) is a chunk of
 * its own, read and compiled at its first use instead of at every cold start. Minified, with source maps (names and
 * lines for stack traces, not the sources).
 */
export function bundleOptions(
  entry: string,
  outdir: string,
  bundleTime?: BundleTime,
  tracer: TracerPlacement = 'bundled',
): BuildOptions {
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
    external: [...BUNDLE.externalModules, ...(tracer === 'beside' ? [TRACER_MODULE] : [])],
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

const resolveFromRoot = (name: string) => createRequire(join(REPO_ROOT, 'package.json')).resolve(name);

/** esbuild options that build Tracer into its package beside the code (see `TRACER_MODULE`). */
export function tracerPackageOptions(outdir: string): BuildOptions {
  return {
    // Tracer, and its middy middleware (`require('@aws-lambda-powertools/tracer/middleware')`).
    entryPoints: {
      index: resolveFromRoot(TRACER_MODULE),
      middleware: resolveFromRoot(`${TRACER_MODULE}/middleware`),
    },
    outdir: join(outdir, 'node_modules', TRACER_MODULE),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: BUNDLE.target,
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    logLevel: 'warning',
  };
}

/** The package file that makes Tracer's file the module `require` finds. */
function writeTracerPackageFile(outdir: string): void {
  writeFileSync(
    join(outdir, 'node_modules', TRACER_MODULE, 'package.json'),
    `${JSON.stringify({ name: TRACER_MODULE, private: true, main: 'index.js' })}\n`,
  );
}

/** Synchronously (the CDK's local bundling): the code, Tracer's package where beside, the files. */
export function buildFunctionSync(
  entry: string,
  outdir: string,
  bundleTime: BundleTime | undefined,
  tracer: TracerPlacement,
): void {
  buildSync(bundleOptions(entry, outdir, bundleTime, tracer));
  if (tracer === 'beside') {
    buildSync(tracerPackageOptions(outdir));
    writeTracerPackageFile(outdir);
  }
  copyBundleFiles(outdir, bundleTime);
}

/** The same, asynchronously, with esbuild plugins (`pnpm invoke`) or options (the bench) added. */
export async function buildFunction(
  entry: string,
  outdir: string,
  bundleTime: BundleTime | undefined,
  tracer: TracerPlacement,
  extra: Partial<BuildOptions> = {},
): Promise<Metafile> {
  const result = await build({ ...bundleOptions(entry, outdir, bundleTime, tracer), ...extra });
  if (tracer === 'beside') {
    await build({ ...tracerPackageOptions(outdir), logLevel: extra.logLevel ?? 'warning' });
    writeTracerPackageFile(outdir);
  }
  copyBundleFiles(outdir, bundleTime);
  if (!result.metafile) throw new Error('esbuild gave no metafile');
  return result.metafile;
}

/** Copies the bundle-time files beside the code. */
function copyBundleFiles(outdir: string, bundleTime?: BundleTime): void {
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
