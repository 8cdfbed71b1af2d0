import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The monorepo root: esbuild bundles from here and resolves workspace packages through its
 * node_modules, and DOMAINS' entries are relative to it.
 */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export function fromRepoRoot(relativePath: string): string {
  return resolve(REPO_ROOT, relativePath);
}
