import { CfnOutput, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { EdgeConfig, StageName } from '../config/stages';
import { EdgeFirewall } from '../constructs/edge-firewall';

/** The output the service stack reads the web ACL's ARN from (Fn::GetStackOutput). */
export const WEB_ACL_ARN_OUTPUT = 'WebAclArn';

/** Where a web ACL of scope CLOUDFRONT must be created. */
export const EDGE_FIREWALL_REGION = 'us-east-1';

export const edgeFirewallStackName = (serviceStackName: string) => `${serviceStackName}-edge-firewall`;

export interface EdgeFirewallStackProps extends StackProps {
  stage: StageName;
  serviceStackName: string;
  edge: EdgeConfig;
}

/**
 * A stage's AWS WAF web ACL, alone in us-east-1 (a CLOUDFRONT web ACL lives nowhere else:
 * https://docs.aws.amazon.com/waf/latest/APIReference/API_CreateWebACL.html, `Scope`). The
 * service stack stays region-agnostic and reads the ARN with Fn::GetStackOutput, which
 * CloudFormation resolves across regions
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/intrinsic-function-reference-getstackoutput.html).
 * CDK's `crossRegionReferences` would need an explicit region on both stacks and two custom
 * resources (ExportWriter/ExportReader); the account is still the deploying profile's.
 */
export class EdgeFirewallStack extends Stack {
  readonly firewall: EdgeFirewall;

  constructor(scope: Construct, id: string, props: EdgeFirewallStackProps) {
    super(scope, id, { ...props, env: { ...props.env, region: EDGE_FIREWALL_REGION } });
    Tags.of(this).add('service', 'svc-fundraising');
    Tags.of(this).add('stage', props.stage);
    this.firewall = new EdgeFirewall(this, 'Firewall', { name: props.serviceStackName, edge: props.edge });
    new CfnOutput(this, WEB_ACL_ARN_OUTPUT, {
      value: this.firewall.webAcl.attrArn,
      description: `The web ACL of ${props.serviceStackName}'s CloudFront distribution`,
    });
  }
}
