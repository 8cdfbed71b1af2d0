import { INDEXES, KEY, KEY_ATTRIBUTES, TTL_ATTRIBUTE } from '@svc/table';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { STAGE_NAMES, STAGES } from '../config/stages';
import { synthesizeAllStages, templateOf } from './support/synth';

beforeAll(() => {
  synthesizeAllStages();
});

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
    expect(synthesizeAllStages().stacks.get('prod')?.terminationProtection).toBe(true);
    expect(synthesizeAllStages().stacks.get('dev')?.terminationProtection).toBe(false);
  });
});
