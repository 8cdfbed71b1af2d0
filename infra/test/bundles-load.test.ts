import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ServiceFunction } from '../constructs/service-function';
import { tableGrantsOf } from '../constructs/table-access';
import { bundledSources, coldStartSources } from './support/bundle-files';
import { synthesized, templateOf, useSynthesizedApp } from './support/synth';
import { iamGlob } from './support/template-model';

useSynthesizedApp('as-deployed');

const lambdaFunction = z.object({
  Properties: z.object({
    Code: z.object({ S3Key: z.string() }),
    Environment: z.object({ Variables: z.record(z.string(), z.unknown()) }).optional(),
  }),
});

/** The directory the synthesised app keeps a function's asset in. */
const assetDir = (outdir: string, s3Key: string) => join(outdir, `asset.${s3Key.replace(/\.zip$/, '')}`);

/** A function's environment as its template sets it; a reference to a resource stands in as a plain string. */
const variablesOf = (environment: { Variables: Record<string, unknown> } | undefined) =>
  Object.fromEntries(
    Object.entries(environment?.Variables ?? {}).map(([name, value]) => [
      name,
      typeof value === 'string' ? value : `resolved-${name.toLowerCase()}`,
    ]),
  );

/** The S3 key of a ServiceFunction's asset in a stage's template. */
function s3KeyOf(fn: ServiceFunction, stage: 'dev' | 'prod'): string {
  const logicalId = Stack.of(fn).getLogicalId(fn.function.node.defaultChild as CfnFunction);
  return lambdaFunction.parse(templateOf(stage).findResources('AWS::Lambda::Function')[logicalId]).Properties.Code
    .S3Key;
}

/**
 * A script that imports the bundle's entry, then every chunk: what a cold start loads, then what
 * `import()` loads at first use (the Stripe SDK, the search engine's client), so a chunk that
 * needs a module the asset does not carry fails here too.
 */
function loadScript(dir: string): string {
  const chunks = existsSync(join(dir, 'chunks'))
    ? readdirSync(join(dir, 'chunks')).filter((file) => file.endsWith('.mjs'))
    : [];
  const files = [join(dir, 'index.mjs'), ...chunks.map((file) => join(dir, 'chunks', file))];
  return files.map((file) => `await import(${JSON.stringify(`file://${file}`)});`).join('\n');
}

/**
 * Every function of the synthesised app, its bundle loaded as the Lambda runtime loads it: in a
 * fresh Node process outside the repo (no node_modules to fall back on), with the variables its
 * template sets (a reference to a resource stands in as a plain string), calls traced as the
 * stage says. A bundle whose modules initialise in the wrong order, or that needs a file it does
 * not carry, fails here rather than at its first cold start in AWS.
 */
describe('every bundle of the app', () => {
  for (const stage of ['dev', 'prod'] as const) {
    it(`loads outside the repo with its template's environment (${stage})`, () => {
      const { outdir } = synthesized();
      const functions = Object.entries(templateOf(stage).findResources('AWS::Lambda::Function')).flatMap(
        ([logicalId, resource]) => {
          const parsed = lambdaFunction.safeParse(resource);
          if (!parsed.success) return [];
          const dir = assetDir(outdir, parsed.data.Properties.Code.S3Key);
          // Functions the CDK brings along (custom resource providers) carry no bundle of ours.
          if (!existsSync(join(dir, 'index.mjs'))) return [];
          return [{ logicalId, dir, ...parsed.data.Properties }];
        },
      );
      expect(functions.length).toBeGreaterThan(10);
      const failures: string[] = [];
      for (const fn of functions) {
        const { dir } = fn;
        const variables = variablesOf(fn.Environment);
        try {
          execFileSync(process.execPath, ['--input-type=module', '-e', loadScript(dir)], {
            cwd: '/',
            env: {
              PATH: process.env.PATH ?? '',
              AWS_REGION: 'eu-central-2',
              AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
              AWS_LAMBDA_FUNCTION_NAME: fn.logicalId,
              ...variables,
              NODE_OPTIONS: '',
            },
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'pipe'],
          });
        } catch (error) {
          const stderr = (error as { stderr?: string }).stderr ?? String(error);
          failures.push(
            `${fn.logicalId}: ${stderr.split('\n').find((line) => /Error/.test(line)) ?? stderr.slice(0, 300)}`,
          );
        }
      }
      expect(failures).toEqual([]);
    }, 300_000);
  }
});

describe('every function’s asset', () => {
  it('is built from that function’s own entry, whatever other functions share a build (prod)', () => {
    const { outdir, stacks } = synthesized();
    const stack = stacks.get('prod');
    if (!stack) throw new Error('no prod stack');
    const ours = stack.node.findAll().filter((node): node is ServiceFunction => node instanceof ServiceFunction);
    expect(ours.length).toBeGreaterThan(10);
    const assetOf = new Map<string, string>();
    for (const fn of ours) {
      const S3Key = s3KeyOf(fn, 'prod');
      const dir = assetDir(outdir, S3Key);
      // The entry is the module the bundle starts from; a build of another entry would not hold it.
      expect(
        bundledSources(dir).some((source) => source.endsWith(`/${fn.entry}`)),
        `${fn.node.path} (${fn.entry})`,
      ).toBe(true);
      assetOf.set(`${fn.entry} ${JSON.stringify(fn.bundleTime ?? {})}`, S3Key);
    }
    // Different entries never share an asset.
    expect(new Set(assetOf.values()).size).toBe(assetOf.size);
  });
});

describe('Tracer in every function’s asset', () => {
  const assetDirs = (stage: 'dev' | 'prod') => {
    const { outdir } = synthesized();
    return new Set(
      Object.values(templateOf(stage).findResources('AWS::Lambda::Function')).flatMap((resource) => {
        const parsed = lambdaFunction.safeParse(resource);
        if (!parsed.success) return [];
        const dir = assetDir(outdir, parsed.data.Properties.Code.S3Key);
        return existsSync(join(dir, 'index.mjs')) ? [dir] : [];
      }),
    );
  };
  const inCode = (dir: string) =>
    bundledSources(dir).some((source) => /aws-xray-sdk-core|powertools\/tracer\//.test(source));
  const beside = (dir: string) =>
    ['package.json', 'index.js', 'middleware.js'].every((file) =>
      existsSync(join(dir, 'node_modules', '@aws-lambda-powertools', 'tracer', file)),
    );

  it('is a package beside the code where the stage does not trace (dev): an untraced cold start never reads it', () => {
    const dirs = assetDirs('dev');
    expect(dirs.size).toBeGreaterThan(10);
    for (const dir of dirs) {
      expect(inCode(dir), dir).toBe(false);
      expect(beside(dir), dir).toBe(true);
    }
  });

  it('is read from beside the code by a dev function switched to tracing by hand, code and middleware', () => {
    const { outdir } = synthesized();
    const fn = Object.values(templateOf('dev').findResources('AWS::Lambda::Function'))
      .map((resource) => lambdaFunction.safeParse(resource))
      .flatMap((parsed) => (parsed.success ? [parsed.data.Properties] : []))
      .find((properties) => properties.Environment?.Variables.POWERTOOLS_SERVICE_NAME === 'payments');
    if (!fn) throw new Error('no dev payments function');
    const dir = assetDir(outdir, fn.Code.S3Key);
    const variables = variablesOf(fn.Environment);
    const entry = join(dir, 'index.mjs');
    const script = `import { createRequire } from 'node:module';
await import(${JSON.stringify(`file://${entry}`)});
const cache = createRequire(${JSON.stringify(entry)}).cache;
process.stdout.write(JSON.stringify(Object.keys(cache).filter((file) => file.includes('@aws-lambda-powertools/tracer'))));`;
    const loaded = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: '/',
        env: {
          PATH: process.env.PATH ?? '',
          AWS_REGION: 'eu-central-2',
          AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
          _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
          ...variables,
          SVC_TRACE_CALLS: 'true',
          NODE_OPTIONS: '',
        },
        encoding: 'utf8',
      }),
    ) as string[];
    const beside = join(dir, 'node_modules', '@aws-lambda-powertools', 'tracer');
    expect(loaded.sort()).toEqual([join(beside, 'index.js'), join(beside, 'middleware.js')]);
  });

  it('is in the code where the stage traces (prod), where it loads fastest', () => {
    const dirs = assetDirs('prod');
    expect(dirs.size).toBeGreaterThan(10);
    for (const dir of dirs) {
      expect(inCode(dir), dir).toBe(true);
      expect(beside(dir), dir).toBe(false);
    }
  });
});

describe('what a cold start reads', () => {
  /** The asset of the prod function built from `entry`. */
  const assetOf = (entry: string) => {
    const { outdir, stacks } = synthesized();
    const stack = stacks.get('prod');
    if (!stack) throw new Error('no prod stack');
    const fn = stack.node
      .findAll()
      .find((node): node is ServiceFunction => node instanceof ServiceFunction && node.entry === entry);
    if (!fn) throw new Error(`no function built from ${entry}`);
    return assetDir(outdir, s3KeyOf(fn, 'prod'));
  };

  /**
   * Code the function carries but loads at its first use, not at cold start: [entry, what, source
   * pattern]. Each is in the asset (the test would pass vacuously otherwise) and outside the
   * modules a cold start reads.
   */
  const loadedAtFirstUse: [string, string, RegExp][] = [
    [
      'apps/api/src/payments-lambda.ts',
      'the subscriptions domain (a payment that starts one), but for its read-your-writes listener',
      /services\/subscriptions\/src\/(?!search\/read-your-writes\.ts$)/,
    ],
    ['apps/api/src/payments-lambda.ts', 'luxon (subscription calendars)', /node_modules\/luxon\//],
    ['apps/api/src/payments-lambda.ts', 'the Stripe SDK', /node_modules\/stripe\//],
    ['apps/api/src/payments-lambda.ts', 'the search engine’s query builder', /node_modules\/kysely\//],
    ['services/reconciliation/src/handlers/lambda.ts', 'the S3 SDK (uploads, results)', /@aws-sdk\/client-s3\//],
    ['services/reconciliation/src/handlers/lambda.ts', 'the presigned POST', /@aws-sdk\/s3-presigned-post\//],
  ];

  for (const [entry, what, pattern] of loadedAtFirstUse) {
    it(`${entry}: ${what}`, () => {
      const dir = assetOf(entry);
      expect(bundledSources(dir).some((source) => pattern.test(source))).toBe(true);
      expect(coldStartSources(dir).filter((source) => pattern.test(source))).toEqual([]);
    });
  }
});

/**
 * Read-your-writes is wired by each Lambda entry (no module registers a listener on import): a
 * function allowed to write the partitions of a searched item must project what it writes before
 * it answers, or a search right after its 201 would miss the item until the stream catches up.
 */
describe('read-your-writes for searches', () => {
  const SEARCHED = [
    { domain: 'payments', partitions: ['PAYMENT#'] },
    { domain: 'subscriptions', partitions: ['SUBSCRIPTION#', 'PLAN#'] },
    { domain: 'organisations', partitions: ['ORG#'] },
  ];

  it('is wired at cold start into every function that may write a searched item', () => {
    const { outdir, stacks } = synthesized();
    const stack = stacks.get('prod');
    if (!stack) throw new Error('no prod stack');
    const functions = stack.node.findAll().filter((node): node is ServiceFunction => node instanceof ServiceFunction);
    const required: string[] = [];
    const missing: string[] = [];
    for (const fn of functions) {
      const writeKeys = tableGrantsOf(fn.role).flatMap((grant) => grant.writeKeys);
      const sources = coldStartSources(assetDir(outdir, s3KeyOf(fn, 'prod')));
      for (const { domain, partitions } of SEARCHED) {
        if (!writeKeys.some((pattern) => partitions.some((prefix) => iamGlob(pattern, `${prefix}x`)))) continue;
        required.push(`${fn.entry}: ${domain}`);
        const listener = `services/${domain}/src/search/read-your-writes.ts`;
        if (!sources.some((source) => source.endsWith(listener))) missing.push(`${fn.entry}: ${domain}`);
      }
    }
    expect(missing).toEqual([]);
    // Payments, subscriptions, organisations, webhooks, onboarding, the billing worker, the resolver.
    expect(required.length).toBeGreaterThanOrEqual(12);
  });
});
