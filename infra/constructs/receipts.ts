import { RECEIPT_FONT_FILES, RECEIPT_PAYMENT_EVENTS, WORKERS } from '@svc/api';
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type EventBus, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  type IBucket,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { StageConfig } from '../config/stages';
import { queueWithDeadLetters } from './background-parts';
import { EVENTS_RULE_SOURCE } from './events';
import { thresholdAlarm } from './service-alarms';
import { ServiceFunction } from './service-function';
import { grantTableAccess, partitionsOf, type TableGrant, writeGrant } from './table-access';

/** The receipts' documents, as services/receipts/src/storage/documents.ts keys them. */
export const RECEIPTS_PREFIX = 'receipts/';
/** A page of a few hundred supporters, its PDFs and mails when the batch sends them, in well under this. */
export const RECEIPTS_WORKER_TIMEOUT = Duration.minutes(5);
/**
 * Receipt work on at most this many invocations at once, whatever the number of batches: a batch
 * of 100,000 supporters is a chain of page messages, so several organisations' batches take
 * turns at the queue instead of one taking every worker, and the table sees a bounded load.
 */
export const RECEIPTS_WORKER_MAX_CONCURRENCY = 4;
export const RECEIPTS_MAX_RECEIVE_COUNT = 5;

/**
 * The worker's table calls (services/receipts/src/domain/*): reads of the batch, the settings, the
 * sequence, a supporter's RECEIPT_OF and receipts, the supporters named (the PDF, the mail) and
 * the payment an event names; receipts, batches and RECEIPT_OF put (versioned, or new), the
 * sequence moved and a first RECEIPT_OF filled by UpdateItem. Its gifts come from the search
 * engine; its mails are the outbox's (mail.grantQueueing).
 */
export const RECEIPTS_WORKER_TABLE_GRANT: TableGrant = {
  reads: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
  readKeys: [
    ...partitionsOf('receipt_batch', 'receipt_settings', 'receipt_sequence', 'receipt_of', 'receipt'),
    ...partitionsOf('supporter', 'payment'),
  ],
  indexes: [],
  ...writeGrant(
    { actions: ['dynamodb:PutItem'], keys: partitionsOf('receipt', 'receipt_batch', 'receipt_of') },
    { actions: ['dynamodb:UpdateItem'], keys: partitionsOf('receipt_sequence', 'receipt_of') },
  ),
};

export interface ReceiptsProps {
  stage: StageConfig;
  table: ITable;
  /** The `receipts` domain function: it queues batches and serves the PDFs. */
  api: ServiceFunction;
  /** The event bus: a rule sends it the payment events a receipt depends on. */
  bus: EventBus;
  /** Where the bucket's server access logs go (the stack's access-log bucket). */
  accessLogsBucket: IBucket;
}

/**
 * Yearly receipts: the receipts queue (batch pages and payment events), its worker, and the
 * bucket that keeps every receipt's PDF for the stage's retention (versioned, SSE-S3, TLS only,
 * private). The bus sends the refund and dispute events of payments here, so a receipt issued
 * before money went back is voided and replaced.
 */
export class Receipts extends Construct {
  readonly bucket: Bucket;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly worker: ServiceFunction;
  readonly rule: Rule;
  readonly alarms: readonly Alarm[];

  constructor(scope: Construct, id: string, props: ReceiptsProps) {
    super(scope, id);
    const { stage, table, api } = props;
    const retention = Duration.days(stage.receiptRetentionDays);
    ({ queue: this.queue, deadLetterQueue: this.deadLetterQueue } = queueWithDeadLetters(this, '', stage, {
      // AWS's rule for SQS event sources: at least six times the function timeout.
      visibilityTimeout: Duration.seconds(RECEIPTS_WORKER_TIMEOUT.toSeconds() * 6),
      maxReceiveCount: RECEIPTS_MAX_RECEIVE_COUNT,
    }));

    this.bucket = new Bucket(this, 'Bucket', {
      // SSE-S3: read by this service's roles alone (as the reconciliation bucket, which says why not KMS).
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: true,
      lifecycleRules: [
        {
          id: 'Retention',
          prefix: RECEIPTS_PREFIX,
          expiration: retention,
          noncurrentVersionExpiration: retention,
          expiredObjectDeleteMarker: false,
        },
        { id: 'Leftovers', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      serverAccessLogsBucket: props.accessLogsBucket,
      serverAccessLogsPrefix: 'receipts/',
      removalPolicy: stage.removalPolicy,
      autoDeleteObjects: stage.removalPolicy === RemovalPolicy.DESTROY,
    });

    const bundleTime = { define: {}, alias: {}, files: { ...RECEIPT_FONT_FILES } };
    this.worker = new ServiceFunction(this, 'Worker', {
      entry: WORKERS.receiptsWorker.entry,
      memoryMb: WORKERS.receiptsWorker.memoryMb,
      description: `svc fundraising receipts worker (${stage.name})`,
      timeout: RECEIPTS_WORKER_TIMEOUT,
      environment: {
        SVC_TABLE_NAME: table.tableName,
        SVC_STAGE: stage.name,
        SVC_RECEIPTS_BUCKET: this.bucket.bucketName,
        SVC_RECEIPTS_QUEUE_URL: this.queue.queueUrl,
        POWERTOOLS_SERVICE_NAME: 'receipts-worker',
      },
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
      bundleTime,
    });
    grantTableAccess(table, this.worker.role, RECEIPTS_WORKER_TABLE_GRANT);
    this.allowDocuments(this.worker);
    // The next page of a batch is a message of its own.
    this.queue.grantSendMessages(this.worker.role);
    this.worker.function.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 1,
        reportBatchItemFailures: true,
        maxConcurrency: RECEIPTS_WORKER_MAX_CONCURRENCY,
      }),
    );

    api.function.addEnvironment('SVC_RECEIPTS_BUCKET', this.bucket.bucketName);
    api.function.addEnvironment('SVC_RECEIPTS_QUEUE_URL', this.queue.queueUrl);
    this.allowDocuments(api);
    this.queue.grantSendMessages(api.role);

    // The payment events after which an issued receipt may be wrong, to the receipts queue (the
    // rule's target grant: the queue policy lets events.amazonaws.com send for this rule only).
    this.rule = new Rule(this, 'PaymentEventsRule', {
      eventBus: props.bus,
      description: `Refunds and disputes of payments to the receipts queue (${stage.name})`,
      eventPattern: { source: [EVENTS_RULE_SOURCE], detailType: [...RECEIPT_PAYMENT_EVENTS] },
      targets: [new SqsQueue(this.queue, { deadLetterQueue: this.deadLetterQueue })],
    });

    this.alarms = stage.alarms.enabled ? this.createAlarms(stage) : [];
  }

  /**
   * A function that serves receipts' documents besides the receipts domain (the donor portal: a
   * donor's own receipts): the bucket's name, its documents under receipts/, and the fonts.
   */
  serveDocumentsFrom(fn: ServiceFunction): void {
    fn.function.addEnvironment('SVC_RECEIPTS_BUCKET', this.bucket.bucketName);
    this.allowDocuments(fn);
  }

  /** Reads and writes of receipt documents, under receipts/ only. */
  private allowDocuments(fn: ServiceFunction): void {
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:GetObject', 's3:PutObject'],
        resources: [this.bucket.arnForObjects(`${RECEIPTS_PREFIX}*`)],
      }),
    );
    const bucketId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket);
    Validations.of(fn.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${RECEIPTS_PREFIX}*]`,
      reason:
        'Get and put of receipt documents under receipts/ of the receipts bucket only: one key per receipt and status, so the prefix is the narrowest resource IAM can name.',
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
        `Receipt work failed ${RECEIPTS_MAX_RECEIVE_COUNT} receives (a batch page, or a payment's refund whose receipt may need replacing) and waits in the dead-letter queue`,
      ),
      thresholdAlarm(
        scope,
        'WorkerErrors',
        this.worker.function.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
        stage.alarms.functionErrors,
        'The receipts worker threw or timed out',
      ),
    ];
  }
}
