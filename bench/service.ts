import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');

export interface BenchService {
  child: ChildProcess;
  url: string;
  dynamo: string;
  stop(): void;
  /** Resolves once the service's process has exited (after `stop`). */
  exited: Promise<void>;
}

/** `pnpm start`'s entry point in its own process (in memory), as a user would run it. */
export function startService(env: Record<string, string> = {}): Promise<BenchService> {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_SERVICE_CPU_PROF
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_SERVICE_CPU_PROF}`]
        : []),
      ...(process.env.BENCH_SERVICE_IMPORT ? ['--import', process.env.BENCH_SERVICE_IMPORT] : []),
      '--import',
      'tsx',
      'apps/local/src/main.ts',
    ],
    {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', SVC_DATA_DIR: ':memory:', POWERTOOLS_LOG_LEVEL: 'ERROR', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    },
  );
  let output = '';
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return new Promise((done, fail) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /svc is running at (\S+)[\s\S]*DynamoDB Local at (\S+),/.exec(output);
      if (match?.[1] && match[2]) {
        done({
          child,
          url: match[1],
          dynamo: match[2],
          exited,
          stop: () => {
            // Idempotent: a stopped service's process group is gone.
            try {
              process.kill(-(child.pid as number), 'SIGINT');
            } catch {}
          },
        });
      }
    });
    child.once('exit', (code) => fail(new Error(`service exited ${code}: ${output}`)));
  });
}

export async function tokenFor(url: string, clientId: string, clientSecret: string): Promise<string> {
  const response = await fetch(`${url}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
}
