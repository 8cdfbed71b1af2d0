import { PREWARM_OUTPUTS, ROUTE_TABLE } from '@svc/api';
import { describe, expect, it } from 'vitest';
import { STAGE_NAMES, STAGES } from '../config/stages';
import { ALIASED_DOMAINS, LIVE_ALIAS } from '../constructs/domain-function';
import { templateOf, useSynthesizedApp } from './support/synth';
import { functionsByService, integrationUris, lambdaAliases, routes } from './support/template-model';

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
