import { SEARCH_CLUSTER_OUTPUT, SEARCH_PROJECTIONS } from '@svc/api';
import { describe, expect, it } from 'vitest';
import { STAGE_NAMES, STAGES } from '../config/stages';
import { SEARCH_ENTITIES, SEARCH_ITERATOR_AGE_ALARM } from '../constructs/search-engine';
import { templateOf, useSynthesizedApp } from './support/synth';
import { functionsByService, logicalIdOf, rolesAllowedOn } from './support/template-model';

useSynthesizedApp();

/**
 * The functions that search or write what the engine holds (payments, subscriptions, plans,
 * organisations), read gifts from it (receipts), the projector and the schema's migrator.
 */
const ENGINE_USERS = [
  'payments',
  'subscriptions',
  'organisations',
  'onboarding',
  'portal',
  // Gift Aid claims read an organisation's gifts of a period (giftsOfOrganisation).
  'receipts',
  'billing-worker',
  // A batch page's supporters' gifts of the tax year come from the engine (services/receipts).
  'receipts-worker',
  'payment-resolver',
  'search-projector',
  'search-migrator',
];

it('filters the stream on exactly the entities the projections read', () => {
  expect([...SEARCH_ENTITIES].sort()).toEqual(SEARCH_PROJECTIONS.flatMap((p) => p.entities).sort());
});

describe.each(STAGE_NAMES)('the search engine in the %s stage', (stage) => {
  it('is Aurora PostgreSQL Serverless v2 with the Data API, encrypted, in isolated subnets, sized by the stage', () => {
    const template = templateOf(stage);
    const [cluster] = Object.values(template.findResources('AWS::RDS::DBCluster'));
    expect(cluster?.Properties).toMatchObject({
      Engine: 'aurora-postgresql',
      EnableHttpEndpoint: true,
      StorageEncrypted: true,
      DatabaseName: 'svc',
      ServerlessV2ScalingConfiguration: {
        MinCapacity: STAGES[stage].search.minCapacity,
        MaxCapacity: STAGES[stage].search.maxCapacity,
      },
      DeletionProtection: STAGES[stage].deletionProtection,
    });
    const [instance] = Object.values(template.findResources('AWS::RDS::DBInstance'));
    expect(instance?.Properties).toMatchObject({ DBInstanceClass: 'db.serverless', PubliclyAccessible: false });
    const subnets = Object.values(template.findResources('AWS::EC2::Subnet'));
    expect(subnets.every((subnet) => subnet.Properties?.MapPublicIpOnLaunch !== true)).toBe(true);
    expect(Object.keys(template.findResources('AWS::EC2::InternetGateway'))).toHaveLength(0);
    expect(Object.keys(template.findResources('AWS::EC2::NatGateway'))).toHaveLength(0);
    expect(template.toJSON().Outputs[SEARCH_CLUSTER_OUTPUT]).toBeDefined();
  });

  it('lets exactly the functions that search, write what it holds, project or migrate use the Data API and its secret', () => {
    const template = templateOf(stage);
    const clusterId = logicalIdOf(template, 'AWS::RDS::DBCluster');
    const functions = functionsByService(template);
    const roleOf = (service: string) => {
      const fn = functions.get(service);
      if (!fn) throw new Error(`No function ${service}`);
      return fn.roleId;
    };
    const expected = new Set(ENGINE_USERS.map(roleOf));
    expect(rolesAllowedOn(template, clusterId, ['rds-data:ExecuteStatement', 'rds-data:*'])).toEqual(expected);
    const secretId = logicalIdOf(template, 'AWS::SecretsManager::SecretTargetAttachment');
    expect(rolesAllowedOn(template, secretId, ['secretsmanager:GetSecretValue'])).toEqual(expected);
    for (const [service, fn] of functions) {
      const variables = fn.properties.Environment.Variables as Record<string, unknown>;
      expect(variables.SVC_SEARCH_CLUSTER_ARN !== undefined, service).toBe(ENGINE_USERS.includes(service));
    }
  });

  it('feeds the projector from the table stream, the projected items only, with partial failures and a dead-letter queue', () => {
    const template = templateOf(stage);
    const projector = functionsByService(template).get('search-projector');
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (mapping) => mapping.Properties?.FunctionName?.Ref === projector?.logicalId,
    );
    expect(mappings).toHaveLength(1);
    expect(mappings[0]?.Properties).toMatchObject({
      StartingPosition: 'TRIM_HORIZON',
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      FilterCriteria: {
        Filters: [{ Pattern: JSON.stringify({ dynamodb: { NewImage: { entity: { S: [...SEARCH_ENTITIES] } } } }) }],
      },
      DestinationConfig: { OnFailure: { Destination: expect.anything() } },
    });
  });

  it('migrates the schema on deploy, before the functions that use it change', () => {
    const template = templateOf(stage);
    const schema = Object.entries(
      template.toJSON().Resources as Record<string, { Type: string; Properties?: Record<string, unknown> }>,
    ).find(([, resource]) => resource.Type === 'Custom::SearchSchema');
    expect(schema?.[1].Properties?.Migrations).toMatch(/^[0-9a-f]{16}$/);
    const resources = template.toJSON().Resources as Record<string, { DependsOn?: string[] }>;
    for (const service of ENGINE_USERS.filter((service) => service !== 'search-migrator')) {
      const fn = functionsByService(template).get(service);
      expect(resources[fn?.logicalId ?? '']?.DependsOn, service).toContain(schema?.[0]);
    }
  });

  it('alarms when the projector falls behind or gives up, where the stage has alarms', () => {
    const alarms = Object.values(templateOf(stage).findResources('AWS::CloudWatch::Alarm'));
    const behind = alarms.filter((alarm) =>
      String(alarm.Properties?.AlarmDescription).startsWith('Search falls behind'),
    );
    const gaveUp = alarms.filter((alarm) =>
      String(alarm.Properties?.AlarmDescription).startsWith('The search projector gave up'),
    );
    expect(behind.length).toBe(STAGES[stage].alarms.enabled ? 1 : 0);
    expect(gaveUp.length).toBe(STAGES[stage].alarms.enabled ? 1 : 0);
    if (STAGES[stage].alarms.enabled) {
      expect(behind[0]?.Properties?.Threshold).toBe(SEARCH_ITERATOR_AGE_ALARM.toMilliseconds());
    }
  });
});
