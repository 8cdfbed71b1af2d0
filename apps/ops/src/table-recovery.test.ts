import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  TagResourceCommand,
  UpdateContinuousBackupsCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { readAdoptedTables } from '../../../infra/config/adopted-tables';
import { createServiceApp } from '../../../infra/stacks/service-app';
import { appProps, SKIP_BUNDLING } from '../../../infra/test/support/app-props';
import { functionsByService } from '../../../infra/test/support/template-model';
import { recordAdoptedTable } from './adopted-table';
import { adoptTable, STACK_TAGS } from './table-recovery';

const NAME = 'svc-fundraising-prod-restored-20261128';
const ARN = `arn:aws:dynamodb:eu-central-2:123456789012:table/${NAME}`;
const STREAM = `${ARN}/stream/2026-11-28T10:00:00.000`;
const NOW = new Date('2026-11-28T11:00:00.000Z');

const fileIn = (content?: string) => {
  const file = join(mkdtempSync(join(tmpdir(), 'svc-adopt-')), 'adopted-tables.json');
  if (content !== undefined) writeFileSync(file, content);
  return file;
};

/**
 * DynamoDB as a restored table meets `table:adopt`: active, no stream until UpdateTable gives it
 * one, TTL off. Every call is recorded; nothing reaches AWS.
 */
function restoredTable() {
  const calls: { name: string; input: Record<string, unknown> }[] = [];
  let streaming = false;
  const dynamo = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      calls.push({ name: command.constructor.name, input: command.input });
      if (command instanceof DescribeTableCommand) {
        return {
          Table: {
            TableName: NAME,
            TableArn: ARN,
            TableStatus: 'ACTIVE',
            ...(streaming
              ? {
                  StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
                  LatestStreamArn: STREAM,
                }
              : {}),
          },
        };
      }
      if (command instanceof UpdateTableCommand && command.input.StreamSpecification) streaming = true;
      if (command instanceof DescribeTimeToLiveCommand)
        return { TimeToLiveDescription: { TimeToLiveStatus: 'DISABLED' } };
      return {};
    },
  } as unknown as Pick<DynamoDBClient, 'send'>;
  return { dynamo, calls };
}

describe('recordAdoptedTable (infra/config/adopted-tables.json)', () => {
  it('sets the stage’s entry and keeps the other stages’, in the format the CDK app reads', () => {
    const staging = {
      tableName: 'svc-staging-restored',
      streamArn: 'arn:aws:dynamodb:x:1:table/svc-staging-restored/stream/1',
    };
    const file = fileIn(JSON.stringify({ staging }));
    recordAdoptedTable('prod', { tableName: NAME, streamArn: STREAM, adoptedAt: NOW.toISOString() }, file);
    expect(readAdoptedTables(file)).toEqual({
      staging,
      prod: { tableName: NAME, streamArn: STREAM, adoptedAt: NOW.toISOString() },
    });
    // As biome formats JSON, so the committed file's diff is the entry alone.
    expect(readFileSync(file, 'utf8')).toMatch(/^\{\n {2}"staging": \{\n[\s\S]*\}\n$/);
  });

  it('makes the file where there is none, and refuses one that is not a map', () => {
    const file = fileIn();
    recordAdoptedTable(
      'dev',
      { tableName: 'svc-dev-restored', streamArn: 'arn:s', adoptedAt: NOW.toISOString() },
      file,
    );
    expect(Object.keys(readAdoptedTables(file))).toEqual(['dev']);
    expect(() =>
      recordAdoptedTable('dev', { tableName: 't', streamArn: 's', adoptedAt: '' }, fileIn('["dev"]')),
    ).toThrow(/not a map/);
  });
});

describe('table:adopt on a deployed stage', () => {
  it('prepares the table, tags it as the stack would, and records it: a deploy without options keeps the stage on it', async () => {
    const { dynamo, calls } = restoredTable();
    const file = fileIn('{}\n');
    const lines: string[] = [];
    const adopted = await adoptTable(
      { stage: 'prod', table: NAME },
      (line) => lines.push(line),
      async () => undefined,
      { dynamo, adoptedTablesFile: file, now: () => NOW },
    );
    expect(adopted).toEqual({ tableName: NAME, streamArn: STREAM });

    const sent = (name: string) => calls.filter((call) => call.name === name).map((call) => call.input);
    expect(sent(UpdateTableCommand.name)).toEqual([
      { TableName: NAME, StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' } },
      { TableName: NAME, DeletionProtectionEnabled: true },
    ]);
    expect(sent(UpdateTimeToLiveCommand.name)).toEqual([
      { TableName: NAME, TimeToLiveSpecification: { Enabled: true, AttributeName: 'ttl' } },
    ]);
    expect(sent(UpdateContinuousBackupsCommand.name)).toEqual([
      { TableName: NAME, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } },
    ]);
    expect(sent(TagResourceCommand.name)).toEqual([{ ResourceArn: ARN, Tags: STACK_TAGS('prod') }]);
    expect(lines.join('\n')).toContain('pnpm run deploy -c stage=prod\n');
    expect(lines.join('\n')).not.toContain('-c table.prod');

    expect(readAdoptedTables(file)).toEqual({
      prod: { tableName: NAME, streamArn: STREAM, adoptedAt: NOW.toISOString() },
    });
    // The next synth, with no table options, is on the adopted table, tagged as the stack tags what it makes.
    const { stacks } = createServiceApp(appProps({ ...SKIP_BUNDLING, stage: 'prod' }), { adoptedTablesFile: file });
    const template = Template.fromStack(stacks[0] as NonNullable<(typeof stacks)[0]>);
    template.resourceCountIs('AWS::DynamoDB::Table', 0);
    expect(functionsByService(template).get('payments')?.properties.Environment.Variables.SVC_TABLE_NAME).toBe(NAME);
    const functionTags = Object.values(template.findResources('AWS::Lambda::Function'))[0]?.Properties.Tags;
    expect(functionTags).toEqual(expect.arrayContaining(STACK_TAGS('prod')));
  });

  it('locally changes no file', async () => {
    const { dynamo, calls } = restoredTable();
    const file = fileIn('{}\n');
    await adoptTable(
      { table: NAME },
      () => undefined,
      async () => undefined,
      { dynamo, adoptedTablesFile: file },
    );
    expect(readFileSync(file, 'utf8')).toBe('{}\n');
    expect(calls.map((call) => call.name)).not.toContain(TagResourceCommand.name);
  });
});
