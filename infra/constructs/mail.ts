import { WORKERS } from '@svc/api';
import { BUSINESS_METRICS } from '@svc/core';
import { MAIL_CLAIM_SECONDS, MAIL_MAX_RECEIVES, MAIL_REQUEUE_SECONDS, MAIL_WORKER_TIMEOUT_SECONDS } from '@svc/mail';
import { Duration, Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Schedule, ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { RateExpression, StageConfig } from '../config/stages';
import { queueWithDeadLetters, schedulerRole } from './background-parts';
import { businessMetric } from './operations-alarms';
import { thresholdAlarm } from './service-alarms';
import { ServiceFunction } from './service-function';
import { grantTableAccess, partitionsOf, type TableGrant, writeGrant } from './table-access';

export interface MailProps {
  stage: StageConfig;
  table: ITable;
}

/** The outbox items' partitions (@svc/mail's MAIL entity: `pk = MAIL#<mail id>`). */
export const MAIL_KEYS = partitionsOf('mail');

/** How often the sweeper looks for unsent mails past their due time. */
export const MAIL_SWEEP_SCHEDULE: RateExpression = 'rate(5 minutes)';
/** Mails per worker invocation: each is one SendEmail, one at a time. */
const BATCH_SIZE = 5;
/**
 * The event source's concurrency: 2 invocations of 5 mails one after another, so at most 2
 * SendEmail calls in flight. SES's sending rate is a quota of the account and region, shared by
 * every stage there (docs/operations.md, "Mail"): raise this with the quota, not before.
 */
export const MAIL_WORKER_MAX_CONCURRENCY = 2;
/** A mail unsent this long (since queued) alarms: four sweeps past its first due time. */
export const MAIL_UNSENT_AGE_ALARM = Duration.hours(1);

/**
 * The worker: reads and updates outbox items (claim, release, mark sent), nothing else of the
 * table. UpdateItem only: no PutItem, the worker never creates a mail.
 */
export const MAIL_WORKER_TABLE_GRANT: TableGrant = {
  reads: ['dynamodb:GetItem'],
  readKeys: MAIL_KEYS,
  indexes: [],
  ...writeGrant({ actions: ['dynamodb:UpdateItem'], keys: [...MAIL_KEYS] }),
};

/** The sweeper: the due index's mail shards, the outbox items, and their next due time. */
export const MAIL_SWEEPER_TABLE_GRANT: TableGrant = {
  reads: ['dynamodb:GetItem', 'dynamodb:Query'],
  readKeys: MAIL_KEYS,
  indexes: ['due'],
  // As the other workers' due-index queries: which partition key IAM matches
  // dynamodb:LeadingKeys against on an index query AWS does not state, so not held to keys.
  indexKeys: 'any',
  ...writeGrant({ actions: ['dynamodb:UpdateItem'], keys: [...MAIL_KEYS] }),
};

/** A function that queues mail (queueMail): writes a new outbox item, reads it back on a repeat. */
export const MAIL_QUEUE_TABLE_GRANT: TableGrant = {
  reads: ['dynamodb:GetItem'],
  readKeys: MAIL_KEYS,
  indexes: [],
  ...writeGrant({ actions: ['dynamodb:PutItem'], keys: [...MAIL_KEYS] }),
};

/**
 * A function that writes its mails only in its own transactions (mailOutboxWrite, the portal's
 * link and its mail together) and never reads one back: the outbox put alone.
 */
export const MAIL_OUTBOX_TABLE_GRANT: TableGrant = {
  reads: [],
  indexes: [],
  ...writeGrant({ actions: ['dynamodb:PutItem'], keys: [...MAIL_KEYS] }),
};

/**
 * Mail through Amazon SES (API v2): the mail queue and its dead-letter queue, the worker that
 * sends (SQS event source, failed messages reported alone), the sweeper on a schedule that
 * re-queues unsent mails, and their alarms. The worker may send only from the stage's identity.
 */
export class Mail extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly worker: ServiceFunction;
  readonly sweeper: ServiceFunction;
  readonly schedule: Schedule;
  /** `arn:aws:ses:<region>:<account>:identity/<stage identity>`. */
  readonly identityArn: string;
  readonly alarms: readonly Alarm[];
  private readonly table: ITable;

  constructor(scope: Construct, id: string, props: MailProps) {
    super(scope, id);
    const { stage, table } = props;
    this.table = table;
    const timeout = Duration.seconds(MAIL_WORKER_TIMEOUT_SECONDS);
    ({ queue: this.queue, deadLetterQueue: this.deadLetterQueue } = queueWithDeadLetters(this, '', stage, {
      // AWS's rule for SQS event sources: at least six times the function's timeout.
      visibilityTimeout: Duration.seconds(MAIL_WORKER_TIMEOUT_SECONDS * 6),
      maxReceiveCount: MAIL_MAX_RECEIVES,
    }));
    // The claim must outlast an invocation, or a live worker's mail could be taken and sent twice.
    if (MAIL_CLAIM_SECONDS <= MAIL_WORKER_TIMEOUT_SECONDS) throw new Error('A mail claim must outlast the worker');

    // An identity ARN (Service Authorization Reference, Amazon Simple Email Service v2, resource
    // type `identity`: arn:${Partition}:ses:${Region}:${Account}:identity/${IdentityName}).
    this.identityArn = Stack.of(this).formatArn({
      service: 'ses',
      resource: 'identity',
      resourceName: stage.mail.identity,
    });

    const environment = {
      SVC_TABLE_NAME: table.tableName,
      SVC_STAGE: stage.name,
      SVC_MAIL_QUEUE_URL: this.queue.queueUrl,
    };
    this.worker = new ServiceFunction(this, 'Worker', {
      entry: WORKERS.mailWorker.entry,
      memoryMb: WORKERS.mailWorker.memoryMb,
      description: `svc fundraising mail worker (${stage.name})`,
      timeout,
      environment: { ...environment, SVC_MAIL_FROM: stage.mail.from, POWERTOOLS_SERVICE_NAME: 'mail-worker' },
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });
    grantTableAccess(table, this.worker.role, MAIL_WORKER_TABLE_GRANT);
    // SendEmail on the stage's identity only. The Service Authorization Reference lists SendEmail
    // (SES v2) with the resource types configuration-set, contact-list, identity (required) and
    // template (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsimpleemailservicev2.html);
    // the worker names no configuration set, contact list or template, so the identity is the one
    // resource it needs. ses:SendRawEmail is SES v1's and not granted.
    this.worker.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['ses:SendEmail'], resources: [this.identityArn] }),
    );
    // Grants the consume actions on the mail queue (receive, delete, visibility).
    this.worker.function.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: BATCH_SIZE,
        reportBatchItemFailures: true,
        maxConcurrency: MAIL_WORKER_MAX_CONCURRENCY,
      }),
    );

    this.sweeper = new ServiceFunction(this, 'Sweeper', {
      entry: WORKERS.mailSweeper.entry,
      memoryMb: WORKERS.mailSweeper.memoryMb,
      description: `svc fundraising mail sweeper (${stage.name})`,
      timeout: Duration.minutes(2),
      environment: { ...environment, POWERTOOLS_SERVICE_NAME: 'mail-sweeper' },
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });
    grantTableAccess(table, this.sweeper.role, MAIL_SWEEPER_TABLE_GRANT);
    this.sweeper.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }),
    );
    // A missed sweep is taken by the next one (five minutes on): no retries.
    this.sweeper.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(5) });
    const role = schedulerRole(this, 'ScheduleRole', {
      description: 'EventBridge Scheduler: starts the mail sweeper (execution role)',
      policyName: 'StartMailSweeper',
      statements: [
        new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.sweeper.function.functionArn] }),
      ],
    });
    this.schedule = new Schedule(this, 'Schedule', {
      schedule: ScheduleExpression.expression(MAIL_SWEEP_SCHEDULE),
      description: `Queues unsent mails again (${stage.name})`,
      target: new LambdaInvoke(this.sweeper.function, {
        role: role.withoutPolicyUpdates(),
        retryAttempts: 0,
        maxEventAge: Duration.minutes(5),
      }),
    });

    this.alarms = stage.alarms.enabled ? this.createAlarms(stage) : [];
  }

  /**
   * Lets a function queue mail: the outbox write, and SendMessage on the mail queue. `queueMail`
   * also reads a mail back (its id queued before); `outbox`, for code that writes its mails with
   * mailOutboxWrite in its own transactions and then enqueueMail, puts only.
   */
  grantQueueing(fn: ServiceFunction, grantee: IGrantable = fn.role, use: 'queueMail' | 'outbox' = 'queueMail'): void {
    fn.function.addEnvironment('SVC_MAIL_QUEUE_URL', this.queue.queueUrl);
    grantTableAccess(this.table, grantee, use === 'outbox' ? MAIL_OUTBOX_TABLE_GRANT : MAIL_QUEUE_TABLE_GRANT);
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }),
    );
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
        `Mail messages failed ${MAIL_MAX_RECEIVES} receives and wait in the dead-letter queue (the sweeper queues their mails again every ${MAIL_REQUEUE_SECONDS / 60} minutes; see the worker's log for SES's error)`,
      ),
      // The oldest unsent mail the sweeper found (MailUnsentAge, seconds since queued). The sweeper
      // reports every five minutes, 0 when none: no data is a sweeper not running, which breaches.
      new Alarm(scope, 'UnsentAge', {
        metric: businessMetric(stage.name, BUSINESS_METRICS.mailUnsentAge, {}, Duration.minutes(15), 'Maximum'),
        threshold: MAIL_UNSENT_AGE_ALARM.toSeconds(),
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.BREACHING,
        alarmDescription: `Mails stay unsent: the oldest waited at least ${MAIL_UNSENT_AGE_ALARM.toMinutes()} minutes since queued (MailUnsentAge), or the mail sweeper did not report for 15 minutes`,
      }),
      thresholdAlarm(
        scope,
        'WorkerErrors',
        this.worker.function.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
        stage.alarms.functionErrors,
        'The mail worker threw or timed out',
      ),
    ];
  }
}
