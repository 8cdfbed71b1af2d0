import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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
