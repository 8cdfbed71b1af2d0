import { WORKERS } from '@svc/api';
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  EventType,
  HttpMethods,
  ObjectOwnership,
  PartitionDateSource,
  TargetObjectKeyFormat,
} from 'aws-cdk-lib/aws-s3';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEFAULT_RECONCILIATION_UPLOAD_ORIGINS, type StageConfig } from '../config/stages';
import { queueWithDeadLetters } from './background-parts';
import { thresholdAlarm } from './service-alarms';
import { ServiceFunction } from './service-function';
import { grantTableAccess, partitionsOf, type TableGrant } from './table-access';

export interface ReconciliationProps {
  stage: StageConfig;
  table: ITable;
  /**
   * The `reconciliation` domain function: it signs presigned POSTs for `uploads/` with its own
   * role's credentials, stores blueprint uploads there and reads report rows from `reports/`, so it
   * gets the bucket's name and those two grants here.
   */
  api: ServiceFunction;
}

/** Key prefixes of the bucket, as services/reconciliation's storage names them (UPLOAD_ROOT, REPORT_ROOT). */
export const UPLOADS_PREFIX = 'uploads/';
export const REPORTS_PREFIX = 'reports/';

/**
 * One file of up to 100 MiB (100k rows) is read, matched and written in well under a minute;
 * five files a batch still fit with room to spare.
 */
export const FILE_PROCESSOR_TIMEOUT = Duration.minutes(5);
/** Notifications per processor invocation. */
export const FILE_BATCH_SIZE = 5;
/**
 * Concurrent processor invocations the queue may drive (the event source's cap, not reserved
 * concurrency, for the reason billing.ts gives): five batches of five files at a time, whatever
 * arrives, so payment reads stay a small share of the table's traffic.
 */
export const FILE_PROCESSOR_MAX_CONCURRENCY = 5;
/** Receives before a notification moves to the dead-letter queue; the file stays in the bucket. */
export const FILE_MAX_RECEIVE_COUNT = 5;

/** How long an overwritten or expired object stays recoverable as a noncurrent version. */
export const NONCURRENT_VERSION_RETENTION = Duration.days(30);
/** A multipart upload nobody completed is removed (with its parts, which are billed) after this. */
export const ABORT_INCOMPLETE_UPLOADS_AFTER = Duration.days(1);
/** Browsers may cache the CORS preflight answer this long. */
export const CORS_MAX_AGE = Duration.hours(1);

/**
 * Point reads (the upload's source configuration, payments, an existing report; the table client
 * coalesces them into BatchGetItem) and the report's conditional put, whose event the stream
 * carries on. No Query, no Scan, no update or delete.
 */
export const FILE_PROCESSOR_TABLE_GRANT: TableGrant = {
  reads: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
  // The upload's source configuration, the payments its rows name, an existing report.
  readKeys: partitionsOf('reconciliation_source_configuration', 'payment', 'reconciliation_report'),
  indexes: [],
  writes: ['dynamodb:PutItem'],
  writeKeys: partitionsOf('reconciliation_report'),
};

/**
 * Reconciliation files: organisations' bank and PSP settlement files land in a bucket of their
 * own under `uploads/<organisation>/<configuration>/` (a browser POST presigned by the API, or the
 * deprecated blueprint upload); S3 notifies a queue of every object created there, and the file
 * processor takes the notifications off it in batches, writes the per-row results under
 * `reports/` and the report to the table. A notification that fails five receives waits in the
 * dead-letter queue, with an alarm; the file itself is never touched. The bucket's access logs go
 * to a second bucket.
 */
export class Reconciliation extends Construct {
  readonly bucket: Bucket;
  /** The bucket's server access logs (who uploaded or read which file, from where). */
  readonly accessLogsBucket: Bucket;
  /** S3's object-created notifications for `uploads/`. */
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly processor: ServiceFunction;
  /** Empty where the stage config turns alarms off. */
  readonly alarms: readonly Alarm[];

  constructor(scope: Construct, id: string, props: ReconciliationProps) {
    super(scope, id);
    const { stage, table, api } = props;
    const stack = Stack.of(this);
    const retention = Duration.days(stage.reconciliationRetentionDays);

    ({ queue: this.queue, deadLetterQueue: this.deadLetterQueue } = queueWithDeadLetters(this, '', stage, {
      // AWS's rule for SQS event sources: at least six times the function timeout.
      visibilityTimeout: Duration.seconds(FILE_PROCESSOR_TIMEOUT.toSeconds() * 6),
      maxReceiveCount: FILE_MAX_RECEIVE_COUNT,
    }));

    // A stage whose data goes with its stack (dev): the buckets empty themselves (every version)
    // when the stack is deleted, so teardown works. CDK's custom resource does it, on delete only.
    const emptiedOnDestroy = stage.removalPolicy === RemovalPolicy.DESTROY;

    // Its own access logs are not kept (AwsSolutions-S1 knows a log destination): only S3's
    // logging service writes here. Server access logs can go only to SSE-S3 encrypted buckets.
    this.accessLogsBucket = new Bucket(this, 'AccessLogs', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        {
          id: 'ExpireLogs',
          expiration: retention,
          abortIncompleteMultipartUploadAfter: ABORT_INCOMPLETE_UPLOADS_AFTER,
        },
      ],
      removalPolicy: stage.removalPolicy,
      autoDeleteObjects: emptiedOnDestroy,
    });

    // A name of its own, known before the bucket exists, breaks the cycle between the bucket (its
    // notification names the queue) and the queue policy (it names the bucket): CloudFormation
    // creates the policy first, so S3's check of the destination passes, and no custom resource
    // Lambda is needed to configure the notification afterwards.
    const bucketName = `svc-${stage.name}-reconciliation-${stack.account}-${stack.region}`;
    this.bucket = new Bucket(this, 'Bucket', {
      bucketName,
      // SSE-S3: the files are bank statements, readable by this service's roles alone; a KMS key
      // would add a key policy and grants for every reader and writer (and the browser's POST
      // would need kms:GenerateDataKey through the signing role) without narrowing who reads.
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // Nothing a user sent is lost: an upload to an existing key keeps the older file.
      versioned: true,
      lifecycleRules: [
        {
          id: 'NoncurrentVersionsAndLeftovers',
          noncurrentVersionExpiration: NONCURRENT_VERSION_RETENTION,
          abortIncompleteMultipartUploadAfter: ABORT_INCOMPLETE_UPLOADS_AFTER,
          // The delete markers expiration leaves behind, once their last version has expired.
          expiredObjectDeleteMarker: true,
        },
        { id: 'ExpireUploads', prefix: UPLOADS_PREFIX, expiration: retention },
        { id: 'ExpireReports', prefix: REPORTS_PREFIX, expiration: retention },
      ],
      cors: [
        {
          // The presigned POST of the upload parameters, sent by the organisation's browser.
          allowedMethods: [HttpMethods.POST],
          allowedOrigins: [...(stage.reconciliationUploadOrigins ?? DEFAULT_RECONCILIATION_UPLOAD_ORIGINS)],
          exposedHeaders: ['ETag'],
          maxAge: CORS_MAX_AGE.toSeconds(),
        },
      ],
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: 'reconciliation/',
      targetObjectKeyFormat: TargetObjectKeyFormat.partitionedPrefix(PartitionDateSource.EVENT_TIME),
      removalPolicy: stage.removalPolicy,
      autoDeleteObjects: emptiedOnDestroy,
    });
    this.notifyQueue(bucketName);

    const environment = {
      SVC_TABLE_NAME: table.tableName,
      SVC_STAGE: stage.name,
      SVC_RECONCILIATION_BUCKET: this.bucket.bucketName,
      // Report items expire with the files and results the bucket's lifecycle removes.
      SVC_RECONCILIATION_RETENTION_DAYS: String(stage.reconciliationRetentionDays),
    };

    this.processor = new ServiceFunction(this, 'FileProcessor', {
      entry: WORKERS.fileProcessor.entry,
      memoryMb: WORKERS.fileProcessor.memoryMb,
      description: `svc fundraising reconciliation file processor (${stage.name})`,
      timeout: FILE_PROCESSOR_TIMEOUT,
      environment: { ...environment, POWERTOOLS_SERVICE_NAME: 'file-processor' },
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });
    grantTableAccess(table, this.processor.role, FILE_PROCESSOR_TABLE_GRANT);
    this.allowObjects(this.processor, 's3:GetObject', UPLOADS_PREFIX);
    // The bucket is versioned, so S3's notifications name the version, and the processor reads
    // exactly that one: "To return a different version, you need s3:GetObjectVersion" (GetObject
    // with versionId, https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html).
    this.allowObjects(this.processor, 's3:GetObjectVersion', UPLOADS_PREFIX);
    this.allowObjects(this.processor, 's3:PutObject', REPORTS_PREFIX);
    // Grants the consume actions on the files queue (receive, delete, visibility); no send.
    this.processor.function.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: FILE_BATCH_SIZE,
        reportBatchItemFailures: true,
        maxConcurrency: FILE_PROCESSOR_MAX_CONCURRENCY,
      }),
    );

    // The API: presigned POSTs are signed with its role, so S3 checks this role's PutObject on the
    // uploaded key; blueprint uploads are PutObject too. Report rows are read from reports/ only.
    api.function.addEnvironment('SVC_RECONCILIATION_BUCKET', this.bucket.bucketName);
    this.allowObjects(api, 's3:PutObject', UPLOADS_PREFIX);
    this.allowObjects(api, 's3:GetObject', REPORTS_PREFIX);

    this.alarms = stage.alarms.enabled ? this.createAlarms(stage) : [];
  }

  /**
   * ObjectCreated under `uploads/` → the files queue, written as the bucket's own
   * NotificationConfiguration. The queue policy lets S3 send for this bucket of this account only
   * (what S3's notification destination grant does, without GetQueueUrl and GetQueueAttributes,
   * which S3 does not call); the bucket is created after it.
   */
  private notifyQueue(bucketName: string): void {
    const stack = Stack.of(this);
    const { policyDependable } = this.queue.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('s3.amazonaws.com')],
        actions: ['sqs:SendMessage'],
        resources: [this.queue.queueArn],
        conditions: {
          ArnEquals: {
            'aws:SourceArn': stack.formatArn({ service: 's3', region: '', account: '', resource: bucketName }),
          },
          StringEquals: { 'aws:SourceAccount': stack.account },
        },
      }),
    );
    const cfnBucket = this.bucket.node.defaultChild as CfnBucket;
    cfnBucket.notificationConfiguration = {
      queueConfigurations: [
        {
          event: EventType.OBJECT_CREATED,
          queue: this.queue.queueArn,
          filter: { s3Key: { rules: [{ name: 'prefix', value: UPLOADS_PREFIX }] } },
        },
      ],
    };
    if (!policyDependable) throw new Error('The files queue has no resource policy to depend on');
    cfnBucket.node.addDependency(policyDependable);
  }

  /**
   * One object action on the keys under one prefix of the bucket, and nothing bucket-wide. The
   * finding is acknowledged for exactly that resource: a prefix can only be granted with `*`.
   */
  private allowObjects(
    fn: ServiceFunction,
    action: 's3:GetObject' | 's3:GetObjectVersion' | 's3:PutObject',
    prefix: string,
  ): void {
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: [action], resources: [this.bucket.arnForObjects(`${prefix}*`)] }),
    );
    const bucketId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket);
    Validations.of(fn.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${prefix}*]`,
      reason: `${action} on the keys under ${prefix} of the reconciliation bucket only: file names are chosen by the uploader (presigned POST) or derived per report, so the prefix is the narrowest resource IAM can name.`,
    });
  }

  private createAlarms(stage: StageConfig): Alarm[] {
    const scope = new Construct(this, 'Alarms');
    const fiveMinutes = Duration.minutes(5);
    return [
      thresholdAlarm(
        scope,
        'DeadLetters',
        this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' }),
        1,
        `File notifications failed ${FILE_MAX_RECEIVE_COUNT} receives and wait in the dead-letter queue; their files have no report yet`,
      ),
      thresholdAlarm(
        scope,
        'ProcessorErrors',
        this.processor.function.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
        stage.alarms.functionErrors,
        'The reconciliation file processor threw or timed out',
      ),
    ];
  }
}
