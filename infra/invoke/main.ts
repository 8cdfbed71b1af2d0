import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { localHashKey, readRuntimeFile, readSettings, startLocalStores } from '@svc/local';
import { type AppFunction, appFunctions, findFunction, isStage } from './app-functions';
import { invokeFunction } from './run';
import { sampleEvent } from './samples';

// The local stores' SDK clients in this process: Lambda runs Node 22, this machine may run 20.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE = `Runs one function of the CDK app locally, as Lambda runs it.

  pnpm invoke --list [--stage dev]              the app's functions and the event each takes
  pnpm invoke --sample <function> [--out FILE]  a sample event for it
  pnpm invoke <function> [--event FILE | -]     run it with that event (default: its sample)

  <function>    its construct path without the stack (Billing/Worker), or its logical id
  --stage       the stage whose template is read (dev, staging, prod; default dev)
  --data-dir    the local data directory (default SVC_DATA_DIR or .data); a running \`pnpm start\`
                on it is used, else its stores start for the call

The result is printed as JSON on stdout (\`pnpm -s invoke\` keeps pnpm's own lines out of it),
the function's logs on stderr. Exit code 1 when the
handler throws or reports failed batch items (printed).`;

/** Secrets the local runtime reads from the shell it starts in; a function run here reads them the same way. */
const LOCAL_SECRETS = [
  'SVC_STRIPE_TEST_SECRET_KEY',
  'SVC_STRIPE_LIVE_SECRET_KEY',
  'SVC_STRIPE_WEBHOOK_SECRET',
  'SVC_STRIPE_API_BASE',
];

const short = (fn: AppFunction) => fn.path.split('/').slice(1).join('/');

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      list: { type: 'boolean' },
      sample: { type: 'string' },
      event: { type: 'string' },
      out: { type: 'string' },
      stage: { type: 'string', default: 'dev' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || (!values.list && !values.sample && positionals.length !== 1)) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  const stage = values.stage;
  if (!isStage(stage)) throw new Error(`Unknown stage ${stage}: dev, staging or prod`);
  const functions = appFunctions(stage);
  if (values.list) {
    const width = Math.max(...functions.map((fn) => short(fn).length));
    for (const fn of functions) {
      console.log(`${short(fn).padEnd(width)}  ${fn.kind.padEnd(15)}  ${fn.logicalId}`);
    }
    return 0;
  }
  if (values.sample) {
    const text = `${JSON.stringify(sampleEvent(findFunction(functions, values.sample)), null, 2)}\n`;
    if (values.out) writeFileSync(values.out, text);
    else process.stdout.write(text);
    return 0;
  }
  const fn = findFunction(functions, positionals[0] as string);
  const given = readSettings({ ...process.env, ...(values['data-dir'] ? { SVC_DATA_DIR: values['data-dir'] } : {}) });
  // The function runs in its bundle's directory: the data directory must be a path from there too.
  const settings = given.inMemory ? given : { ...given, dataDir: resolve(given.dataDir) };
  const running = settings.inMemory ? undefined : readRuntimeFile(settings.dataDir);
  if (running && !running.environment)
    throw new Error('The running `pnpm start` is older than `pnpm invoke`: restart it');
  // The embedded search engine is one process's: a running service holds it.
  if (running && 'SVC_SEARCH_CLUSTER_ARN' in fn.environment) {
    throw new Error(`${short(fn)} uses the search engine, which the running \`pnpm start\` holds open: stop it first`);
  }
  const stores = running ? undefined : await startLocalStores(settings);
  // Stopped or interrupted, the stores started here stop too (DynamoDB Local is a Java process of its own).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void (stores?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
    });
  }
  try {
    const local = {
      ...(running?.environment ?? stores?.environment() ?? {}),
      // The local stand-ins of the secrets, never written in the runtime file: the data directory's
      // hash key (as `pnpm start` uses it), and the Stripe keys of this shell (as `pnpm start` reads them).
      SVC_HASH_KEY: process.env.SVC_HASH_KEY ?? localHashKey(settings.dataDir),
      ...Object.fromEntries(
        LOCAL_SECRETS.flatMap((name) => (process.env[name] ? [[name, process.env[name] as string]] : [])),
      ),
    };
    const event =
      values.event === undefined
        ? sampleEvent(fn, local)
        : JSON.parse(readFileSync(values.event === '-' ? 0 : values.event, 'utf8'));
    const invocation = await invokeFunction(fn, { event, local, logs: process.stderr });
    if (invocation.unset.length > 0) {
      console.error(`(no local stand-in, left unset: ${invocation.unset.join(', ')})`);
    }
    if (invocation.error) {
      console.error(
        `${short(fn)} threw after ${invocation.durationMs} ms: ${invocation.error.stack ?? invocation.error.message}`,
      );
      return 1;
    }
    process.stdout.write(`${JSON.stringify(invocation.result, null, 2)}\n`);
    if (invocation.failedItems.length > 0) {
      console.error(
        `${short(fn)} reported ${invocation.failedItems.length} failed batch item(s): ${invocation.failedItems.join(', ')}`,
      );
      return 1;
    }
    console.error(`${short(fn)} answered in ${invocation.durationMs} ms`);
    return 0;
  } finally {
    await stores?.stop();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
