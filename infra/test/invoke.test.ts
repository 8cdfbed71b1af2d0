import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type LocalStores, readSettings, startLocalStores } from '@svc/local';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../constructs/repo-paths';
import { type AppFunction, appFunctions, type EventKind } from '../invoke/app-functions';
import { functionEnvironment, invokeFunction } from '../invoke/run';
import { sampleEvent } from '../invoke/samples';
import { templateOf, useSynthesizedApp } from './support/synth';

/**
 * `pnpm invoke`: every function of the app, found in the template with what starts it, bundled as
 * its asset is, and run in its own process with its sample event against the local stores.
 */
useSynthesizedApp();
let functions: AppFunction[];
let stores: LocalStores;
const dataDir = mkdtempSync(join(tmpdir(), 'svc-invoke-test-'));

beforeAll(async () => {
  functions = appFunctions('dev');
  stores = await startLocalStores(readSettings({ SVC_DATA_DIR: dataDir, SVC_TABLE_NAME: 'svc-invoke-test' }));
}, 120_000);

afterAll(async () => {
  await stores?.stop();
});

const EVENT_FILES: Record<EventKind, string> = {
  api: 'api-gateway-v2.json',
  sqs: 'sqs.json',
  's3-via-sqs': 's3-via-sqs.json',
  'dynamodb-stream': 'dynamodb-stream.json',
  schedule: 'scheduler.json',
  'custom-resource': 'custom-resource.json',
};

describe('pnpm invoke', () => {
  it('finds every function of the template that runs our code, with what starts it', () => {
    const ours = Object.entries(templateOf('dev').findResources('AWS::Lambda::Function'))
      .filter(([, resource]) => 'POWERTOOLS_SERVICE_NAME' in (resource.Properties.Environment?.Variables ?? {}))
      .map(([logicalId]) => logicalId)
      .sort();
    expect(functions.map((fn) => fn.logicalId).sort()).toEqual(ours);
    const kinds = Object.fromEntries(functions.map((fn) => [fn.path.split('/').slice(1).join('/'), fn.kind]));
    expect(kinds).toMatchObject({
      'Domain-payments': 'api',
      'Billing/Run': 'schedule',
      'Billing/Worker': 'sqs',
      'Events/StreamPublisher': 'dynamodb-stream',
      'Search/Projector': 'dynamodb-stream',
      'Reconciliation/FileProcessor': 's3-via-sqs',
      'Search/Migrator': 'custom-resource',
    });
    expect(functions.find((fn) => fn.kind === 'api' && fn.routes.includes('POST /payments'))?.path).toMatch(
      /Domain-payments$/,
    );
    // The whole app's synth with every asset built: two builds per function (Tracer inside the
    // code for the traced stages, beside it for dev), slow on a loaded machine.
  }, 120_000);

  it('keeps one sample of each kind in events/, as the samples are built today', () => {
    const files = readdirSync(join(REPO_ROOT, 'events')).sort();
    expect(files).toEqual(Object.values(EVENT_FILES).sort());
    const first = (kind: EventKind) => functions.find((fn) => fn.kind === kind) as AppFunction;
    for (const [kind, file] of Object.entries(EVENT_FILES) as Array<[EventKind, string]>) {
      const kept = JSON.parse(readFileSync(join(REPO_ROOT, 'events', file), 'utf8'));
      expect(kept, `events/${file}: \`pnpm invoke --sample <function> --out events/${file}\``).toEqual(
        JSON.parse(JSON.stringify(sampleEvent(first(kind), { SVC_RECONCILIATION_BUCKET: 'svc-reconciliation' }))),
      );
    }
  });

  it('runs every function with its sample event against the local stores, and each returns', async () => {
    const failures: string[] = [];
    const answers: Record<string, unknown> = {};
    for (const fn of functions) {
      const logs: Buffer[] = [];
      const sink = new (await import('node:stream')).Writable({
        write(chunk, _encoding, done) {
          logs.push(Buffer.from(chunk));
          done();
        },
      });
      const invocation = await invokeFunction(fn, {
        event: sampleEvent(fn, stores.environment()),
        local: stores.environment(),
        logs: sink,
      });
      answers[fn.path] = invocation.result;
      const status = (invocation.result as { statusCode?: number } | null)?.statusCode;
      if (fn.kind === 'api' && !(typeof status === 'number' && status < 500)) {
        failures.push(`${fn.path} answered ${status}\n${Buffer.concat(logs).toString().slice(-1500)}`);
      }
      if (invocation.error) {
        failures.push(`${fn.path}: ${invocation.error.message}\n${Buffer.concat(logs).toString().slice(-1500)}`);
      }
    }
    expect(failures).toEqual([]);
    // The platform's sample is its health check, answered for real.
    const platform = answers[functions.find((fn) => fn.path.endsWith('Domain-platform'))?.path ?? ''] as {
      statusCode: number;
    };
    expect(platform.statusCode).toBe(200);
  }, 300_000);

  it('gives the function the local stand-ins, its data directory as a path from anywhere, and no secret of the runtime file', () => {
    const billingRun = functions.find((fn) => fn.path.endsWith('Billing/Run')) as AppFunction;
    const local = stores.environment();
    expect(Object.keys(local).filter((name) => /SECRET_KEY|HASH_KEY|STRIPE/.test(name))).toEqual([]);
    const { variables, unset } = functionEnvironment(billingRun, { ...local, SVC_DATA_DIR: '.data' });
    expect(variables.SVC_DATA_DIR).toBe(join(process.cwd(), '.data'));
    // The template's queue reference is the local queue; its plain values stay.
    expect(variables.SVC_BILLING_QUEUE_URL).toBe(local.SVC_BILLING_QUEUE_URL);
    expect(variables.SVC_STAGE).toBe('local');
    expect(variables.POWERTOOLS_SERVICE_NAME).toBe(billingRun.environment.POWERTOOLS_SERVICE_NAME);
    expect(unset).toEqual([]);
  });

  it('prints the result on stdout and the logs on stderr, and exits 1 on a failed batch item', async () => {
    // Its own data directory: the stores above hold theirs.
    const own = mkdtempSync(join(tmpdir(), 'svc-invoke-cli-'));
    const event = join(own, 'bad-message.json');
    // A message the billing worker cannot read: reported as a failed item, not thrown.
    const sqs = JSON.parse(readFileSync(join(REPO_ROOT, 'events', 'sqs.json'), 'utf8'));
    sqs.Records[0].body = '{"kind":"nothing"}';
    writeFileSync(event, JSON.stringify(sqs));
    const run = promisify(execFile);
    const failed = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        join(REPO_ROOT, 'infra/invoke/main.ts'),
        'Billing/Worker',
        '--event',
        event,
        '--data-dir',
        own,
      ],
      { cwd: REPO_ROOT, env: { ...process.env, SVC_TABLE_NAME: 'svc-invoke-test' } },
    ).catch((error: { code: number; stdout: string; stderr: string }) => error);
    expect('code' in failed ? failed.code : 0).toBe(1);
    expect(JSON.parse(failed.stdout)).toEqual({ batchItemFailures: [{ itemIdentifier: sqs.Records[0].messageId }] });
    expect(failed.stderr).toContain('reported 1 failed batch item');
  }, 120_000);
});
