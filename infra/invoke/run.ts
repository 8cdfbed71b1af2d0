import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Plugin } from 'esbuild';
import { BUNDLE, BUNDLE_ENTRY, buildFunction } from '../constructs/bundle';
import { REPO_ROOT } from '../constructs/repo-paths';
import type { AppFunction } from './app-functions';

/**
 * Runs one function as Lambda runs it: its handler bundled from the same entry with the same
 * esbuild settings as the template's asset, loaded in a fresh Node process with the variables the
 * template sets (the resources they name resolved to the local stand-ins), handed one event and a
 * Lambda context. What it logs goes to `logs`; its result (or error) comes back.
 */
const CACHE = join(REPO_ROOT, 'node_modules', '.cache', 'svc-invoke');

/**
 * The externals of the bundle, resolved to files here: in AWS they are never loaded (the
 * embedded search engine), locally the bundle runs outside node_modules and still finds them.
 */
function localExternals(): Plugin {
  const require = createRequire(join(REPO_ROOT, 'package.json'));
  return {
    name: 'local-externals',
    setup(context) {
      const names = new RegExp(`^(${BUNDLE.externalModules.map((m) => m.replace(/[/.]/g, '\\$&')).join('|')})(/.*)?$`);
      context.onResolve({ filter: names }, (args) => ({
        path: pathToFileURL(require.resolve(args.path)).href,
        external: true,
      }));
    },
  };
}

/**
 * Bundles the function as its template's asset is bundled, into a directory of its own (two
 * invocations at once never share one); answers the bundle's path.
 */
export async function bundleFunction(fn: AppFunction): Promise<string> {
  mkdirSync(CACHE, { recursive: true });
  const dir = mkdtempSync(join(CACHE, `${fn.logicalId}-`));
  await buildFunction(join(REPO_ROOT, fn.entry), dir, fn.bundleTime, fn.tracerPlacement, {
    plugins: [localExternals()],
  });
  return join(dir, BUNDLE_ENTRY);
}

export interface FunctionEnvironment {
  variables: Record<string, string>;
  /** Variables the template sets to a resource that has no local stand-in: left unset. */
  unset: string[];
}

/**
 * The function's variables: the template's plain values, with the local stand-ins' values for
 * the names the local runtime sets (table, queues, bucket, bus, stage `local` whose defaults
 * replace the secrets), and the SDK's endpoints, region and dummy credentials.
 */
export function functionEnvironment(fn: AppFunction, local: Record<string, string>): FunctionEnvironment {
  const variables: Record<string, string> = {};
  const unset: string[] = [];
  for (const [name, value] of Object.entries(fn.environment)) {
    if (local[name] !== undefined) variables[name] = local[name];
    else if (typeof value === 'string') variables[name] = value;
    else unset.push(name);
  }
  const all = { ...local, ...variables };
  // The function runs in its bundle's directory: a relative data directory would be another one.
  if (all.SVC_DATA_DIR && all.SVC_DATA_DIR !== ':memory:') all.SVC_DATA_DIR = resolve(all.SVC_DATA_DIR);
  return { variables: all, unset };
}

/** The child's program: loads the bundle, calls its handler once, writes the outcome. */
const RUNNER = `
import { readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
const [bundle, eventFile, resultFile, name, memory, timeout] = process.argv.slice(2);
const started = Date.now();
const deadline = started + Number(timeout) * 1000;
const context = {
  callbackWaitsForEmptyEventLoop: true,
  functionName: name,
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:' + (process.env.AWS_REGION ?? 'eu-central-2') + ':000000000000:function:' + name,
  memoryLimitInMB: memory,
  awsRequestId: randomUUID(),
  logGroupName: '/aws/lambda/' + name,
  logStreamName: 'local',
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  done() {}, fail() {}, succeed() {},
};
let outcome;
try {
  const { handler } = await import(bundle);
  const result = await handler(JSON.parse(readFileSync(eventFile, 'utf8')), context);
  outcome = { ok: true, result: result === undefined ? null : result };
} catch (error) {
  outcome = { ok: false, error: { name: error?.name ?? 'Error', message: error?.message ?? String(error), stack: error?.stack } };
}
writeFileSync(resultFile, JSON.stringify(outcome), { mode: 0o600 });
process.exit(0);
`;

export interface Invocation {
  /** The handler returned (and reported no failed batch item). */
  ok: boolean;
  result?: unknown;
  error?: { name: string; message: string; stack?: string };
  /** The batch items the handler reported failed (`batchItemFailures`). */
  failedItems: string[];
  unset: string[];
  durationMs: number;
}

export interface InvokeOptions {
  event: unknown;
  /** The local stand-ins' variables (the running service's, or those started for this call). */
  local: Record<string, string>;
  /** Where the function's own output (its structured logs) goes. */
  logs: NodeJS.WritableStream;
}

export async function invokeFunction(fn: AppFunction, options: InvokeOptions): Promise<Invocation> {
  const bundle = await bundleFunction(fn);
  const dir = dirname(bundle);
  try {
    return await runOnce(fn, bundle, options);
  } finally {
    // The event and the result may be production data (a pulled dead letter): nothing stays behind.
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runOnce(fn: AppFunction, bundle: string, options: InvokeOptions): Promise<Invocation> {
  const dir = dirname(bundle);
  const runner = join(dir, 'runner.mjs');
  const eventFile = join(dir, 'event.json');
  const resultFile = join(dir, 'result.json');
  writeFileSync(runner, RUNNER);
  writeFileSync(eventFile, JSON.stringify(options.event), { mode: 0o600 });
  const { variables, unset } = functionEnvironment(fn, options.local);
  const started = Date.now();
  let timedOut = false;
  const ended = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done, fail) => {
    const child = spawn(
      process.execPath,
      [
        runner,
        pathToFileURL(bundle).href,
        eventFile,
        resultFile,
        fn.logicalId,
        String(fn.memoryMb),
        String(fn.timeoutSeconds),
      ],
      {
        cwd: dir,
        // Only what Lambda's runtime sets and what the template sets (resolved to the local
        // stand-ins): nothing else of this shell reaches the function.
        env: {
          PATH: process.env.PATH ?? '',
          TZ: 'UTC',
          LAMBDA_TASK_ROOT: dir,
          AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
          // Not AWS_LAMBDA_FUNCTION_NAME: the code reads it as "deployed" and then refuses to run without
          // the secrets' ARNs, where here the local stand-ins replace them (as under `pnpm start`).
          AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
          AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
          // Lambda runs Node 22; the SDK's notice about this machine's Node 20 is no log of the function's.
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          ...variables,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout.pipe(options.logs, { end: false });
    child.stderr.pipe(options.logs, { end: false });
    // Lambda stops a function at its timeout; so does this, with a second for the process to start.
    const timer = setTimeout(
      () => {
        timedOut = true;
        child.kill('SIGKILL');
      },
      (fn.timeoutSeconds + 1) * 1000,
    );
    child.on('error', (error) => {
      clearTimeout(timer);
      fail(error);
    });
    // `close`, not `exit`: the function's last log lines are through by then.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal });
    });
  });
  const durationMs = Date.now() - started;
  let outcome: { ok: boolean; result?: unknown; error?: Invocation['error'] };
  try {
    outcome = JSON.parse(readFileSync(resultFile, 'utf8'));
  } catch {
    outcome = {
      ok: false,
      error: timedOut
        ? { name: 'TimeoutError', message: `Task timed out after ${fn.timeoutSeconds} seconds` }
        : {
            name: 'RuntimeExitError',
            message: `The function's process ended (${ended.signal ? `signal ${ended.signal}` : `exit code ${ended.code}`}) before it answered`,
          },
    };
  }
  const failedItems = (
    (outcome.result as { batchItemFailures?: Array<{ itemIdentifier: string }> } | null | undefined)
      ?.batchItemFailures ?? []
  ).map((item) => item.itemIdentifier);
  return { ...outcome, ok: outcome.ok && failedItems.length === 0, failedItems, unset, durationMs };
}
