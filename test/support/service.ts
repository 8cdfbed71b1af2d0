import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
const started: ChildProcess[] = [];

export interface Service {
  child: ChildProcess;
  url: string;
  dynamoPort: string;
  output: () => string;
}

/** Starts `pnpm start`'s entry point in its own process group, as a terminal would. */
export async function startService(env: Record<string, string>): Promise<Service> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/local/src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const ready = await new Promise<RegExpExecArray>((done, fail) => {
    const check = () => {
      const match =
        /svc is running at (http:\/\/127\.0\.0\.1:\d+)[\s\S]*DynamoDB Local at http:\/\/127\.0\.0\.1:(\d+)/.exec(
          output,
        );
      if (match) done(match);
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => fail(new Error(`service exited ${code}:\n${output}`)));
  });
  return { child, url: ready[1] as string, dynamoPort: ready[2] as string, output: () => output };
}

/** Ctrl-C: SIGINT to the whole process group, then wait for the exit. */
export async function interrupt(service: Service): Promise<number | null> {
  const exited = new Promise<number | null>((done) => service.child.once('exit', (code) => done(code)));
  process.kill(-(service.child.pid as number), 'SIGINT');
  return exited;
}

/** Kills whatever a test file started and left running (afterAll). */
export function killStartedServices(): void {
  for (const child of started) if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGKILL');
}
