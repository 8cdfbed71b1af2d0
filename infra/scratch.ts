import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { createServiceApp } from './stacks/service-app';

Validations.prototype.acknowledge = () => {};
const { app } = createServiceApp({ context: { stage: process.argv[2] ?? 'dev' }, outdir: '/tmp/scratch-out' });
const r0 = new AwsSolutionsChecks().validateScope(app);
for (const v of r0.violations)
  console.log(v.ruleName, v.severity, v.violatingResources.map((x) => x.constructPath).join(' '));
