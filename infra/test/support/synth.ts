import { request } from 'node:http';
import { stackName } from '@svc/api';
import type { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { beforeAll, inject } from 'vitest';
import { STAGE_NAMES, type StageName } from '../../config/stages';
import { createServiceApp } from '../../stacks/service-app';
import type { ServiceStack } from '../../stacks/service-stack';
import { appProps, SKIP_BUNDLING } from './app-props';
import type { SynthKind } from './synth-kinds';

export interface SynthesizedApp {
  /** The cloud assembly directory: the assets (as-deployed) and validation-report.json (as-deployed). */
  outdir: string;
  templates: ReadonlyMap<StageName, Template>;
  /**
   * The construct tree, for what only it holds (constructs' properties, metadata, logical ids):
   * the same app synthesized in this process without bundling (its logical ids are the shared
   * templates'), made at the first read.
   */
  readonly app: App;
  readonly stacks: ReadonlyMap<StageName, ServiceStack>;
}

/** How long a file waits for the shared synth: a bundled one takes minutes on a loaded machine. */
const SYNTH_WAIT_MS = 600_000;

let loaded: SynthesizedApp | undefined;

/**
 * In a test file's top level: the app as `pnpm synth` builds it (no stage given: every stage),
 * synthesized once per test run for every file that reads it (shared-synth.ts), loaded before
 * the file's tests. `templates` (the default) skips esbuild and CloudFormation validation, which
 * leave the templates as they are but for the assets' hashes; `as-deployed` is exactly `pnpm
 * synth`'s output, for the tests that read the bundles or the validation report. Synthesis runs
 * cdk-nag, and an unacknowledged error fails it.
 */
export function useSynthesizedApp(kind: SynthKind = 'templates'): void {
  beforeAll(async () => {
    const outdir = await sharedAssembly(kind);
    loaded = fromAssembly(outdir);
  }, SYNTH_WAIT_MS);
}

/** The file's synthesized app (`useSynthesizedApp` loads it). */
export function synthesized(): SynthesizedApp {
  if (!loaded) throw new Error('No synthesized app: call useSynthesizedApp() in the test file first');
  return loaded;
}

export function templateOf(stage: StageName): Template {
  const template = synthesized().templates.get(stage);
  if (!template) throw new Error(`No template for stage ${stage}`);
  return template;
}

function fromAssembly(outdir: string): SynthesizedApp {
  const assembly = new CloudAssembly(outdir);
  const templates = new Map<StageName, Template>();
  for (const stage of STAGE_NAMES) {
    templates.set(stage, Template.fromJSON(assembly.getStackArtifact(stackName(stage)).template));
  }
  let tree: { app: App; stacks: ReadonlyMap<StageName, ServiceStack> } | undefined;
  const constructTree = () => {
    tree ??= synthesizeInProcess();
    return tree;
  };
  return {
    outdir,
    templates,
    get app() {
      return constructTree().app;
    },
    get stacks() {
      return constructTree().stacks;
    },
  };
}

/** Every stage's app built and synthesized here, without bundling or CloudFormation validation. */
function synthesizeInProcess(): { app: App; stacks: ReadonlyMap<StageName, ServiceStack> } {
  const { app, stacks } = createServiceApp(appProps(SKIP_BUNDLING));
  withoutCloudFormationValidation(() => app.synth());
  const byStage = new Map<StageName, ServiceStack>();
  for (const name of STAGE_NAMES) {
    const stack = stacks.find((candidate) => candidate.config.name === name);
    if (!stack) throw new Error(`No stack for stage ${name}`);
    byStage.set(name, stack);
  }
  return { app, stacks: byStage };
}

/** CDK reads CDK_VALIDATION at synth time; restore it so nothing else in the file is affected. */
function withoutCloudFormationValidation<T>(run: () => T): T {
  const previous = process.env.CDK_VALIDATION;
  process.env.CDK_VALIDATION = 'false';
  try {
    return run();
  } finally {
    if (previous === undefined) delete process.env.CDK_VALIDATION;
    else process.env.CDK_VALIDATION = previous;
  }
}

/** The run's shared assembly of that kind: its directory, once it is complete. */
function sharedAssembly(kind: SynthKind): Promise<string> {
  return new Promise((done, fail) => {
    // node:http, not fetch: fetch gives up on an answer that takes over five minutes.
    const asked = request(`${inject('synthServer')}/${kind}`, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => {
        if (response.statusCode === 200) done((JSON.parse(body) as { outdir: string }).outdir);
        else fail(new Error(body || `shared synth answered ${response.statusCode}`));
      });
      response.on('error', fail);
    });
    asked.on('error', fail);
    asked.end();
  });
}
