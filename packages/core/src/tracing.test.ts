import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { logger } from './logger';
import { tracer } from './tracing';
import { workerHandler } from './worker-handler';

const ROOT = resolve(import.meta.dirname, '../../..');

/**
 * Imports @svc/core in a fresh process with the given environment, makes an SDK client through
 * sdkClient, and reports what was loaded and which middleware the client carries.
 */
function probe(env: Record<string, string>): { tracer: boolean; xraySdkLoaded: boolean; middleware: string[] } {
  const script = `
    import { createRequire } from 'node:module';
    const { sdkClient, tracer } = await import('@svc/core');
    const { SQSClient } = await import('@aws-sdk/client-sqs');
    const client = sdkClient(new SQSClient({ region: 'eu-central-2' }));
    const require = createRequire(import.meta.url);
    const loaded = Object.keys(require.cache).some((file) => file.includes('aws-xray-sdk-core'));
    process.stdout.write(JSON.stringify({
      tracer: tracer !== undefined,
      xraySdkLoaded: loaded,
      middleware: client.middlewareStack.identify(),
    }));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', AWS_REGION: 'eu-central-2', ...env },
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

describe('tracing calls', () => {
  it('is off unless the stage asks: no Tracer, the X-Ray SDK never loaded, no X-Ray middleware on clients', () => {
    const off = probe({});
    expect(off).toMatchObject({ tracer: false, xraySdkLoaded: false });
    expect(off.middleware.join(' ')).not.toMatch(/xray/i);
    expect(off.middleware.some((name) => name.startsWith('loggerMiddleware'))).toBe(false);
    expect(tracer).toBeUndefined();
  }, 30_000);

  it('with SVC_TRACE_CALLS=true, loads Tracer and captures every SDK client made through sdkClient', () => {
    const on = probe({
      SVC_TRACE_CALLS: 'true',
      // What the Lambda runtime sets; Tracer traces only inside Lambda.
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      AWS_LAMBDA_FUNCTION_NAME: 'svc-test',
      _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
    });
    expect(on).toMatchObject({ tracer: true, xraySdkLoaded: true });
    expect(on.middleware.join(' ')).toMatch(/XRaySDKInstrumentation/);
    expect(on.middleware.some((name) => name.startsWith('loggerMiddleware'))).toBe(false);
  }, 30_000);
});

describe('a worker handler', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  function captureStdout(): string[] {
    const lines: string[] = [];
    const capture = (chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    };
    // Powertools Logger writes warnings to stderr, the rest to stdout.
    vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    vi.spyOn(process.stderr, 'write').mockImplementation(capture);
    return lines;
  }

  const context = (awsRequestId: string) =>
    ({
      awsRequestId,
      functionName: 'svc-dev-fan-out',
      functionVersion: '$LATEST',
      invokedFunctionArn: 'arn:aws:lambda:eu-central-2:000000000000:function:svc-dev-fan-out',
      memoryLimitInMB: '512',
    }) as unknown as Context;

  it('logs with each invocation’s request id and function', async () => {
    const lines = captureStdout();
    const handler = workerHandler('fan-out', async (event: { n: number }) => {
      logger.warn('working', { n: event.n });
      return event.n * 2;
    });
    expect(await handler({ n: 21 }, context('req-1'))).toBe(42);
    expect(await handler({ n: 1 }, context('req-2'))).toBe(2);
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed.map((line) => [line.message, line.function_request_id])).toEqual([
      ['working', 'req-1'],
      ['working', 'req-2'],
    ]);
    expect(parsed[0]).toMatchObject({ function_name: 'svc-dev-fan-out' });
  });

  it('passes a handler’s failure on unchanged, and runs without a context (the local runtime)', async () => {
    const failing = workerHandler('billing-run', async () => {
      throw new Error('the table is gone');
    });
    await expect(failing({}, context('req-3'))).rejects.toThrow('the table is gone');
    expect(await workerHandler('sweeper', async () => 'swept')(undefined)).toBe('swept');
  });
});
