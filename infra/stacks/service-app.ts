import { stackName } from '@svc/api';
import { App, type AppProps, Aspects, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readAdoptedTables } from '../config/adopted-tables';
import { isStageName, STAGE_NAMES, STAGES, type StageName } from '../config/stages';
import { ActiveTracing } from '../constructs/tracing';
import { EdgeFirewallStack, edgeFirewallStackName, WEB_ACL_ARN_OUTPUT } from './edge-firewall-stack';
import { ServiceStack } from './service-stack';

export interface ServiceApp {
  app: App;
  /** One per stage. */
  stacks: ServiceStack[];
  /** The us-east-1 web ACL stacks of the stages with an edge; each service stack deploys after its own. */
  edgeFirewalls: EdgeFirewallStack[];
}

export interface ServiceAppOptions {
  /** Where the stages' adopted tables are kept: infra/config/adopted-tables.json (ADOPTED_TABLES_FILE). */
  adoptedTablesFile?: string;
}

/**
 * The CDK app: `-c stage=<name>` builds that stage, no stage builds all of them. Stacks are
 * environment-agnostic (no account, region or lookups), so synth needs neither network nor
 * credentials; the deploying profile picks the account and region.
 */
export function createServiceApp(props: AppProps = {}, options: ServiceAppOptions = {}): ServiceApp {
  const app = new App(props);
  const adoptedTables = readAdoptedTables(options.adoptedTablesFile);
  const edgeFirewalls: EdgeFirewallStack[] = [];
  const stacks = requestedStages(app).map((name) => {
    const stage = STAGES[name];
    // A stage with an edge gets its web ACL from a small us-east-1 stack (`cdk deploy --all`
    // deploys it first: the service stack depends on it). The service stack stays region-agnostic.
    const firewall = stage.edge
      ? new EdgeFirewallStack(app, edgeFirewallStackName(stackName(name)), {
          stage: name,
          serviceStackName: stackName(name),
          edge: stage.edge,
          description: `svc fundraising payments back end (${name}): the AWS WAF web ACL of its CloudFront distribution`,
          terminationProtection: stage.deletionProtection,
        })
      : undefined;
    const stack = new ServiceStack(app, stackName(name), {
      stage,
      description: `svc fundraising payments back end (${name})`,
      terminationProtection: stage.deletionProtection,
      ...(adoptedTables[name] ? { adoptedTable: adoptedTables[name] } : {}),
      ...(firewall ? { edgeFirewall: { stackName: firewall.stackName, outputName: WEB_ACL_ARN_OUTPUT } } : {}),
    });
    if (firewall) {
      stack.addStackDependency(firewall, 'reads the web ACL ARN (Fn::GetStackOutput)');
      edgeFirewalls.push(firewall);
    }
    return stack;
  });
  Aspects.of(app).add(new ActiveTracing());
  // AWS Solutions rules run on every synth; exceptions are acknowledged next to their construct.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stacks, edgeFirewalls };
}

function requestedStages(app: App): readonly StageName[] {
  const requested: unknown = app.node.tryGetContext('stage');
  if (requested === undefined) return STAGE_NAMES;
  if (!isStageName(requested)) {
    throw new Error(`Unknown stage ${JSON.stringify(requested)}: use one of ${STAGE_NAMES.join(', ')}`);
  }
  return [requested];
}
