import { createHash } from 'node:crypto';
import { type DomainName, WORKERS } from '@svc/api';
import { MIGRATIONS } from '@svc/sql';
import { CustomResource, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FlowLogDestination, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import {
  AuroraPostgresEngineVersion,
  ClusterInstance,
  Credentials,
  DatabaseCluster,
  DatabaseClusterEngine,
} from 'aws-cdk-lib/aws-rds';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { StageConfig } from '../config/stages';
import { customResourceProvider, encryptedQueue } from './background-parts';
import { thresholdAlarm } from './service-alarms';
import { ServiceFunction, TRACING_WILDCARD_REASON } from './service-function';

/** A digest of the schema's migrations: the custom resource runs whenever they change. */
export function migrationsDigest(): string {
  return createHash('sha256').update(JSON.stringify(MIGRATIONS)).digest('hex').slice(0, 16);
}

export interface SearchEngineProps {
  stage: StageConfig;
  table: ITable;
}

/** The database the search schema lives in. */
export const SEARCH_DATABASE = 'svc';
/** The projector falls behind the stream by this much (milliseconds) before its alarm fires. */
export const SEARCH_ITERATOR_AGE_ALARM = Duration.minutes(5);

/**
 * The search engine: Aurora PostgreSQL Serverless v2 reached through the RDS Data API (the
 * functions sign HTTPS calls with their roles: no VPC in them, no connection pool to exhaust),
 * its schema migrated by a custom resource on every deploy, and the search projector fed by the
 * table's stream (only the items it projects, by an event filter) with partial batch responses, bisecting,
 * and a dead-letter queue. The cluster sits in isolated subnets of its own VPC: nothing but the
 * Data API reaches it.
 */
/**
 * The table items the engine holds (the projections' entities, see @svc/api's SEARCH_PROJECTIONS;
 * infra/test/search.test.ts keeps the two equal): the projector's stream filter.
 */
export const SEARCH_ENTITIES = ['payment', 'subscription', 'subscription_plan', 'organisation'] as const;

/**
 * The domain functions that search, or write items the engine holds (read-your-writes needs the
 * row upserted right after the write): the engine's address and a Data API grant, nothing more.
 */
export const SEARCH_DOMAINS: ReadonlySet<DomainName> = new Set<DomainName>([
  'payments',
  'subscriptions',
  'organisations',
  'onboarding',
  // The donor portal searches a donor's gifts by year and writes subscriptions and payment sources.
  'portal',
  // Gift Aid claims read an organisation's gifts of a period.
  'receipts',
]);

export class SearchEngine extends Construct {
  readonly cluster: DatabaseCluster;
  readonly projector: ServiceFunction;
  readonly migrator: ServiceFunction;
  readonly deadLetterQueue: Queue;
  readonly schema: CustomResource;
  /** Empty where the stage config turns alarms off. */
  readonly alarms: readonly Alarm[];

  constructor(scope: Construct, id: string, props: SearchEngineProps) {
    super(scope, id);
    const { stage, table } = props;
    const vpc = new Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'database', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 24 }],
      flowLogs: {
        rejected: {
          destination: FlowLogDestination.toCloudWatchLogs(
            new LogGroup(this, 'FlowLogs', { retention: stage.logRetention, removalPolicy: stage.removalPolicy }),
          ),
        },
      },
    });
    const clusterIdentifier = `svc-fundraising-${stage.name}-search`;
    this.cluster = new DatabaseCluster(this, 'Cluster', {
      engine: DatabaseClusterEngine.auroraPostgres({ version: AuroraPostgresEngineVersion.VER_17_6 }),
      writer: ClusterInstance.serverlessV2('Writer', { publiclyAccessible: false }),
      serverlessV2MinCapacity: stage.search.minCapacity,
      serverlessV2MaxCapacity: stage.search.maxCapacity,
      enableDataApi: true,
      defaultDatabaseName: SEARCH_DATABASE,
      credentials: Credentials.fromGeneratedSecret('svc_admin'),
      iamAuthentication: true,
      storageEncrypted: true,
      port: 5438,
      vpc,
      vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
      backup: { retention: Duration.days(stage.search.backupRetentionDays) },
      deletionProtection: stage.deletionProtection,
      // The search store is a projection of the table (`pnpm ops search:rebuild` makes it again),
      // so it is not kept beside a deleted stack: a final snapshot is, and the cluster goes. A
      // kept cluster would keep its subnet group and security group, and with them the VPC,
      // which is why `cdk destroy` of a stage could not finish. (dev: neither.)
      removalPolicy: searchRemovalPolicy(stage),
      clusterIdentifier,
      cloudwatchLogsExports: ['postgresql'],
    });
    // The exported log's group, made here with the stage's retention (cloudwatchLogsRetention
    // would add a log-retention function with a wildcard role).
    // Its name is fixed by RDS, so a kept group would collide with the next stack of the stage: it
    // goes with the cluster it logs (the cluster's final snapshot is what is kept).
    const databaseLogs = new LogGroup(this, 'DatabaseLogs', {
      logGroupName: `/aws/rds/cluster/${clusterIdentifier}/postgresql`,
      retention: stage.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.cluster.node.addDependency(databaseLogs);
    Validations.of(this.cluster).acknowledge(
      {
        id: 'AwsSolutions-SMG4',
        reason:
          'The cluster secret is read by the Data API on the functions’ behalf; a rotation Lambda would need network access into the isolated subnets (a NAT or VPC endpoints) that nothing else here needs. Not rotated on a schedule yet: rotating it means changing the password in the database and the secret together (README, Search on PostgreSQL).',
      },
      {
        id: 'AwsSolutions-RDS14',
        reason: 'Backtrack exists for Aurora MySQL only; this cluster is Aurora PostgreSQL, recovered from backups.',
      },
      {
        id: 'AwsSolutions-RDS10',
        reason:
          'Deletion protection follows the stage config: on in prod, off in dev and staging, which are rebuilt from the table.',
      },
    );

    this.migrator = new ServiceFunction(this, 'Migrator', {
      entry: 'packages/sql/src/migrate-handler.ts',
      description: `svc fundraising search schema migrations (${stage.name}, custom resource)`,
      memoryMb: 256,
      timeout: Duration.minutes(3),
      environment: { ...this.environment(), POWERTOOLS_SERVICE_NAME: 'search-migrator', SVC_STAGE: stage.name },
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });
    this.grantQuery(this.migrator.role);
    this.schema = new CustomResource(this, 'Schema', {
      serviceToken: customResourceProvider(this, this.migrator, stage, 'search schema migrator').serviceToken,
      resourceType: 'Custom::SearchSchema',
      // Runs again whenever the migrations change (and only then): their digest is a property.
      properties: { Cluster: this.cluster.clusterArn, Migrations: migrationsDigest() },
    });
    this.schema.node.addDependency(this.cluster);

    this.deadLetterQueue = encryptedQueue(this, 'ProjectorDeadLetterQueue', stage, {
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is a dead-letter queue: the stream event source mapping names it as its on-failure destination; `pnpm ops search:rebuild` recovers what it lists from the table.',
    });
    this.projector = new ServiceFunction(this, 'Projector', {
      entry: WORKERS.searchProjector.entry,
      memoryMb: WORKERS.searchProjector.memoryMb,
      description: `svc fundraising search projector (${stage.name})`,
      timeout: Duration.minutes(1),
      environment: {
        ...this.environment(),
        SVC_TABLE_NAME: table.tableName,
        SVC_STAGE: stage.name,
        POWERTOOLS_SERVICE_NAME: 'search-projector',
      },
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });
    this.grantQuery(this.projector.role);
    this.projector.node.addDependency(this.schema);
    // The stream's second reader (the event publisher is the first; a shard serves two at most).
    this.projector.function.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        reportBatchItemFailures: true,
        bisectBatchOnError: true,
        retryAttempts: 10,
        maxRecordAge: Duration.hours(24),
        onFailure: new SqsDlq(this.deadLetterQueue),
        filters: [
          FilterCriteria.filter({ dynamodb: { NewImage: { entity: { S: FilterRule.or(...SEARCH_ENTITIES) } } } }),
        ],
      }),
    );
    Validations.of(this.projector.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'dynamodb:ListStreams, which the DynamoDB stream event source needs, supports no resource-level permissions; the stream reads themselves name this table stream only. ' +
        TRACING_WILDCARD_REASON,
    });
    this.alarms = stage.alarms.enabled ? this.createAlarms() : [];
  }

  /** Where the functions find the engine (read by @svc/sql). */
  environment(): Record<string, string> {
    return {
      SVC_SEARCH_CLUSTER_ARN: this.cluster.clusterArn,
      SVC_SEARCH_SECRET_ARN: this.cluster.secret?.secretArn ?? '',
      SVC_SEARCH_DATABASE: SEARCH_DATABASE,
    };
  }

  /** Statements through the Data API on this cluster, as its secret's user: nothing else. */
  grantQuery(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['rds-data:ExecuteStatement'], resources: [this.cluster.clusterArn] }),
    );
    this.cluster.secret?.grantRead(grantee);
  }

  private createAlarms(): Alarm[] {
    const fiveMinutes = Duration.minutes(5);
    return [
      thresholdAlarm(
        this,
        'ProjectorIteratorAge',
        this.projector.function.metric('IteratorAge', { period: fiveMinutes, statistic: 'Maximum' }),
        SEARCH_ITERATOR_AGE_ALARM.toMilliseconds(),
        'Search falls behind the table: search projector iterator age in milliseconds',
      ),
      thresholdAlarm(
        this,
        'ProjectorDeadLetters',
        this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' }),
        1,
        'The search projector gave up on stream records: run `pnpm ops search:rebuild`',
      ),
    ];
  }
}

/** DESTROY where the stage's data goes with its stack (dev); elsewhere a final snapshot. */
export function searchRemovalPolicy(stage: StageConfig): RemovalPolicy {
  return stage.removalPolicy === RemovalPolicy.DESTROY ? RemovalPolicy.DESTROY : RemovalPolicy.SNAPSHOT;
}
