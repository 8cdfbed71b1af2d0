import { stackName } from '@svc/api';
import { App, type AppProps, Aspects, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { isStageName, STAGE_NAMES, STAGES, type StageName } from '../config/stages';
import { ActiveTracing } from '../constructs/tracing';
import { ServiceStack } from './service-stack';

export interface ServiceApp {
  app: App;
  stacks: ServiceStack[];
}

/**
 * The CDK app: `-c stage=<name>` builds that stage, no stage builds all of them. Stacks are
 * environment-agnostic (no account, region or lookups), so synth needs neither network nor
 * credentials; the deploying profile picks the account and region.
 */
export function createServiceApp(props: AppProps = {}): ServiceApp {
  const app = new App(props);
  const stacks = requestedStages(app).map((name) => {
    const stage = STAGES[name];
    return new ServiceStack(app, stackName(name), {
      stage,
      description: `svc fundraising payments back end (${name})`,
      terminationProtection: stage.deletionProtection,
    });
  });
  Aspects.of(app).add(new ActiveTracing());
  // AWS Solutions rules run on every synth; exceptions are acknowledged next to their construct.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stacks };
}

function requestedStages(app: App): readonly StageName[] {
  const requested: unknown = app.node.tryGetContext('stage');
  if (requested === undefined) return STAGE_NAMES;
  if (!isStageName(requested)) {
    throw new Error(`Unknown stage ${JSON.stringify(requested)}: use one of ${STAGE_NAMES.join(', ')}`);
  }
  return [requested];
}
