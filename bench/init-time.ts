import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DOMAINS, platformBundling } from '@svc/api';
import {
  BUNDLE_ENTRY,
  type BundleTime,
  buildFunction,
  bytesAtInit,
  type TracerPlacement,
} from '../infra/constructs/bundle';

const ROOT = resolve(import.meta.dirname, '..');

/**
 * Builds an entry as the CDK app builds a function's asset (`buildFunction`: code splitting;
 * Tracer inside the code where the stage traces calls, beside it where not) and answers its entry
 * module and the bytes a cold start reads (the entry and its static chunks).
 */
async function bundle(
  entry: string,
  outdir: string,
  bundleTime: BundleTime | undefined,
  tracer: TracerPlacement,
): Promise<{ file: string; bytes: number }> {
  rmSync(outdir, { recursive: true, force: true });
  const metafile = await buildFunction(entry, outdir, bundleTime, tracer, { logLevel: 'silent' });
  return { file: join(outdir, BUNDLE_ENTRY), bytes: bytesAtInit(metafile, outdir) };
}

/** Time to import a bundle in a fresh Node process (what a cold start pays for init), in ms. */
function importMs(file: string, env: Record<string, string> = {}): number {
  const script = `const t=performance.now();await import(${JSON.stringify(`file://${file}`)});process.stdout.write(String(performance.now()-t));`;
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
  return Number(out);
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

export interface InitFigure {
  bundle: string;
  bytes: number;
  initMs: number;
  ratio: number;
  /** The same bundle where the stage traces calls (staging, prod: Powertools Tracer loaded). */
  tracedInitMs?: number;
  /** Traced, to the bare bundle (untraced). */
  tracedRatio?: number;
  /** Traced, to the bare bundle traced the same way: what our code adds in a traced stage. */
  tracedToTracedBare?: number;
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

/**
 * Every bundle imported once per round, the rounds one after another: this machine's speed drifts
 * by a third within minutes, so each ratio is the median of ratios to the bare bundle measured in
 * the same round, not of medians taken minutes apart.
 */
export async function measureInit(runs = 15): Promise<InitFigure[]> {
  const dir = join(ROOT, 'bench', 'results', 'bundles');
  mkdirSync(dir, { recursive: true });
  const bareEntry = join(dir, 'bare-entry.mjs');
  writeFileSync(
    bareEntry,
    "import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';\nconst client = new DynamoDBClient({});\nexport const handler = (e) => client.send(new GetItemCommand(e));\n",
  );
  const bare = await bundle(bareEntry, join(dir, 'bare'), undefined, 'beside');
  // The least a function of a traced stage loads: the client, captured by Tracer (calls and
  // outbound HTTPS, as packages/core/src/tracing.ts makes it).
  const tracedBareEntry = join(dir, 'traced-bare-entry.mjs');
  writeFileSync(
    tracedBareEntry,
    "import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';\nimport { Tracer } from '@aws-lambda-powertools/tracer';\nconst tracer = new Tracer({ captureHTTPsRequests: true });\nconst client = tracer.captureAWSv3Client(new DynamoDBClient({}));\nexport const handler = (e) => client.send(new GetItemCommand(e));\n",
  );
  const tracedBare = await bundle(tracedBareEntry, join(dir, 'traced-bare'), undefined, 'bundled');
  const domains: { name: string; file: string; bytes: number; tracedFile: string }[] = [];
  for (const [name, { entry }] of Object.entries(DOMAINS)) {
    // The platform bundle as the CDK app builds it: with its API description fixed at bundle time.
    // (Its description and the reference's static files go beside the bundle, not into the code:
    // left out here, as a cold start does not read them.)
    const atBundleTime = name === 'platform' ? platformBundling(ROOT) : undefined;
    const untraced = await bundle(join(ROOT, entry), join(dir, name), atBundleTime, 'beside');
    const traced = await bundle(join(ROOT, entry), join(dir, `${name}-traced`), atBundleTime, 'bundled');
    domains.push({ name, ...untraced, tracedFile: traced.file });
  }
  const bareMs: number[] = [];
  const tracedBareMs: number[] = [];
  const samples = new Map(
    domains.map((d) => [
      d.name,
      {
        ms: [] as number[],
        ratio: [] as number[],
        tracedMs: [] as number[],
        tracedRatio: [] as number[],
        tracedToTracedBare: [] as number[],
      },
    ]),
  );
  for (let round = 0; round < runs; round++) {
    const base = importMs(bare.file);
    const tracedBase = importMs(tracedBare.file, TRACED_ENV);
    bareMs.push(base);
    tracedBareMs.push(tracedBase);
    for (const domain of domains) {
      const figures = samples.get(domain.name);
      if (!figures) continue;
      const ms = importMs(domain.file);
      const traced = importMs(domain.tracedFile, TRACED_ENV);
      figures.ms.push(ms);
      figures.ratio.push(ms / base);
      figures.tracedMs.push(traced);
      figures.tracedRatio.push(traced / base);
      figures.tracedToTracedBare.push(traced / tracedBase);
    }
  }
  return [
    {
      bundle: 'bare DynamoDB client',
      bytes: bare.bytes,
      initMs: median(bareMs),
      ratio: 1,
      tracedInitMs: median(tracedBareMs),
      tracedRatio: median(tracedBareMs.map((ms, round) => ms / (bareMs[round] ?? ms))),
      tracedToTracedBare: 1,
    },
    ...domains.map((domain) => {
      const figures = samples.get(domain.name);
      return {
        bundle: domain.name,
        bytes: domain.bytes,
        initMs: median(figures?.ms ?? []),
        ratio: median(figures?.ratio ?? []),
        tracedInitMs: median(figures?.tracedMs ?? []),
        tracedRatio: median(figures?.tracedRatio ?? []),
        tracedToTracedBare: median(figures?.tracedToTracedBare ?? []),
      };
    }),
  ];
}
