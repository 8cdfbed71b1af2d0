import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TABLE_NAME_OUTPUT } from '@svc/api';
import { INDEXES, KEY, KEY_ATTRIBUTES, TTL_ATTRIBUTE } from '@svc/table';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { STAGE_NAMES, STAGES, StageConfigurationError } from '../config/stages';
import { createServiceApp } from '../stacks/service-app';
import { appProps, SKIP_BUNDLING } from './support/app-props';
import { synthesized, templateOf, useSynthesizedApp } from './support/synth';
import { functionsByService } from './support/template-model';

useSynthesizedApp();

describe.each(STAGE_NAMES)('the %s table', (stage) => {
  it('has exactly the keys, indexes, stream and TTL that @svc/table defines', () => {
    const template = templateOf(stage);
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: KEY.partition, KeyType: 'HASH' },
        { AttributeName: KEY.sort, KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayEquals(
        KEY_ATTRIBUTES.map((attribute) => ({ AttributeName: attribute.name, AttributeType: attribute.type })),
      ),
      GlobalSecondaryIndexes: Match.arrayEquals(
        Object.values(INDEXES).map((index) => ({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partition, KeyType: 'HASH' },
            { AttributeName: index.sort, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: index.projection },
        })),
      ),
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
      TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      SSESpecification: { SSEEnabled: true },
    });
  });

  const { pointInTimeRecovery, deletionProtection } = STAGES[stage];
  const retained = STAGES[stage].removalPolicy === RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE;
  it(`${pointInTimeRecovery ? 'keeps' : 'does not keep'} point-in-time recovery, ${retained ? 'keeps' : 'drops'} the data on stack deletion, ${deletionProtection ? 'with' : 'without'} deletion protection`, () => {
    const tables = Object.values(templateOf(stage).findResources('AWS::DynamoDB::Table'));
    expect(tables).toHaveLength(1);
    expect(tables[0]).toMatchObject({
      // Kept on stack deletion and replacement; removed if the create that made it rolls back.
      DeletionPolicy: retained ? 'RetainExceptOnCreate' : 'Delete',
      UpdateReplacePolicy: retained ? 'Retain' : 'Delete',
      Properties: {
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: pointInTimeRecovery },
        DeletionProtectionEnabled: deletionProtection,
      },
    });
  });
});

describe('stage protection', () => {
  it('keeps point-in-time recovery and the data on staging and prod; deletion protection is prod only', () => {
    expect(STAGE_NAMES.filter((name) => STAGES[name].pointInTimeRecovery)).toEqual(['staging', 'prod']);
    expect(
      STAGE_NAMES.filter((name) => STAGES[name].removalPolicy === RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE),
    ).toEqual(['staging', 'prod']);
    expect(STAGE_NAMES.filter((name) => STAGES[name].deletionProtection)).toEqual(['prod']);
  });

  it('protects the prod stack itself from deletion', () => {
    expect(synthesized().stacks.get('prod')?.terminationProtection).toBe(true);
    expect(synthesized().stacks.get('dev')?.terminationProtection).toBe(false);
  });
});

describe('a stage given an existing table (a point-in-time restore, adopted)', () => {
  const NAME = 'svc-prod-restored-20261127';
  const STREAM = `arn:aws:dynamodb:eu-central-2:123456789012:table/${NAME}/stream/2026-11-27T10:00:00.000`;
  const synth = (context: Record<string, string>) => {
    const { stacks } = createServiceApp(appProps({ ...SKIP_BUNDLING, stage: 'prod', ...context }));
    const prod = stacks.find((stack) => stack.config.name === 'prod');
    if (!prod) throw new Error('no prod stack');
    return Template.fromStack(prod);
  };

  it('makes no table, and points every function, index grant and stream reader at the one given', () => {
    const template = synth({ 'table.prod': NAME, 'tableStream.prod': STREAM });
    expect(Object.keys(template.findResources('AWS::DynamoDB::Table'))).toEqual([]);
    const functions = functionsByService(template);
    for (const service of ['payments', 'webhooks', 'billing-worker']) {
      expect(functions.get(service)?.properties.Environment.Variables.SVC_TABLE_NAME, service).toBe(NAME);
    }
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
      .map((mapping) => (mapping as { Properties: { EventSourceArn?: unknown } }).Properties.EventSourceArn)
      .filter((arn) => typeof arn === 'string' && arn.includes(':dynamodb:'));
    // The stream publisher and the search projector.
    expect(mappings).toEqual([STREAM, STREAM]);
    expect(JSON.stringify(template.toJSON())).toContain(`:table/${NAME}/index/gsi1`);
  });

  it('refuses a table name without its stream, naming the command that prints both', () => {
    expect(() => synth({ 'table.prod': NAME })).toThrow(/tableStream\.prod.*pnpm ops table:adopt --stage prod/);
    expect(() =>
      synth({ 'table.prod': NAME, 'tableStream.prod': 'arn:aws:dynamodb:x:1:table/other/stream/1' }),
    ).toThrow(StageConfigurationError);
  });
});

describe('a stage whose table was adopted (infra/config/adopted-tables.json), deployed without -c options', () => {
  const NAME = 'svc-prod-restored-20261128';
  const STREAM = `arn:aws:dynamodb:eu-central-2:123456789012:table/${NAME}/stream/2026-11-28T10:00:00.000`;
  const adoptedFile = (entries: unknown) => {
    const file = join(mkdtempSync(join(tmpdir(), 'svc-adopted-')), 'adopted-tables.json');
    writeFileSync(file, JSON.stringify(entries));
    return file;
  };
  const synth = (file: string, context: Record<string, string> = {}) => {
    const { stacks } = createServiceApp(appProps({ ...SKIP_BUNDLING, stage: 'prod', ...context }), {
      adoptedTablesFile: file,
    });
    const prod = stacks.find((stack) => stack.config.name === 'prod');
    if (!prod) throw new Error('no prod stack');
    return Template.fromStack(prod);
  };

  it('keeps every function, grant, stream reader, alarm and output on the adopted table, and makes none', () => {
    const template = synth(
      adoptedFile({ prod: { tableName: NAME, streamArn: STREAM, adoptedAt: '2026-11-28T11:00:00Z' } }),
    );
    expect(Object.keys(template.findResources('AWS::DynamoDB::Table'))).toEqual([]);
    const functions = functionsByService(template);
    for (const service of ['payments', 'webhooks', 'billing-worker']) {
      expect(functions.get(service)?.properties.Environment.Variables.SVC_TABLE_NAME, service).toBe(NAME);
    }
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
      .map((mapping) => (mapping as { Properties: { EventSourceArn?: unknown } }).Properties.EventSourceArn)
      .filter((arn) => typeof arn === 'string' && arn.includes(':dynamodb:'));
    // The stream publisher and the search projector.
    expect(mappings).toEqual([STREAM, STREAM]);
    const json = JSON.stringify(template.toJSON());
    // Grants: the table, its indexes and its stream, by the adopted name.
    expect(json).toContain(`:table/${NAME}"`);
    expect(json).toContain(`:table/${NAME}/index/gsi1`);
    expect(json).toContain(STREAM);
    // Nothing names a table the stack would make.
    expect(json).not.toMatch(/"Ref":"Data[A-Za-z0-9]*Table/);
    expect(json).not.toMatch(/"Fn::GetAtt":\["Data[A-Za-z0-9]*Table/);
    const tableAlarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter((alarm) =>
      JSON.stringify(alarm).includes('"TableName"'),
    );
    expect(tableAlarms.length).toBeGreaterThan(0);
    for (const alarm of tableAlarms) expect(JSON.stringify(alarm)).toContain(`"Value":"${NAME}"`);
    expect(template.findOutputs(TABLE_NAME_OUTPUT)[TABLE_NAME_OUTPUT]?.Value).toBe(NAME);
  });

  it('leaves the other stages on the tables their stacks make', () => {
    const { stacks } = createServiceApp(appProps({ ...SKIP_BUNDLING, stage: 'staging' }), {
      adoptedTablesFile: adoptedFile({ prod: { tableName: NAME, streamArn: STREAM } }),
    });
    const staging = stacks[0];
    if (!staging) throw new Error('no staging stack');
    Template.fromStack(staging).resourceCountIs('AWS::DynamoDB::Table', 1);
  });

  it('takes -c options over the file for one synth, and refuses an entry without its stream', () => {
    const file = adoptedFile({ prod: { tableName: NAME, streamArn: STREAM } });
    const other = 'svc-prod-rehearsal';
    const otherStream = `arn:aws:dynamodb:eu-central-2:123456789012:table/${other}/stream/2026-11-28T12:00:00.000`;
    const given = synth(file, { 'table.prod': other, 'tableStream.prod': otherStream });
    expect(functionsByService(given).get('payments')?.properties.Environment.Variables.SVC_TABLE_NAME).toBe(other);
    expect(() =>
      synth(adoptedFile({ prod: { tableName: NAME, streamArn: 'arn:aws:dynamodb:x:1:table/other/stream/1' } })),
    ).toThrow(/adopted-tables\.json \(prod\).*pnpm ops table:adopt --stage prod/);
    expect(() => synth(adoptedFile({ production: { tableName: NAME, streamArn: STREAM } }))).toThrow(
      StageConfigurationError,
    );
  });
});
