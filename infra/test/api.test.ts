import { DOMAINS, ROUTE_TABLE } from '@svc/api';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { STAGE_NAMES, STAGES } from '../config/stages';
import { templateOf, useSynthesizedApp } from './support/synth';
import { functionsByService, integrationTargets, logicalIdOf, routes } from './support/template-model';

useSynthesizedApp();

describe.each(STAGE_NAMES)('the %s HTTP API', (stage) => {
  it("throttles the token route for all callers together, and gives every domain function the stage's per-caller limits", () => {
    const template = templateOf(stage);
    const { rateLimits } = STAGES[stage];
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      RouteSettings: {
        'POST /oauth2/token': {
          ThrottlingRateLimit: rateLimits.tokenRoute.rateLimit,
          ThrottlingBurstLimit: rateLimits.tokenRoute.burstLimit,
        },
      },
    });
    // The stage names the route in its settings, so it is created after it.
    const stageResource = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'))[0] as {
      DependsOn?: string[];
    };
    expect(stageResource.DependsOn?.some((id) => id.includes('oauth2token'))).toBe(true);
    for (const domain of Object.keys(DOMAINS)) {
      const variables = functionsByService(template).get(domain)?.properties.Environment.Variables;
      expect(variables, domain).toMatchObject({
        SVC_CLIENT_RATE_LIMIT: `${rateLimits.client.perSecond}/${rateLimits.client.burst}`,
        SVC_CREDENTIALS_RATE_LIMIT: `${rateLimits.credentials.perSecond}/${rateLimits.credentials.burst}`,
      });
    }
  });

  it('serves every ROUTE_TABLE key, $default included, from its domain function', () => {
    const template = templateOf(stage);
    const functionIdByDomain = new Map(
      [...functionsByService(template)].map(([service, fn]) => [service, fn.logicalId] as const),
    );
    const targets = integrationTargets(template);
    const served = new Map(routes(template).map((route) => [route.routeKey, targets.get(route.integrationId)]));

    expect([...served.keys()].sort()).toEqual(ROUTE_TABLE.map((entry) => entry.key).sort());
    for (const entry of ROUTE_TABLE) {
      expect(served.get(entry.key), entry.key).toBe(functionIdByDomain.get(entry.domain));
    }
  });

  it('uses one Lambda proxy integration and one invoke permission per domain, not per route', () => {
    const template = templateOf(stage);
    const domainsWithRoutes = new Set(ROUTE_TABLE.map((entry) => entry.domain));
    template.resourceCountIs('AWS::ApiGatewayV2::Integration', domainsWithRoutes.size);
    template.allResourcesProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
    });
    // API Gateway's only: fan-out is fed by its queue, not invoked by the rule (the events tests check that).
    const apiPermissions = template.findResources('AWS::Lambda::Permission', {
      Properties: { Principal: 'apigateway.amazonaws.com' },
    });
    expect(Object.keys(apiPermissions)).toHaveLength(domainsWithRoutes.size);
  });

  it('leaves authorisation to the functions: no gateway authorizer on any route', () => {
    const template = templateOf(stage);
    template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 0);
    for (const route of routes(template)) expect(route.authorizationType ?? 'NONE').toBe('NONE');
  });

  it('logs every request to its own log group and throttles by the stage config', () => {
    const template = templateOf(stage);
    const { throttle, logRetention } = STAGES[stage];
    template.resourceCountIs('AWS::ApiGatewayV2::Stage', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: throttle.rateLimit, ThrottlingBurstLimit: throttle.burstLimit },
      AccessLogSettings: { Format: Match.stringLikeRegexp('\\$context\\.requestId') },
    });
    const [apiStage] = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'));
    const destination: unknown = apiStage?.Properties?.AccessLogSettings?.DestinationArn;
    const logGroupId = Object.keys(template.findResources('AWS::Logs::LogGroup')).find(
      (id) => JSON.stringify(destination) === JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] }),
    );
    expect(logGroupId, 'access log destination is a log group of this stack').toBeDefined();
    expect(template.findResources('AWS::Logs::LogGroup')[logGroupId ?? '']?.Properties).toMatchObject({
      RetentionInDays: logRetention,
    });
  });

  it('outputs the API URL and the table name', () => {
    const template = templateOf(stage);
    // Behind an edge (staging, prod) clients are given the distribution's address, not execute-api's.
    const host = STAGES[stage].edge
      ? { 'Fn::GetAtt': [logicalIdOf(template, 'AWS::CloudFront::Distribution'), 'DomainName'] }
      : { Ref: logicalIdOf(template, 'AWS::ApiGatewayV2::Api') };
    template.hasOutput('ApiUrl', { Value: { 'Fn::Join': ['', Match.arrayWith(['https://', host])] } });
    template.hasOutput('TableName', { Value: { Ref: logicalIdOf(template, 'AWS::DynamoDB::Table') } });
  });
});

describe.each(STAGE_NAMES.filter((name) => STAGES[name].alarms.enabled))('the %s alarms', (stage) => {
  it('fire on the API 5xx count above the stage threshold', () => {
    const template = templateOf(stage);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/ApiGateway',
      MetricName: '5xx',
      Statistic: 'Sum',
      Period: 300,
      Dimensions: [{ Name: 'ApiId', Value: { Ref: logicalIdOf(template, 'AWS::ApiGatewayV2::Api') } }],
      Threshold: STAGES[stage].alarms.apiServerErrors,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('fire on errors of each domain function', () => {
    const template = templateOf(stage);
    for (const domain of Object.keys(DOMAINS)) {
      const fn = functionsByService(template).get(domain);
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: fn?.logicalId } }],
        Threshold: STAGES[stage].alarms.functionErrors,
      });
    }
  });
});

describe.each(STAGE_NAMES.filter((name) => !STAGES[name].alarms.enabled))('the %s stage', (stage) => {
  it('creates no alarms, as its config says', () => {
    templateOf(stage).resourceCountIs('AWS::CloudWatch::Alarm', 0);
  });
});
