import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';

/**
 * What a workspace package's source imports from other packages, read from the source: every
 * static import, re-export, side-effect import, `import()` and `require.resolve` (files of a
 * package read at run time), type-only ones included (the types must resolve too). Test code (`*.test.ts`, `testing*`) counts apart: its packages are
 * devDependencies.
 */
export interface PackageImports {
  /** package name → the first non-test file that imports it */
  runtime: Map<string, string>;
  /** package name → the first test file that imports it, for packages no non-test file imports */
  test: Map<string, string>;
}

const SPECIFIER =
  /(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+|(?:\brequire|createRequire\([^)]*\))\.resolve\(\s*)['"]((?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(?:\/[^'"\s]*)?)['"]/gm;
const BUILTINS = new Set(builtinModules);

export const isTestCode = (file: string) => /\.test\.ts$/.test(file) || /(^|\/)testing[^/]*$/.test(file);

/** The package a specifier names: `@scope/name` or `name`; undefined for Node's own modules. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('node:')) return undefined;
  const [first = '', second = ''] = specifier.split('/');
  const name = first.startsWith('@') ? `${first}/${second}` : first;
  return BUILTINS.has(name) ? undefined : name;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return entry === 'node_modules' ? [] : tsFiles(path);
    return entry.endsWith('.ts') ? [path] : [];
  });
}

export function packageImports(dir: string, self: string): PackageImports {
  const runtime = new Map<string, string>();
  const test = new Map<string, string>();
  for (const file of tsFiles(join(dir, 'src'))) {
    const into = isTestCode(file) ? test : runtime;
    for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const name = packageOf(match[1] ?? '');
      if (name && name !== self && !into.has(name)) into.set(name, file);
    }
  }
  for (const name of runtime.keys()) test.delete(name);
  return { runtime, test };
}
