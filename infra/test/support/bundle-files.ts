import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import * as z from 'zod';

/** Every file of a function's asset with this ending: `index.mjs` and its chunks (code splitting). */
function filesEndingWith(dir: string, ending: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith(ending) && !file.startsWith('docs-assets'))
    .map((file) => join(dir, file));
}

/** The sources bundled into an asset: the union of its source maps' `sources`. */
export function bundledSources(dir: string): string[] {
  return filesEndingWith(dir, '.mjs.map').flatMap(
    (file) => z.object({ sources: z.array(z.string()) }).parse(JSON.parse(readFileSync(file, 'utf8'))).sources,
  );
}

/** The asset's code: `index.mjs` and every chunk. */
export function bundledCode(dir: string): string {
  return filesEndingWith(dir, '.mjs')
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
}

/** A bundle file's static imports of other files of the asset (`import … from "./chunks/…"`, not `import()`). */
const STATIC_IMPORT = /\bimport\s*(?:[^"'();]*?from\s*)?["'](\.{1,2}\/[^"']+)["']/g;

const sourcesOf = (file: string) =>
  z.object({ sources: z.array(z.string()) }).parse(JSON.parse(readFileSync(`${file}.map`, 'utf8'))).sources;

/**
 * The sources a cold start reads: those of `index.mjs` and of every chunk it imports statically,
 * transitively. What the code loads with `import()` waits for its first use and is not here.
 */
export function coldStartSources(dir: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const [, path] of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      if (path) visit(resolve(dirname(file), path));
    }
  };
  visit(join(dir, 'index.mjs'));
  return [...seen].flatMap(sourcesOf);
}
