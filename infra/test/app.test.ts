import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLAGS } from 'aws-cdk-lib/cx-api';
import { describe, expect, it } from 'vitest';
import { STAGE_NAMES } from '../config/stages';
import { REPO_ROOT } from '../constructs/repo-paths';
import { createServiceApp } from '../stacks/service-app';
import { appProps, SKIP_BUNDLING } from './support/app-props';

describe('the CDK app', () => {
  it('builds every stage when no stage is given', () => {
    const { stacks } = createServiceApp(appProps(SKIP_BUNDLING));
    expect(stacks.map((stack) => stack.stackName)).toEqual(STAGE_NAMES.map((name) => `svc-fundraising-${name}`));
  });

  it('builds only the stage named with -c stage=<name>', () => {
    const { stacks } = createServiceApp(appProps({ ...SKIP_BUNDLING, stage: 'staging' }));
    expect(stacks.map((stack) => stack.config.name)).toEqual(['staging']);
  });

  it('refuses a stage it has no config for', () => {
    expect(() => createServiceApp(appProps({ ...SKIP_BUNDLING, stage: 'qa' }))).toThrow(/Unknown stage "qa"/);
  });

  it('synthesizes environment-agnostic stacks that need no lookups, account or credentials', () => {
    const { app, stacks } = createServiceApp(appProps({ ...SKIP_BUNDLING, stage: 'prod' }));
    const assembly = app.synth();
    const [stack] = stacks;
    expect(stack?.environment).toBe('aws://unknown-account/unknown-region');
    expect(assembly.manifest.missing ?? []).toEqual([]);
  });
});

describe('cdk.json', () => {
  it('sets every feature flag aws-cdk-lib recommends a value for (`cdk flags` reports none unconfigured)', () => {
    const context = (
      JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }
    ).context;
    const unconfigured = Object.entries(FLAGS)
      .filter(([, flag]) => flag.introducedIn.v2 !== undefined && flag.recommendedValue !== undefined)
      .map(([name]) => name)
      .filter((name) => !(name in context));
    expect(unconfigured).toEqual([]);
  });
});
