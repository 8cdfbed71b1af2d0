import type { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { STAGE_NAMES, type StageName } from '../../config/stages';
import { createServiceApp } from '../../stacks/service-app';
import type { ServiceStack } from '../../stacks/service-stack';
import { appProps, SKIP_BUNDLING } from './app-props';

export interface SynthesizedApp {
  app: App;
  /** The cloud assembly directory (holds validation-report.json). */
  outdir: string;
  stacks: ReadonlyMap<StageName, ServiceStack>;
  templates: ReadonlyMap<StageName, Template>;
}

export interface SynthOptions {
  /**
   * Also run CDK's built-in CloudFormation schema validation (about 4 s a synth). One test file
   * asserts its report; the others need only the templates, and cdk-nag runs either way.
   */
  cloudFormationValidation?: boolean;
  /**
   * Build every function's code with esbuild, as `pnpm synth` does. Only the tests that read the
   * bundles need it (bundles-load, the platform bundle, the bundles onboarding and the file
   * processor are built from); the others assert the templates, which skipping the build leaves
   * as they are but for the assets' hashes, and save the build's time.
   */
  bundled?: boolean;
}

let synthesized: SynthesizedApp | undefined;

/**
 * The app as `pnpm synth` builds it (no stage given: every stage), synthesized once per test
 * file (the first call's options hold for the file). With `bundled`, esbuild runs for real;
 * identical bundles are shared between the stages' stacks. Synthesis runs cdk-nag, and in tests
 * an unacknowledged error makes it throw.
 */
export function synthesizeAllStages(options: SynthOptions = {}): SynthesizedApp {
  if (synthesized) return synthesized;
  const { app, stacks } = createServiceApp(appProps(options.bundled ? {} : SKIP_BUNDLING));
  const outdir = withCloudFormationValidation(options.cloudFormationValidation ?? false, () => app.synth().directory);
  const byStage = new Map<StageName, ServiceStack>();
  const templates = new Map<StageName, Template>();
  for (const name of STAGE_NAMES) {
    const stack = stacks.find((candidate) => candidate.config.name === name);
    if (!stack) throw new Error(`No stack for stage ${name}`);
    byStage.set(name, stack);
    templates.set(name, Template.fromStack(stack));
  }
  synthesized = { app, outdir, stacks: byStage, templates };
  return synthesized;
}

export function templateOf(stage: StageName): Template {
  const template = synthesizeAllStages().templates.get(stage);
  if (!template) throw new Error(`No template for stage ${stage}`);
  return template;
}

/** CDK reads CDK_VALIDATION at synth time; restore it so nothing else in the file is affected. */
function withCloudFormationValidation<T>(enabled: boolean, run: () => T): T {
  const previous = process.env.CDK_VALIDATION;
  if (!enabled) process.env.CDK_VALIDATION = 'false';
  try {
    return run();
  } finally {
    if (previous === undefined) delete process.env.CDK_VALIDATION;
    else process.env.CDK_VALIDATION = previous;
  }
}
