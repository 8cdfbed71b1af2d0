import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ROUTE_TABLE } from '@svc/api';
import { ADDRESS_LIMITS } from '@svc/http';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { isTestCode, packageImports } from './support/package-imports';
import { ROOT } from './support/service';

/**
 * The workspace's dependency graph, read from each package's `package.json` (its `dependencies` on
 * `@svc/*`), each edge named by a source file that makes it: which package uses which. The
 * package files are held to the source (every import declared, nothing declared unused), so the
 * graph is the code's.
 */
const packageJson = z.object({
  name: z.string(),
  dependencies: z.record(z.string(), z.string()).optional(),
  devDependencies: z.record(z.string(), z.string()).optional(),
});

interface WorkspacePackage {
  name: string;
  dir: string;
  /** packages/ (libraries), services/ (domains) or apps/ (composition roots) */
  folder: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

function workspacePackages(): WorkspacePackage[] {
  return ['packages', 'services', 'apps'].flatMap((folder) =>
    readdirSync(join(ROOT, folder)).flatMap((entry) => {
      const dir = join(ROOT, folder, entry);
      if (!existsSync(join(dir, 'package.json'))) return [];
      const pkg = packageJson.parse(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')));
      return [
        {
          name: pkg.name,
          dir,
          folder,
          dependencies: pkg.dependencies ?? {},
          devDependencies: pkg.devDependencies ?? {},
        },
      ];
    }),
  );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return entry.endsWith('.ts') && !isTestCode(path) ? [path] : [];
  });
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](@svc\/[a-z-]+)(?:\/[^'"]*)?['"]/g;

function importsOf(source: string): string[] {
  return [...source.matchAll(IMPORT)].map((match) => match[1] ?? '');
}

function importGraph(packages: WorkspacePackage[]): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const pkg of packages) {
    const { runtime } = packageImports(pkg.dir, pkg.name);
    const uses = new Map<string, string>();
    for (const target of Object.keys(pkg.dependencies).filter((name) => name.startsWith('@svc/'))) {
      uses.set(target, relative(ROOT, runtime.get(target) ?? join(pkg.dir, 'package.json')));
    }
    graph.set(pkg.name, uses);
  }
  return graph;
}

/** What a package's source imports that its package.json does not declare, and what it declares unused. */
function undeclared(pkg: WorkspacePackage): string[] {
  const { runtime, test } = packageImports(pkg.dir, pkg.name);
  // A package of types alone (`aws-lambda`) is declared as its `@types/` package.
  const inRuntime = (name: string) => name in pkg.dependencies || `@types/${name}` in pkg.devDependencies;
  const inTests = (name: string) => inRuntime(name) || name in pkg.devDependencies;
  const problems = [
    ...[...runtime]
      .filter(([name]) => !inRuntime(name))
      .map(([name, file]) => `${pkg.name}: ${relative(ROOT, file)} imports ${name}, not in dependencies`),
    ...[...test]
      .filter(([name]) => !inTests(name))
      .map(([name, file]) => `${pkg.name}: ${relative(ROOT, file)} imports ${name}, not declared`),
  ];
  const imported = new Set([...runtime.keys(), ...test.keys()].flatMap((name) => [name, `@types/${name}`]));
  const unused = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)]
    .filter((name) => !imported.has(name))
    .map((name) => `${pkg.name}: declares ${name}, which no file imports`);
  return [...problems, ...unused];
}

/** Every cycle found by a depth-first walk, each as the path that closes it. */
function cyclesOf(graph: ReadonlyMap<string, ReadonlyMap<string, string>>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const walk = (node: string, path: string[]) => {
    const at = path.indexOf(node);
    if (at >= 0) {
      cycles.push([...path.slice(at), node]);
      return;
    }
    if (done.has(node)) return;
    for (const next of graph.get(node)?.keys() ?? []) walk(next, [...path, node]);
    done.add(node);
  };
  for (const node of graph.keys()) walk(node, []);
  return cycles;
}

/**
 * Imports between modules that run (relative paths; `import type` and `export type` are erased and
 * left out): static, re-exports, side-effect imports and `import()`.
 */
const RUNTIME_IMPORT =
  /^(?:import|export)\s+(?!type\s)[^;]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|^import\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]/gms;

function runtimeImportsOf(source: string): string[] {
  return [...source.matchAll(RUNTIME_IMPORT)].map((match) => match[1] ?? match[2] ?? match[3] ?? '');
}

/** The module graph of every workspace package's source, each edge named by the importing file. */
function moduleGraph(packages: WorkspacePackage[]): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const pkg of packages) {
    for (const file of sourceFiles(join(pkg.dir, 'src'))) {
      const targets = new Map<string, string>();
      for (const specifier of runtimeImportsOf(readFileSync(file, 'utf8'))) {
        const base = join(dirname(file), specifier.replace(/\?.*$/, '').replace(/\.js$/, ''));
        const target = [`${base}.ts`, join(base, 'index.ts')].find((path) => existsSync(path));
        if (target) targets.set(relative(ROOT, target), relative(ROOT, file));
      }
      graph.set(relative(ROOT, file), targets);
    }
  }
  return graph;
}

/** Calls that fill a process-wide registry: made by composition roots only, never on import. */
const REGISTRATIONS = /^(?:onItemsWritten|warmUpOnOpen|useSubscriptions|useEventData)\(/m;

describe('the import graph of the workspace', () => {
  const packages = workspacePackages();
  const graph = importGraph(packages);
  // The packages that assemble the domains: Lambda entries, the local runtime, operator tools, the seed.
  const COMPOSITION_ROOTS = new Set(packages.filter((pkg) => pkg.folder === 'apps').map((pkg) => pkg.name));

  it('reads every workspace package, the composition roots under apps/', () => {
    expect(packages.length).toBeGreaterThan(20);
    expect([...COMPOSITION_ROOTS].sort()).toEqual(['@svc/api', '@svc/local', '@svc/ops', '@svc/seed']);
    expect(graph.get('@svc/subscriptions')?.has('@svc/payments')).toBe(true);
  });

  it("declares in each package.json exactly what the package's source imports", () => {
    expect(packages.flatMap(undeclared)).toEqual([]);
    expect(
      packages.every((pkg) => Object.keys(pkg.dependencies).length + Object.keys(pkg.devDependencies).length > 0),
    ).toBe(true);
  });

  it('has no cycle between packages: each dependency points one way', () => {
    const cycles = cyclesOf(graph).map((cycle) =>
      cycle
        .slice(1)
        .map((to, index) => `${cycle[index]} → ${to} (${graph.get(cycle[index] ?? '')?.get(to)})`)
        .join(', '),
    );
    expect(cycles).toEqual([]);
  });

  it('has no import loop between modules: a module never reaches itself, even through import()', () => {
    const cycles = cyclesOf(moduleGraph(packages)).map((cycle) => cycle.join(' → '));
    expect(cycles).toEqual([]);
  });

  it('registers nothing on import: only composition roots fill the process-wide registries', () => {
    const registering = packages
      .filter((pkg) => !COMPOSITION_ROOTS.has(pkg.name))
      .flatMap((pkg) => sourceFiles(join(pkg.dir, 'src')))
      .filter((file) => REGISTRATIONS.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(registering).toEqual([]);
    const roots = packages
      .filter((pkg) => COMPOSITION_ROOTS.has(pkg.name))
      .flatMap((pkg) => sourceFiles(join(pkg.dir, 'src')))
      .filter((file) => REGISTRATIONS.test(readFileSync(file, 'utf8')));
    expect(roots.length).toBeGreaterThan(5);
  });

  it('keeps libraries below the domains: no package outside the composition roots imports a service', () => {
    const services = new Set(packages.filter((pkg) => pkg.folder === 'services').map((pkg) => pkg.name));
    const offending = packages
      .filter((pkg) => pkg.folder === 'packages')
      .flatMap((pkg) =>
        [...(graph.get(pkg.name) ?? new Map<string, string>())]
          .filter(([target]) => services.has(target) || COMPOSITION_ROOTS.has(target))
          .map(([target, file]) => `${pkg.name} → ${target} (${file})`),
      );
    expect(offending).toEqual([]);
  });

  it('lets webhooks build event data without importing the domains that own the objects', () => {
    const owners = ['@svc/payments', '@svc/subscriptions', '@svc/reconciliation', '@svc/onboarding'];
    const uses = graph.get('@svc/webhooks') ?? new Map<string, string>();
    expect(owners.filter((owner) => uses.has(owner))).toEqual([]);
    // Identity for tokens, organisations for grant checks (an endpoint's account must be the organisation's).
    expect([...uses.keys()].filter((target) => target.startsWith('@svc/') && !owners.includes(target))).toEqual(
      expect.arrayContaining(['@svc/identity', '@svc/organisations']),
    );
  });

  it('keeps the domains below the composition roots', () => {
    const offending = packages
      .filter((pkg) => pkg.folder === 'services')
      .flatMap((pkg) =>
        [...(graph.get(pkg.name) ?? new Map<string, string>())]
          .filter(([target]) => COMPOSITION_ROOTS.has(target))
          .map(([target, file]) => `${pkg.name} → ${target} (${file})`),
      );
    expect(offending).toEqual([]);
  });
});

/**
 * Type checks are `tsc -b` over project references: one project per workspace package (its source,
 * tests left out) referencing the packages it depends on, and `tsconfig.rest.json` for the tests,
 * the CDK app and the bench. A package that imports a workspace package its project does not
 * reference fails to type-check; these keep the projects to package.json and to every file.
 */
describe('the type-check projects', () => {
  const packages = workspacePackages();
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined };
  const parse = (path: string) => {
    const parsed = ts.getParsedCommandLineOfConfigFile(path, {}, host);
    if (!parsed) throw new Error(`Cannot read ${path}`);
    return parsed;
  };
  const configOf = (reference: ts.ProjectReference) =>
    reference.path.endsWith('.json') ? reference.path : join(reference.path, 'tsconfig.json');

  it("reference in each package's project exactly the workspace packages its package.json depends on", () => {
    const byDir = new Map(packages.map((pkg) => [pkg.dir, pkg.name]));
    const mismatched = packages.flatMap((pkg) => {
      const referenced = (parse(join(pkg.dir, 'tsconfig.json')).projectReferences ?? [])
        .map((reference) => byDir.get(reference.path) ?? reference.path)
        .sort();
      const declared = Object.keys(pkg.dependencies)
        .filter((name) => name.startsWith('@svc/'))
        .sort();
      return JSON.stringify(referenced) === JSON.stringify(declared)
        ? []
        : [
            `${pkg.name}: references ${referenced.join(', ') || 'nothing'}, depends on ${declared.join(', ') || 'nothing'}`,
          ];
    });
    expect(mismatched).toEqual([]);
  });

  it('put every TypeScript file of the repository in exactly one project of the solution', () => {
    const solution = parse(join(ROOT, 'tsconfig.json'));
    const owners = new Map<string, string[]>();
    for (const reference of solution.projectReferences ?? []) {
      for (const file of parse(configOf(reference)).fileNames) {
        owners.set(resolve(file), [...(owners.get(resolve(file)) ?? []), relative(ROOT, configOf(reference))]);
      }
    }
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((entry) => {
        const path = join(dir, entry);
        if (['node_modules', 'cdk.out', '.data'].includes(entry)) return [];
        return statSync(path).isDirectory() ? walk(path) : path.endsWith('.ts') ? [path] : [];
      });
    const files = [
      ...['packages', 'services', 'apps', 'infra', 'test', 'bench'].flatMap((folder) => walk(join(ROOT, folder))),
      join(ROOT, 'vitest.config.ts'),
      join(ROOT, 'vitest.conformance.config.ts'),
    ];
    expect(files.filter((file) => !owners.has(file)).map((file) => relative(ROOT, file))).toEqual([]);
    expect([...owners].filter(([, projects]) => projects.length > 1)).toEqual([]);
    expect(solution.projectReferences?.length).toBe(packages.length + 1);
  });
});

describe('the bench', () => {
  it('uses the packages through their entry points, never a path into their source', () => {
    const bench = join(ROOT, 'bench');
    const reaching = readdirSync(bench)
      .filter((entry) => entry.endsWith('.ts'))
      .flatMap((entry) =>
        [
          ...readFileSync(join(bench, entry), 'utf8').matchAll(
            /['"]((?:\.\.\/)+(?:packages|services|apps)\/[^'"]*)['"]/g,
          ),
        ].map((match) => `bench/${entry}: ${match[1]}`),
      );
    expect(reaching).toEqual([]);
  });
});

describe('the cycle finder', () => {
  const graphOf = (edges: Record<string, string[]>) =>
    new Map(Object.entries(edges).map(([from, to]) => [from, new Map(to.map((t) => [t, 'f.ts']))]));

  it('finds a two-package cycle, a longer one, and none in a tree', () => {
    expect(cyclesOf(graphOf({ a: ['b'], b: ['a'] }))).toEqual([['a', 'b', 'a']]);
    expect(cyclesOf(graphOf({ a: ['b'], b: ['c'], c: ['a'], d: ['a'] }))).toEqual([['a', 'b', 'c', 'a']]);
    expect(cyclesOf(graphOf({ a: ['b', 'c'], b: ['c'], c: [] }))).toEqual([]);
  });

  it('reads the relative imports that run, multi-line ones included, and leaves type-only ones out', () => {
    const source = [
      "import { a, type B } from './a';",
      'import {\n  c,\n  d,\n} from "../c";',
      "import type { E } from './e';",
      "export type { F } from './f';",
      "export * from './g';",
      "import './h';",
      "const m = await import('./i');",
      "import { z } from 'zod';",
    ].join('\n');
    expect(runtimeImportsOf(source)).toEqual(['./a', '../c', './g', './h', './i']);
  });

  it('reads static imports, re-exports, side-effect imports and dynamic imports, subpaths included', () => {
    const source = [
      "import { a } from '@svc/core';",
      "export { b } from '@svc/payments/lambda';",
      "import '@svc/table';",
      "const m = await import('@svc/subscriptions');",
      "import type { X } from 'zod';",
    ].join('\n');
    expect(importsOf(source)).toEqual(['@svc/core', '@svc/payments', '@svc/table', '@svc/subscriptions']);
  });
});

/**
 * The trust boundaries (issue 44; docs/security.md lists them): every route without a bearer
 * token is limited per caller address, and a provider's callback goes through the one binding
 * check that ties an event to the payment, account, mode and reference we stored.
 */
interface RouteFacts {
  method: string;
  path: string;
  auth: string;
  limit?: string | undefined;
}

/** The module every provider callback must reach (services/payments, issue 44 point 1). */
const PROVIDER_BINDING = 'services/payments/src/domain/provider-binding.ts';

const isProviderCallback = (route: RouteFacts) =>
  route.limit === 'provider-callback' || /^\/providers\/[^/]+\/(?:events|notifications)$/.test(route.path);

/** Unauthenticated routes without a per-address limit class, as `METHOD path`. */
function unlimited(routes: readonly RouteFacts[]): string[] {
  return routes
    .filter((route) => route.auth !== 'token' && !(route.limit !== undefined && route.limit in ADDRESS_LIMITS))
    .map((route) => `${route.method} ${route.path}`);
}

/** The source files that define a route with this path (`path: '…'`). */
function definingFiles(path: string): string[] {
  const literal = `path: '${path}'`;
  return ['services', 'apps']
    .flatMap((folder) => readdirSync(join(ROOT, folder)).map((name) => join(ROOT, folder, name, 'src')))
    .filter((dir) => existsSync(dir))
    .flatMap(sourceFiles)
    .filter((file) => readFileSync(file, 'utf8').includes(literal))
    .map((file) => relative(ROOT, file));
}

/** Whether `from` reaches `to` through the imports that run. */
function reaches(graph: Map<string, Map<string, string>>, from: string, to: string): boolean {
  const seen = new Set<string>();
  const queue = [from];
  while (queue.length > 0) {
    const node = queue.shift() ?? '';
    if (node === to) return true;
    if (seen.has(node)) continue;
    seen.add(node);
    queue.push(...(graph.get(node)?.keys() ?? []));
  }
  return false;
}

/** Provider callback routes whose defining module does not reach the binding check. */
function unbound(routes: readonly RouteFacts[], graph: Map<string, Map<string, string>>): string[] {
  return routes.filter(isProviderCallback).flatMap((route) => {
    const files = definingFiles(route.path);
    const bound = files.length > 0 && files.every((file) => reaches(graph, file, PROVIDER_BINDING));
    return bound ? [] : [`${route.method} ${route.path} (${files.join(', ') || 'no defining file found'})`];
  });
}

/** The page that lists every way in without a bearer token (issue 44 point 8). */
const SECURITY_DOC = 'docs/security.md';
/** A route as the table names it: `METHOD /path` in backticks, the path as the route table spells it. */
const NAMED_ROUTE = /`((?:GET|POST|PUT|PATCH|DELETE) \/[^`\s]*)`/g;

/**
 * The routes the trust-boundary table of docs/security.md names: the `METHOD /path` names in the
 * first cell of each row of its section "Trust boundaries" (a route the guard text mentions does
 * not count).
 */
function documentedRoutes(markdown: string): Set<string> {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Trust boundaries')) ?? '';
  const firstCells = section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((row) => row.split('|')[1] ?? '');
  return new Set(firstCells.flatMap((cell) => [...cell.matchAll(NAMED_ROUTE)].map((match) => match[1] ?? '')));
}

/**
 * Routes without a bearer token the table does not name (every one but the fallback, the pages
 * hidden from the API description included: they are as reachable), and names in the table that
 * are no such route (gone, renamed, or now behind a token).
 */
function undocumented(routes: readonly RouteFacts[], documented: ReadonlySet<string>) {
  const open = routes.filter((route) => route.auth !== 'token' && route.path !== '$default');
  const keys = new Set(open.map((route) => `${route.method} ${route.path}`));
  return {
    missing: [...keys].filter((key) => !documented.has(key)),
    stale: [...documented].filter((key) => !keys.has(key)),
  };
}

describe('the routes without a bearer token', () => {
  const routes: RouteFacts[] = ROUTE_TABLE.map(({ route }) => route);

  it('are each limited per caller address', () => {
    expect(routes.filter((r) => r.auth === 'none').length).toBeGreaterThan(20);
    expect(unlimited(routes)).toEqual([]);
  });

  it(`are each named in ${SECURITY_DOC}'s trust-boundary table as \`METHOD /path\`, and it names no other`, () => {
    const documented = documentedRoutes(readFileSync(join(ROOT, SECURITY_DOC), 'utf8'));
    expect(undocumented(routes, documented)).toEqual({ missing: [], stale: [] });
  });

  it(`catch a new one missing from ${SECURITY_DOC}, and a row for a route that is gone`, () => {
    const table = [
      '## Trust boundaries: every way in without a bearer token',
      '',
      '| route | who calls it | what guards it |',
      '| --- | --- | --- |',
      '| `POST /oauth2/token`, `GET /gone/{uuid}` | clients | the secret; see `POST /portal/login` |',
      '',
      '## Elsewhere',
      '',
      '| `GET /health` | | |',
    ].join('\n');
    const documented = documentedRoutes(table);
    expect([...documented]).toEqual(['POST /oauth2/token', 'GET /gone/{uuid}']);
    const facts: RouteFacts[] = [
      { method: 'POST', path: '/oauth2/token', auth: 'none', limit: 'credentials' },
      { method: 'POST', path: '/portal/login', auth: 'none', limit: 'address' },
      { method: 'GET', path: '/health', auth: 'none', limit: 'public-read' },
      { method: 'GET', path: '$default', auth: 'none', limit: 'public-read' },
      { method: 'GET', path: '/payments', auth: 'token' },
    ];
    expect(undocumented(facts, documented)).toEqual({
      missing: ['POST /portal/login', 'GET /health'],
      stale: ['GET /gone/{uuid}'],
    });
  });

  it('catch a new one without a limit', () => {
    const synthetic: RouteFacts = { method: 'POST', path: '/new/unguarded', auth: 'none' };
    expect(unlimited([...routes, synthetic])).toEqual(['POST /new/unguarded']);
    expect(unlimited([{ ...synthetic, limit: 'no-such-class' }])).toHaveLength(1);
  });

  it('take provider callbacks only through the shared binding check (provider-binding.ts)', () => {
    const callbacks = routes.filter(isProviderCallback).map((r) => r.path);
    expect(callbacks).toEqual(expect.arrayContaining(['/providers/stripe/events', '/providers/adyen/notifications']));
    expect(unbound(routes, moduleGraph(workspacePackages()))).toEqual([]);
  });

  it('catch a new provider callback whose module does not reach the binding check', () => {
    const graph = new Map([
      ['services/payments/src/handlers/stripe-routes.ts', new Map([[PROVIDER_BINDING, 'x']])],
      [PROVIDER_BINDING, new Map<string, string>()],
    ]);
    const synthetic: RouteFacts = { method: 'POST', path: '/providers/newpsp/events', auth: 'none', limit: 'address' };
    expect(unbound([synthetic], graph)).toEqual(['POST /providers/newpsp/events (no defining file found)']);
    expect(reaches(graph, 'services/payments/src/handlers/stripe-routes.ts', PROVIDER_BINDING)).toBe(true);
    expect(reaches(graph, 'services/payments/src/handlers/other.ts', PROVIDER_BINDING)).toBe(false);
  });
});
