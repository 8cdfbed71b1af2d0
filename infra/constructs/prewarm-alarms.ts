import { PREWARM_SCHEDULE_OUTPUTS } from '@svc/api';
import { Aws, CfnOutput, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IHttpApi, IHttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IAlias } from 'aws-cdk-lib/aws-lambda';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';

/**
 * What ends a prewarm by itself (issue 46, point 5), and the alarms that say when it did not.
 *
 * `pnpm ops prewarm` creates two one-time EventBridge Scheduler schedules (`at(...)`) in the
 * groups made here, both with universal targets: no function of ours runs, Scheduler calls the
 * AWS API itself with the role made here. A universal target's ARN is
 * `arn:aws:scheduler:::aws-sdk:<service>:<apiAction>`, its Input the API's request as JSON, and
 * its role must allow that action; read-only actions (get…, list…, describe…) cannot be targets
 * (https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-targets-universal.html).
 *
 * - In the reset group, at `--until`: `lambda:deleteProvisionedConcurrencyConfig` on the payments
 *   `live` alias (what is billed), and `apigatewayv2:updateStage` back to the configured throttle.
 * - In the check group, a day after `--until`: `lambda:deleteProvisionedConcurrencyConfig` again.
 *   Where the reset worked there is no configuration to delete and the call fails (Lambda's
 *   not-found error, https://docs.aws.amazon.com/lambda/latest/api/API_DeleteProvisionedConcurrencyConfig.html;
 *   not tried against AWS here): a target error. A call that succeeds means provisioned concurrency was still set a day after
 *   `--until` (the reset failed, or someone put it back): it is removed, and the alarm
 *   PrewarmStillProvisioned says so. Get… cannot be a target, so the check is this delete.
 *
 * The role may do nothing else: those two actions on the payments alias and the one stage.
 */
export interface PrewarmAlarmsProps {
  /** The payments function's alias the API invokes (provisioned concurrency goes on it). */
  alias: IAlias;
  api: IHttpApi;
  apiStage: IHttpStage;
  /** Alarms only where the stage has them (infra/config/stages.ts `alarms.enabled`). */
  alarms: boolean;
}

/** Invocations spilled over to on-demand environments (over five minutes) that breach: any. */
export const SPILLOVER_PERIOD = Duration.minutes(5);
/** The check's successful calls are summed per hour: one is enough. */
export const CHECK_PERIOD = Duration.hours(1);
/** `attempts` less `errors`: the check's calls that found provisioned concurrency still set. */
export const STILL_PROVISIONED_EXPRESSION = 'FILL(attempts, 0) - FILL(errors, 0)';

export class PrewarmAlarms extends Construct {
  readonly role: Role;
  readonly resetGroup: ScheduleGroup;
  readonly checkGroup: ScheduleGroup;

  constructor(scope: Construct, id: string, props: PrewarmAlarmsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    // The groups hold only the one-time schedules prewarm makes (recreated by the next prewarm):
    // removed with the stack, not kept as CDK's default RETAIN would (a failed first deploy must
    // be able to run again, infra/test/retention.test.ts).
    this.resetGroup = new ScheduleGroup(this, 'ResetGroup', {
      scheduleGroupName: `${stack.stackName}-prewarm-reset`,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.checkGroup = new ScheduleGroup(this, 'CheckGroup', {
      scheduleGroupName: `${stack.stackName}-prewarm-check`,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // Scheduler assumes the role only for schedules of this account and of these two groups
    // (the confused-deputy conditions of
    // https://docs.aws.amazon.com/scheduler/latest/UserGuide/setting-up.html#setting-up-execution-role).
    this.role = new Role(this, 'ResetRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
          ArnLike: {
            'aws:SourceArn': [
              stack.formatArn({
                service: 'scheduler',
                resource: 'schedule',
                resourceName: `${this.resetGroup.scheduleGroupName}/*`,
              }),
              stack.formatArn({
                service: 'scheduler',
                resource: 'schedule',
                resourceName: `${this.checkGroup.scheduleGroupName}/*`,
              }),
            ],
          },
        },
      }),
      description: 'EventBridge Scheduler: the reset pnpm ops prewarm schedules at --until, and its check a day later',
    });
    // Provisioned concurrency is configured on a qualified function (the alias), whose ARN is the
    // function's with `:live`. Whether Lambda authorises DeleteProvisionedConcurrencyConfig against
    // the qualified ARN or the function's own could not be confirmed in the sources at hand, so both
    // are granted: still this one action on this one function, its `live` alias included.
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['lambda:DeleteProvisionedConcurrencyConfig'],
        resources: [props.alias.version.lambda.functionArn, props.alias.functionArn],
      }),
    );
    // UpdateStage of an HTTP API is apigateway:PATCH on the stage
    // (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-control-access-using-iam-policies-to-invoke-api.html
    // lists the control-plane resources as arn:aws:apigateway:<region>::/apis/<id>/stages/<name>).
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['apigateway:PATCH'],
        resources: [
          `arn:${Aws.PARTITION}:apigateway:${Aws.REGION}::/apis/${props.api.apiId}/stages/${props.apiStage.stageName}`,
        ],
      }),
    );

    new CfnOutput(stack, PREWARM_SCHEDULE_OUTPUTS.role, {
      value: this.role.roleArn,
      description: 'The role EventBridge Scheduler takes for the reset pnpm ops prewarm schedules at --until',
    });
    new CfnOutput(stack, PREWARM_SCHEDULE_OUTPUTS.resetGroup, {
      value: this.resetGroup.scheduleGroupName,
      description: 'Schedule group of the reset at --until (pnpm ops prewarm)',
    });
    new CfnOutput(stack, PREWARM_SCHEDULE_OUTPUTS.checkGroup, {
      value: this.checkGroup.scheduleGroupName,
      description: 'Schedule group of the check a day after --until (pnpm ops prewarm)',
    });

    if (!props.alarms) return;

    // Invocations of the alias that found every provisioned environment busy and ran on demand
    // (a cold start each): the prewarm is below the traffic. Emitted per alias with the
    // dimensions FunctionName and Resource (`<function>:<alias>`), one-minute granularity
    // (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-concurrency.html#provisioned-concurrency-metrics,
    // https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html). No data outside
    // an event (no provisioned concurrency): not breaching.
    new Alarm(this, 'Spillover', {
      metric: props.alias.metric('ProvisionedConcurrencySpilloverInvocations', {
        statistic: 'Sum',
        period: SPILLOVER_PERIOD,
      }),
      threshold: 0,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription:
        'Payments invocations beyond the provisioned concurrency of its live alias ran on demand (cold starts) in 5 minutes: the prewarm is below the traffic; pnpm ops prewarm again with a higher --donations-per-second (docs/operations.md, "Prewarming")',
    });

    // Scheduler's per-group metrics (namespace AWS/Scheduler, dimension ScheduleGroup):
    // InvocationAttemptCount counts every call made, TargetErrorCount those the target API refused
    // (https://docs.aws.amazon.com/scheduler/latest/UserGuide/monitoring-cloudwatch.html). That page
    // says these are delivered best effort ("might not be delivered at all"): the check's alarm is
    // a safety net beside `pnpm ops prewarm --status`, not a guarantee.
    const schedulerMetric = (name: string) =>
      new Metric({
        namespace: 'AWS/Scheduler',
        metricName: name,
        dimensionsMap: { ScheduleGroup: this.checkGroup.scheduleGroupName },
        statistic: 'Sum',
        period: CHECK_PERIOD,
      });
    new Alarm(this, 'StillProvisioned', {
      metric: new MathExpression({
        expression: STILL_PROVISIONED_EXPRESSION,
        usingMetrics: {
          attempts: schedulerMetric('InvocationAttemptCount'),
          errors: schedulerMetric('TargetErrorCount'),
        },
        period: CHECK_PERIOD,
        label: 'prewarm checks that found provisioned concurrency still set',
      }),
      threshold: 0,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription:
        'Provisioned concurrency of payments was still set a day after the prewarm --until (the scheduled reset failed, or it was put back): the check removed it; see what happened in CloudTrail (docs/operations.md, "Prewarming")',
    });
    // The reset itself given up after its retries: provisioned concurrency may still be billed.
    new Alarm(this, 'ResetDropped', {
      metric: this.resetGroup.metricDropped({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: 0,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription:
        'The reset pnpm ops prewarm scheduled at --until was dropped after its retries: run pnpm ops prewarm --stage <stage> --reset (provisioned concurrency is billed until it goes)',
    });
  }
}
