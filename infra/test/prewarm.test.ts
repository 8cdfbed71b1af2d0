import { PREWARM_OUTPUTS, PREWARM_SCHEDULE_OUTPUTS, ROUTE_TABLE } from '@svc/api';
import { describe, expect, it } from 'vitest';
import { STAGE_NAMES, STAGES } from '../config/stages';
import { ALIASED_DOMAINS, LIVE_ALIAS } from '../constructs/domain-function';
import { STILL_PROVISIONED_EXPRESSION } from '../constructs/prewarm-alarms';
import { templateOf, useSynthesizedApp } from './support/synth';
import {
  functionsByService,
  integrationUris,
  lambdaAliases,
  logicalIdStartingWith,
  routes,
  statementsOfRole,
  trustOfRole,
} from './support/template-model';

useSynthesizedApp();

/**
 * What `pnpm ops prewarm` needs from a stage: provisioned concurrency only warms what the API
 * invokes, so the payments routes go to its `live` alias (a published version), and the stack
 * names everything the command changes.
 */
describe.each(STAGE_NAMES)('what the %s stack gives pnpm ops prewarm', (stage) => {
  it('sends the payments routes to the live alias on this deploy’s version, and every other domain to its function', () => {
    const template = templateOf(stage);
    const functions = functionsByService(template);
    const aliases = lambdaAliases(template);
    const uris = integrationUris(template);
    const invokedByRoute = new Map(routes(template).map((route) => [route.routeKey, uris.get(route.integrationId)]));

    expect([...ALIASED_DOMAINS]).toEqual(['payments']);
    expect(aliases.size).toBe(1);
    const [aliasId, alias] = [...aliases][0] ?? [];
    expect(alias).toMatchObject({ name: LIVE_ALIAS, functionId: functions.get('payments')?.logicalId });
    const version = template.toJSON().Resources[alias?.versionId ?? ''] as { Type: string; DeletionPolicy?: string };
    // A replaced version is deleted once the alias has moved on; none is kept beside the stack.
    expect(version).toMatchObject({ Type: 'AWS::Lambda::Version', DeletionPolicy: 'Delete' });

    for (const entry of ROUTE_TABLE) {
      const expected = entry.domain === 'payments' ? aliasId : functions.get(entry.domain)?.logicalId;
      expect(invokedByRoute.get(entry.key), entry.key).toBe(expected);
    }
  });

  it('outputs the payments function and alias, the HTTP API and stage, and the configured throttle', () => {
    const template = templateOf(stage);
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const { throttle } = STAGES[stage];
    const paymentsId = functionsByService(template).get('payments')?.logicalId;
    const apiId = Object.keys(template.findResources('AWS::ApiGatewayV2::Api'))[0];

    expect(outputs[PREWARM_OUTPUTS.paymentsFunction]?.Value).toEqual({ 'Fn::GetAtt': [paymentsId, 'Arn'] });
    expect(outputs[PREWARM_OUTPUTS.paymentsAlias]?.Value).toBe(LIVE_ALIAS);
    expect(outputs[PREWARM_OUTPUTS.apiId]?.Value).toEqual({ Ref: apiId });
    expect(outputs[PREWARM_OUTPUTS.apiStage]?.Value).toBe('$default');
    expect(outputs[PREWARM_OUTPUTS.apiThrottle]?.Value).toBe(`${throttle.rateLimit}/${throttle.burstLimit}`);
  });
});

/**
 * The reset `pnpm ops prewarm` schedules at --until (issue 46, point 5): Scheduler's universal
 * targets call Lambda and API Gateway with a role that may do only that, and alarms say when a
 * prewarm spills over or outlives its date.
 */
describe.each(STAGE_NAMES)('the %s stack ends a prewarm by itself', (stage) => {
  it('gives Scheduler a role for the two schedule groups that may only delete the alias’s provisioned concurrency and patch the stage', () => {
    const template = templateOf(stage);
    const json = template.toJSON();
    const outputs = json.Outputs as Record<string, { Value: unknown }>;
    const roleId = logicalIdStartingWith(template, 'AWS::IAM::Role', 'PrewarmResetRole');
    expect(outputs[PREWARM_SCHEDULE_OUTPUTS.role]?.Value).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });

    const groups = template.findResources('AWS::Scheduler::ScheduleGroup');
    const groupNames = Object.values(groups).map(
      (group) => (group as { Properties: { Name: string } }).Properties.Name,
    );
    expect(groupNames).toEqual(
      expect.arrayContaining([`svc-fundraising-${stage}-prewarm-reset`, `svc-fundraising-${stage}-prewarm-check`]),
    );
    expect(outputs[PREWARM_SCHEDULE_OUTPUTS.resetGroup]?.Value).toBeDefined();
    expect(outputs[PREWARM_SCHEDULE_OUTPUTS.checkGroup]?.Value).toBeDefined();

    const [trust, ...others] = trustOfRole(template, roleId);
    expect(others).toEqual([]);
    expect(trust).toMatchObject({
      Effect: 'Allow',
      Action: 'sts:AssumeRole',
      Principal: { Service: 'scheduler.amazonaws.com' },
    });
    expect(JSON.stringify(trust?.Condition)).toContain('aws:SourceAccount');
    expect(JSON.stringify(trust?.Condition)).toContain('prewarm-reset/*');

    const statements = statementsOfRole(template, roleId);
    expect(statements.flatMap((statement) => statement.Action).sort()).toEqual([
      'apigateway:PATCH',
      'lambda:DeleteProvisionedConcurrencyConfig',
    ]);
    const aliasId = [...lambdaAliases(template).keys()][0];
    const lambdaStatement = statements.find((statement) =>
      statement.Action.includes('lambda:DeleteProvisionedConcurrencyConfig'),
    );
    // This function and its live alias (its ARN is the function's with :live), nothing else.
    const paymentsId = functionsByService(template).get('payments')?.logicalId;
    expect(lambdaStatement?.Resource).toEqual([{ 'Fn::GetAtt': [paymentsId, 'Arn'] }, { Ref: aliasId }]);
    const stageStatement = statements.find((statement) => statement.Action.includes('apigateway:PATCH'));
    expect(JSON.stringify(stageStatement?.Resource)).toMatch(/::\/apis\/.*\/stages\/\$default/);
  });
});

describe.each(STAGE_NAMES.filter((stage) => STAGES[stage].alarms.enabled))('the %s stack’s prewarm alarms', (stage) => {
  it('alarms on spillover past the live alias’s provisioned concurrency, on a dropped reset, and on provisioned concurrency a day after --until', () => {
    const template = templateOf(stage);
    const alarms = Object.entries(template.findResources('AWS::CloudWatch::Alarm')).filter(([id]) =>
      id.startsWith('Prewarm'),
    );
    const byId = (prefix: string) =>
      alarms.find(([id]) => id.startsWith(prefix))?.[1] as { Properties: Record<string, unknown> };

    const spillover = byId('PrewarmSpillover')?.Properties;
    expect(spillover).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'ProvisionedConcurrencySpilloverInvocations',
      Statistic: 'Sum',
      Period: 300,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    const dimensions = spillover?.Dimensions as Array<{ Name: string }>;
    expect(dimensions.map((dimension) => dimension.Name).sort()).toEqual(['FunctionName', 'Resource']);

    const dropped = byId('PrewarmResetDropped')?.Properties;
    expect(dropped).toMatchObject({ Namespace: 'AWS/Scheduler', MetricName: 'InvocationDroppedCount', Threshold: 0 });

    const still = byId('PrewarmStillProvisioned')?.Properties;
    expect(still).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    const metrics = still?.Metrics as Array<{
      Id: string;
      Expression?: string;
      MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: unknown[] } };
    }>;
    expect(metrics.find((metric) => metric.Expression)?.Expression).toBe(STILL_PROVISIONED_EXPRESSION);
    expect(
      Object.fromEntries(
        metrics
          .filter((metric) => metric.MetricStat)
          .map((metric) => [metric.Id, metric.MetricStat?.Metric.MetricName]),
      ),
    ).toEqual({ attempts: 'InvocationAttemptCount', errors: 'TargetErrorCount' });
    // Every alarm of the stack reaches the alarm topic: these too.
    const topic = logicalIdStartingWith(template, 'AWS::SNS::Topic', 'AlarmTopic');
    for (const [, alarm] of alarms) {
      expect((alarm as { Properties: { AlarmActions?: unknown[] } }).Properties.AlarmActions).toContainEqual({
        Ref: topic,
      });
    }
  });
});

/**
 * PrewarmStillProvisioned's metric math, evaluated as CloudWatch does (as in metric-math.test.ts):
 * FILL gives a missing datapoint its value; arithmetic on what is then present. Scheduler emits
 * a group's metrics only when a schedule of it runs: most hours have no data at all.
 */
describe('the still-provisioned alarm’s metric math', () => {
  type Series = Array<number | null>;
  const fill = (series: Series, value: number) => series.map((x) => x ?? value);
  function evaluate(inputs: { attempts: Series; errors: Series }): Series {
    expect(STILL_PROVISIONED_EXPRESSION).toBe('FILL(attempts, 0) - FILL(errors, 0)');
    const attempts = fill(inputs.attempts, 0);
    const errors = fill(inputs.errors, 0);
    return attempts.map((a, i) => (a ?? 0) - (errors[i] ?? 0));
  }
  const breaches = (series: Series) => series.some((value) => value !== null && value > 0);

  it('is quiet when the check found nothing to delete (its one call refused), and with no data', () => {
    expect(breaches(evaluate({ attempts: [null, 1, null], errors: [null, 1, null] }))).toBe(false);
    expect(breaches(evaluate({ attempts: [null, null], errors: [null, null] }))).toBe(false);
  });

  it('fires when the check’s call succeeded: provisioned concurrency was still set a day after --until', () => {
    // TargetErrorCount has no datapoint when nothing failed.
    expect(evaluate({ attempts: [null, 1, null], errors: [null, null, null] })).toEqual([0, 1, 0]);
    expect(breaches(evaluate({ attempts: [1], errors: [null] }))).toBe(true);
  });
});
