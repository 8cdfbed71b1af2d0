import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DOMAINS, platformBundling } from '@svc/api';
import { build } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '..');

/** The bundle options of the Lambda functions (ESM, minified, Node 22, everything bundled). */
async function bundle(
  entry: string,
  outfile: string,
  bundleTime: { define?: Record<string, string>; alias?: Record<string, string> } = {},
): Promise<number> {
  await build({
    ...bundleTime,
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    minify: true,
    sourcemap: false,
    mainFields: ['module', 'main'],
    external: ['@electric-sql/pglite'],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'silent',
  });
  return statSync(outfile).size;
}

/** Median time to import a bundle in a fresh Node process (what a cold start pays for init). */
function importMs(file: string, runs: number, env: Record<string, string> = {}): number {
  const script = `const t=performance.now();await import(${JSON.stringify(`file://${file}`)});process.stdout.write(String(performance.now()-t));`;
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: {
        ...process.env,
        SVC_TABLE_NAME: 'bench',
        AWS_REGION: 'eu-central-2',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...env,
      },
      encoding: 'utf8',
    });
    samples.push(Number(out));
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] ?? 0;
}

export interface InitFigure {
  bundle: string;
  bytes: number;
  initMs: number;
  ratio: number;
  /** The same bundle where the stage traces calls (staging, prod: Powertools Tracer loaded). */
  tracedInitMs?: number;
  tracedRatio?: number;
}

/**
 * What a traced stage's function sees at init: its switch, and the variables by which Tracer
 * knows it runs in Lambda (not AWS_LAMBDA_FUNCTION_NAME: with it our code demands the deployed
 * secrets' ARNs at cold start).
 */
const TRACED_ENV = {
  SVC_TRACE_CALLS: 'true',
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
  _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
};

export async function measureInit(runs = 15): Promise<InitFigure[]> {
  const dir = join(ROOT, 'bench', 'results', 'bundles');
  mkdirSync(dir, { recursive: true });
  const bareEntry = join(dir, 'bare-entry.mjs');
  writeFileSync(
    bareEntry,
    "import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';\nconst client = new DynamoDBClient({});\nexport const handler = (e) => client.send(new GetItemCommand(e));\n",
  );
  const bareFile = join(dir, 'bare.mjs');
  const bareBytes = await bundle(bareEntry, bareFile);
  const bareMs = importMs(bareFile, runs);
  const figures: InitFigure[] = [{ bundle: 'bare DynamoDB client', bytes: bareBytes, initMs: bareMs, ratio: 1 }];
  for (const [name, { entry }] of Object.entries(DOMAINS)) {
    const file = join(dir, `${name}.mjs`);
    // The platform bundle as the CDK app builds it: with its API description fixed at bundle time.
    // (Its description and the reference's static files go beside the bundle, not into the code:
    // left out here, as a cold start does not read them.)
    const { files: _files, ...atBundleTime } = name === 'platform' ? platformBundling(ROOT) : { files: {} };
    const bytes = await bundle(join(ROOT, entry), file, atBundleTime);
    const ms = importMs(file, runs);
    const traced = importMs(file, runs, TRACED_ENV);
    figures.push({
      bundle: name,
      bytes,
      initMs: ms,
      ratio: ms / bareMs,
      tracedInitMs: traced,
      tracedRatio: traced / bareMs,
    });
  }
  return figures;
}
