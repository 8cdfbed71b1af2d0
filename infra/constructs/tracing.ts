import { type IAspect, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { type CfnFunction, Function as LambdaFunction, Tracing } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import { ServiceFunction, TRACING_WILDCARD_REASON } from './service-function';

/**
 * Active X-Ray tracing for the functions this app does not build itself: the CDK provider
 * framework's `onEvent` functions behind our custom resources (signing-key bootstrap, search
 * migrations). Our own functions trace through ServiceFunction. CDK's raw CloudFormation handlers
 * (the VPC default security group's, run once per deploy; dev's bucket emptying, run when its
 * stack is deleted) are not Lambda constructs and stay untraced.
 */
export class ActiveTracing implements IAspect {
  visit(node: IConstruct): void {
    if (!(node instanceof LambdaFunction)) return;
    const cfn = node.node.defaultChild as CfnFunction;
    if (cfn.tracingConfig !== undefined) return;
    cfn.tracingConfig = { mode: Tracing.ACTIVE };
    node.addToRolePolicy(
      new PolicyStatement({ actions: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], resources: ['*'] }),
    );
    if (node.role)
      Validations.of(node.role).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason: TRACING_WILDCARD_REASON });
  }
}

/**
 * Where a stage traces calls (StageConfig.traceCalls): every function this app builds loads
 * Powertools Tracer (`SVC_TRACE_CALLS=true`, read by @svc/core tracing), which records its SDK
 * calls, outbound HTTPS requests and handler as subsegments.
 */
export class TraceCalls implements IAspect {
  visit(node: IConstruct): void {
    if (node instanceof ServiceFunction) node.function.addEnvironment(TRACE_CALLS_VARIABLE, 'true');
  }
}

export const TRACE_CALLS_VARIABLE = 'SVC_TRACE_CALLS';
