import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { STAGE_NAMES } from '../config/stages';
import { createServiceApp } from '../stacks/service-app';
import { appProps, SKIP_BUNDLING } from './support/app-props';
import { synthesized, useSynthesizedApp } from './support/synth';

useSynthesizedApp('as-deployed');

const reportSchema = z.object({
  pluginReports: z.array(
    z.object({ pluginName: z.string(), violations: z.array(z.object({ ruleName: z.string(), severity: z.string() })) }),
  ),
});

describe.each(STAGE_NAMES)('AWS Solutions checks on %s', (stage) => {
  it('find no unacknowledged error or warning', () => {
    const stack = synthesized().stacks.get(stage);
    if (!stack) throw new Error(`No ${stage} stack`);
    const { violations } = new AwsSolutionsChecks().validateScope(stack);
    const findings = violations.map(
      (violation) =>
        `${violation.severity} ${violation.ruleName} at ${violation.violatingResources.map((r) => r.constructPath).join(', ')}`,
    );
    expect(findings).toEqual([]);
  });
});

describe('the validation report of a full synth', () => {
  it('lists no violation from any plugin', () => {
    const report = reportSchema.parse(
      JSON.parse(readFileSync(join(synthesized().outdir, 'validation-report.json'), 'utf8')),
    );
    expect(
      report.pluginReports.flatMap((plugin) => plugin.violations.map((v) => `${plugin.pluginName} ${v.ruleName}`)),
    ).toEqual([]);
  });
});

describe('acknowledgements', () => {
  it('are made on specific resources with a reason, never on a whole stack or the app', () => {
    const { app } = synthesized();
    const acknowledged: Array<{ node: IConstruct; id: string; reason: unknown }> = [];
    const visit = (node: IConstruct) => {
      for (const entry of node.node.metadata) {
        if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
        for (const [id, reason] of Object.entries(z.record(z.string(), z.unknown()).parse(entry.data))) {
          acknowledged.push({ node, id, reason });
        }
      }
      for (const child of node.node.children) visit(child);
    };
    visit(app);

    expect(acknowledged.length).toBeGreaterThan(0);
    for (const { node, id, reason } of acknowledged) {
      // CDK itself silences this one on the stack when a construct reflects on the stack's AZs
      // (the search engine's VPC does): not ours to place.
      if (Stack.isStack(node) && id === 'CloudFormation-Validate::W3010') continue;
      const where = `${node.node.path} ${id}`;
      expect(App.isApp(node) || Stack.isStack(node), where).toBe(false);
      expect(typeof reason === 'string' && reason.length >= 40, `${where}: reason "${String(reason)}"`).toBe(true);
    }
  });
});

describe('the app', () => {
  it('fails synthesis on an unacknowledged finding, so the checks guard every synth', () => {
    const { app, stacks } = createServiceApp(appProps({ ...SKIP_BUNDLING, stage: 'dev' }));
    const [stack] = stacks;
    if (!stack) throw new Error('No dev stack');
    new Bucket(stack, 'UnreviewedBucket');
    expect(() => app.synth()).toThrow(/AwsSolutions-S1/);
  });
});
