import { INDEXES, KEY, KEY_ATTRIBUTES, TTL_ATTRIBUTE } from '@svc/table';
import { Validations } from 'aws-cdk-lib';
import {
  type Attribute,
  AttributeType,
  BillingMode,
  type ITable,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import type { StageConfig } from '../config/stages';

export interface ServiceTableProps {
  stage: StageConfig;
  /**
   * A table that exists already (restored from a point in time, then prepared by `pnpm ops
   * table:adopt`: stream, TTL, point-in-time recovery): the stack uses it instead of making one.
   */
  existing?: { tableName: string; streamArn: string };
}

/**
 * The single table, built from @svc/table's definition (the same one DynamoDB Local's
 * CreateTable uses), so keys and indexes cannot drift between local runs and AWS.
 */
export class ServiceTable extends Construct {
  readonly table: ITable;

  constructor(scope: Construct, id: string, props: ServiceTableProps) {
    super(scope, id);
    const { stage } = props;
    if (props.existing) {
      // Its indexes came with the restore (DynamoDB restores the table's global secondary
      // indexes unless told otherwise); its stream ARN names the stream its readers consume.
      this.table = Table.fromTableAttributes(this, 'Table', {
        tableName: props.existing.tableName,
        tableStreamArn: props.existing.streamArn,
        grantIndexPermissions: true,
      });
      return;
    }
    const table = new Table(this, 'Table', {
      partitionKey: attribute(KEY.partition),
      sortKey: attribute(KEY.sort),
      billingMode: BillingMode.PAY_PER_REQUEST,
      // The stream carries outbox items to the event pipeline; it needs both images.
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      // The aws/dynamodb key: encrypted with KMS and visible in CloudTrail, without a key
      // policy to maintain or a monthly key charge.
      encryption: TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: stage.pointInTimeRecovery },
      deletionProtection: stage.deletionProtection,
      removalPolicy: stage.removalPolicy,
    });
    for (const index of Object.values(INDEXES)) {
      table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: attribute(index.partition),
        sortKey: attribute(index.sort),
        // Overloaded indexes serve many entities that read whole items; the due index holds keys only.
        projectionType: index.projection === 'KEYS_ONLY' ? ProjectionType.KEYS_ONLY : ProjectionType.ALL,
      });
    }
    if (!stage.pointInTimeRecovery) {
      Validations.of(table).acknowledge({
        id: 'AwsSolutions-DDB3',
        reason: `Stage ${stage.name} holds disposable test data; point-in-time recovery is on where real data lives (stage config: prod).`,
      });
    }
    this.table = table;
  }
}

function attribute(name: string): Attribute {
  const definition = KEY_ATTRIBUTES.find((candidate) => candidate.name === name);
  if (!definition) throw new Error(`@svc/table defines no key attribute ${name}`);
  return { name, type: definition.type === 'N' ? AttributeType.NUMBER : AttributeType.STRING };
}
