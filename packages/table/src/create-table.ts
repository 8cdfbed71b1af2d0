import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { db } from './client';
import { INDEXES, KEY, KEY_ATTRIBUTES, TTL_ATTRIBUTE } from './definition';

/**
 * Creates the table as the CDK declares it (keys, indexes, stream, TTL), for DynamoDB Local.
 * Deployed stages get their table from CloudFormation, never from here.
 */
export async function createTableIfMissing(name: string): Promise<void> {
  try {
    await db().send(new DescribeTableCommand({ TableName: name }));
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  await db().send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: KEY_ATTRIBUTES.map((a) => ({ AttributeName: a.name, AttributeType: a.type })),
      KeySchema: [
        { AttributeName: KEY.partition, KeyType: 'HASH' },
        { AttributeName: KEY.sort, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: Object.values(INDEXES).map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partition, KeyType: 'HASH' },
          { AttributeName: index.sort, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: index.projection },
      })),
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }),
  );
  await db().send(
    new UpdateTimeToLiveCommand({
      TableName: name,
      TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
    }),
  );
}
