import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { REPO_ROOT } from '../../constructs/repo-paths';
import { isSynthKind, type SynthKind } from './synth-kinds';

/**
 * The infra project's global setup: each kind of synthesis of the whole app (synth-kinds.ts) made
 * at most once per run, however many test files read it, instead of once per file.
 *
 * A kind is made when a test file first asks for it (synth.ts `useSynthesizedApp`), in a process
 * of its own (synth-main.ts; synthesis is synchronous and would stall vitest's own process), into
 * a directory of this run; every file that asks gets the same cloud assembly. Files ask over a
 * local HTTP endpoint (`GET /<kind>`), answered once the assembly is complete: 200 with its
 * directory, or 500 with the synth's output when it failed. Nothing is made for a run that asks
 * for nothing (`pnpm test services/payments`), and a run of one file makes only what it reads.
 */
export default async function setup(project: TestProject) {
  const root = mkdtempSync(join(tmpdir(), 'svc-synth-'));
  const made = new Map<SynthKind, Promise<string>>();
  const children = new Set<ChildProcess>();

  const synthesize = (kind: SynthKind): Promise<string> =>
    new Promise((done, fail) => {
      const outdir = join(root, kind);
      const child = spawn(process.execPath, ['--import', 'tsx', 'infra/test/support/synth-main.ts', kind, outdir], {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.add(child);
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.on('error', fail);
      child.on('close', (code) => {
        children.delete(child);
        if (code === 0) done(outdir);
        else fail(new Error(`The ${kind} synth exited ${code}:\n${output.slice(-4000)}`));
      });
    });

  const server = createServer((request, response) => {
    const kind = request.url?.slice(1);
    if (!isSynthKind(kind)) {
      response.writeHead(404).end();
      return;
    }
    let assembly = made.get(kind);
    if (!assembly) {
      assembly = synthesize(kind);
      made.set(kind, assembly);
    }
    assembly.then(
      (outdir) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ outdir })),
      (error: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(error.message),
    );
  });
  // A bundled synth on a loaded machine takes minutes: no idle timeout on the waiting request.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  project.provide('synthServer', `http://127.0.0.1:${(server.address() as AddressInfo).port}`);

  return async () => {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
    for (const child of children) child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where infra test files ask for the run's shared synthesis (shared-synth.ts). */
    synthServer: string;
  }
}
