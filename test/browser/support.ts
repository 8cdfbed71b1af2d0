import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

/** What the browser tests share: the service as `pnpm start` runs it, and Debian's Chromium. */
export const ROOT = resolve(import.meta.dirname, '../..');
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
/** The screenshots the README shows, written by the browser tests on each run. */
export const SCREENSHOTS = join(ROOT, 'docs/screenshots');

export interface Service {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** `pnpm start`'s entry point in its own process group, on a free port, with data in memory. */
export async function startService(): Promise<Service> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/local/src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', SVC_DATA_DIR: ':memory:', SVC_CAPTCHA_VERIFIER: 'test' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((done, fail) => {
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /svc is running at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) done(match[1] as string);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.once('exit', (code) => fail(new Error(`The service exited (${code}) before it was ready:\n${output}`)));
  });
  return { child, url, output: () => output };
}

/** Ctrl-C to the whole group (the service stops DynamoDB Local itself), then wait for the exit. */
export async function stopService(service: Service | undefined): Promise<void> {
  const pid = service?.child.pid;
  if (!service || pid === undefined || service.child.exitCode !== null) return;
  const exited = new Promise((done) => service.child.once('exit', done));
  process.kill(-pid, 'SIGINT');
  await exited;
}

export async function launchChromium(partnerPort?: number): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}. The browser test needs Debian's chromium ` +
        '(apt-get install chromium fonts-dejavu-core; .ci/run installs it), or CHROMIUM_PATH pointing at a Chromium.',
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...(partnerPort === undefined
        ? []
        : [`--host-resolver-rules=MAP partner.example.org:443 127.0.0.1:${partnerPort}`]),
    ],
  });
}
