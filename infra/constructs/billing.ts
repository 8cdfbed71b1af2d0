import { WORKERS } from '@svc/api';
import { Duration, Validations } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import type { IDestination } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { ContextAttribute, Schedule, ScheduleExpression, ScheduleTargetInput } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { RateExpression, StageConfig } from '../config/stages';
import { DEAD_LETTER_RETENTION, encryptedQueue, queueWithDeadLetters, schedulerRole } from './background-parts';
import { thresholdAlarm } from './service-alarms';
import { ServiceFunction } from './service-function';
import { grantTableAccess, partitionsOf, type TableGrant } from './table-access';

export interface BillingProps {
  stage: StageConfig;
  table: ITable;
  /** Stripe's keys: the worker charges saved Stripe payment methods off session. */
  stripeSecret: ISecret;
}

/** The run pages the whole due index and enqueues; minutes, not seconds, for a large backlog. */
export const BILLING_RUN_TIMEOUT = Duration.minutes(5);
/** One batch of at most BATCH_SIZE due subscriptions: invoice, charge attempt, charge. */
export const BILLING_WORKER_TIMEOUT = Duration.seconds(60);
const BATCH_SIZE = 10;
/** The run enqueues in bursts; a second lets batches fill without delaying a charge noticeably. */
const MAX_BATCHING_WINDOW = Duration.seconds(1);
/** Receives before a message moves to the dead-letter queue. */
export const MAX_RECEIVE_COUNT = 5;
/**
 * Concurrent worker invocations the queue may drive. The event source's own cap, not reserved
 * concurrency: with reserved concurrency Lambda throttles the poller's invocations, each throttled
 * receive counts toward MAX_RECEIVE_COUNT and healthy messages end up in the dead-letter queue.
 * Five keeps charges against the payment provider and writes to the table at a steady rate
 * (five batches of ten in flight) and leaves the account's concurrency to the API.
 */
export const BILLING_WORKER_MAX_CONCURRENCY = 5;
/** Delivery retries of the schedule, and of Lambda's asynchronous invocation of the run. */
export const BILLING_RUN_RETRIES = 2;

/** The run's SendMessage and the worker's: the same single action, on the billing queue only. */
const SEND_MESSAGE = 'sqs:SendMessage';

/**
 * The worker's table access: reads by key, and the writes of an invoice (in the subscription's
 * partition) and a charge attempt (a payment), and of a charge reminder's portal link (its mail's
 * outbox item: the service stack's mail.grantQueueing). IAM checks a TransactWriteItems call per
 * operation (Put, ConditionCheck), so these cover it; there is no Query (of the table or an
 * index), UpdateItem, DeleteItem, BatchWriteItem or Scan.
 */
export const BILLING_WORKER_TABLE_GRANT: TableGrant = {
  reads: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem'],
  // The subscription and its invoices (the transaction's condition check is on the subscription),
  // its plan, the account it pays into, the source it charges, and the payments of its attempts;
  // for a charge reminder, the supporter, the organisation and its portal settings.
  readKeys: [
    'SUBSCRIPTION#*',
    'PLAN#*',
    'ACCOUNT#*',
    'PAYMENT_SOURCE#*',
    'PAYMENT#*',
    ...partitionsOf('supporter', 'organisation', 'portal_settings'),
  ],
  indexes: [],
  writes: ['dynamodb:PutItem'],
  writeKeys: partitionsOf('subscription', 'invoice', 'payment', 'portal_link'),
};

/** The run reads single items on the table and queries the due index only (no table Query, no write). */
export const BILLING_RUN_TABLE_GRANT: TableGrant = {
  // It reads no item: the due index's keys are the subscriptions it enqueues.
  reads: [],
  indexes: ['due'],
  // A due-index partition is a shard of due work (DUE#<shard>).
  indexKeys: 'any',
  writes: [],
  writeKeys: [],
};

/**
 * Recurring billing: EventBridge Scheduler starts the billing run at the stage's rate; the run
 * pages the sparse `due` index and enqueues one message per due subscription; the worker takes
 * them off the queue in batches, reporting failed items so only those are received again, and a
 * message that fails MAX_RECEIVE_COUNT times waits in the dead-letter queue.
 */
/**
 * An SQS on-failure destination granting `sqs:SendMessage` only (SqsDestination grants
 * GetQueueAttributes and GetQueueUrl too, which Lambda does not need to deliver there).
 */
function sendOnlyDestination(queue: Queue): IDestination {
  return {
    bind: (_scope, fn) => {
      fn.addToRolePolicy(new PolicyStatement({ actions: [SEND_MESSAGE], resources: [queue.queueArn] }));
      return { destination: queue.queueArn };
    },
  };
}

export class Billing extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  /** Where the schedule puts a start of the run it could not deliver. */
  readonly scheduleDeadLetterQueue: Queue;
  /** Where Lambda puts a start of the run that failed every attempt (with the error). */
  readonly runFailureQueue: Queue;
  readonly run: ServiceFunction;
  readonly worker: ServiceFunction;
  readonly schedule: Schedule;
  /** The role the schedule assumes: invoke the run, and write to its own dead-letter queue. */
  readonly schedulerRole: Role;
  /** Empty where the stage config turns alarms off. */
  readonly alarms: readonly Alarm[];

  constructor(scope: Construct, id: string, props: BillingProps) {
    super(scope, id);
    const { stage, table } = props;

    ({ queue: this.queue, deadLetterQueue: this.deadLetterQueue } = queueWithDeadLetters(this, '', stage, {
      // AWS's rule for SQS event sources: six times the function timeout, plus the batching window.
      visibilityTimeout: Duration.seconds(
        BILLING_WORKER_TIMEOUT.toSeconds() * 6 + MAX_BATCHING_WINDOW.toSeconds({ integral: true }),
      ),
      maxReceiveCount: MAX_RECEIVE_COUNT,
    }));
    this.scheduleDeadLetterQueue = encryptedQueue(this, 'ScheduleDeadLetterQueue', stage, {
      retentionPeriod: DEAD_LETTER_RETENTION,
    });
    Validations.of(this.scheduleDeadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is a dead-letter queue: the billing schedule target names it (DeadLetterConfig), which the rule does not look for; a dead-letter queue of its own would only move the same undelivered starts once more.',
    });

    this.runFailureQueue = encryptedQueue(this, 'RunFailureQueue', stage, { retentionPeriod: DEAD_LETTER_RETENTION });
    Validations.of(this.runFailureQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is the billing run’s on-failure destination (a dead-letter queue for failed asynchronous invocations); a dead-letter queue of its own would only move the same failed starts once more.',
    });

    const environment = {
      SVC_TABLE_NAME: table.tableName,
      SVC_STAGE: stage.name,
      SVC_SIMULATED_PROVIDER: stage.simulatedProvider,
      SVC_BILLING_QUEUE_URL: this.queue.queueUrl,
    };

    this.run = new ServiceFunction(this, 'Run', {
      entry: WORKERS.billingRun.entry,
      memoryMb: WORKERS.billingRun.memoryMb,
      description: `svc fundraising billing run (${stage.name})`,
      timeout: BILLING_RUN_TIMEOUT,
      environment: { ...environment, POWERTOOLS_SERVICE_NAME: 'billing-run' },
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });
    grantTableAccess(table, this.run.role, BILLING_RUN_TABLE_GRANT);
    this.run.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: [SEND_MESSAGE], resources: [this.queue.queueArn] }),
    );
    // Scheduler invokes the run asynchronously, so its retry policy covers delivery only; Lambda's
    // own asynchronous retries cover a run that fails, and neither outlives one schedule period.
    const period = rateDuration(stage.billingSchedule);
    this.run.function.configureAsyncInvoke({
      retryAttempts: BILLING_RUN_RETRIES,
      maxEventAge: clampSeconds(period, 60, Duration.hours(6).toSeconds()),
      // A start that failed every attempt is kept with its error (and alarms), never dropped.
      onFailure: sendOnlyDestination(this.runFailureQueue),
    });

    this.worker = new ServiceFunction(this, 'Worker', {
      entry: WORKERS.billingWorker.entry,
      memoryMb: WORKERS.billingWorker.memoryMb,
      description: `svc fundraising billing worker (${stage.name})`,
      timeout: BILLING_WORKER_TIMEOUT,
      environment: {
        ...environment,
        SVC_STRIPE_SECRET_ARN: props.stripeSecret.secretArn,
        POWERTOOLS_SERVICE_NAME: 'billing-worker',
      },
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });
    props.stripeSecret.grantRead(this.worker.role);
    grantTableAccess(table, this.worker.role, BILLING_WORKER_TABLE_GRANT);
    // Nothing else: the worker reads and writes items by key (no index) and sends no messages (the
    // run enqueues; a charge's retry is found again in the due index by a later run).
    // Grants the worker's role the consume actions on the billing queue (receive, delete, visibility).
    this.worker.function.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: BATCH_SIZE,
        maxBatchingWindow: MAX_BATCHING_WINDOW,
        reportBatchItemFailures: true,
        maxConcurrency: BILLING_WORKER_MAX_CONCURRENCY,
      }),
    );

    this.schedulerRole = this.schedulerRoleFor(this.run, this.scheduleDeadLetterQueue);
    this.schedule = new Schedule(this, 'Schedule', {
      schedule: ScheduleExpression.expression(stage.billingSchedule),
      description: `Starts the svc fundraising billing run (${stage.name})`,
      target: new LambdaInvoke(this.run.function, {
        // The policy is on the role already; LambdaInvoke's own grant would add `<function>:*`.
        role: this.schedulerRole.withoutPolicyUpdates(),
        deadLetterQueue: this.scheduleDeadLetterQueue,
        retryAttempts: BILLING_RUN_RETRIES,
        // A start the next one overtakes is worthless: the next run sees everything still due.
        maxEventAge: clampSeconds(period, 60, Duration.days(1).toSeconds()),
        // The same for every attempt of one start, so the run can bill "as of" its scheduled time.
        input: ScheduleTargetInput.fromObject({
          scheduledTime: ContextAttribute.scheduledTime,
          executionId: ContextAttribute.executionId,
        }),
      }),
    });

    this.alarms = stage.alarms.enabled ? this.createAlarms(stage) : [];
  }

  private schedulerRoleFor(run: ServiceFunction, deadLetterQueue: Queue): Role {
    return schedulerRole(this, 'SchedulerRole', {
      description: 'EventBridge Scheduler: starts the billing run (execution role)',
      policyName: 'StartBillingRun',
      statements: [
        new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [run.function.functionArn] }),
        new PolicyStatement({ actions: [SEND_MESSAGE], resources: [deadLetterQueue.queueArn] }),
      ],
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
        `Billing messages failed ${MAX_RECEIVE_COUNT} receives and wait in the dead-letter queue`,
      ),
      thresholdAlarm(
        scope,
        'ScheduleDeadLetters',
        this.scheduleDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: fiveMinutes,
          statistic: 'Maximum',
        }),
        1,
        'The schedule could not start the billing run; the start waits in its dead-letter queue',
      ),
      thresholdAlarm(
        scope,
        'RunFailures',
        this.runFailureQueue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' }),
        1,
        `A billing run failed ${BILLING_RUN_RETRIES + 1} times; the start and its error wait in the run-failure queue`,
      ),
      thresholdAlarm(
        scope,
        'RunErrors',
        this.run.function.metricErrors({ period: Duration.minutes(15), statistic: 'Sum' }),
        1,
        'The billing run threw or timed out',
      ),
      thresholdAlarm(
        scope,
        'WorkerErrors',
        this.worker.function.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
        stage.alarms.functionErrors,
        'The billing worker threw or timed out',
      ),
    ];
  }
}

const RATE_UNIT_MINUTES: Readonly<Record<string, number>> = {
  minute: 1,
  minutes: 1,
  hour: 60,
  hours: 60,
  day: 1440,
  days: 1440,
};

/** The period of a `rate(...)` expression from the stage config. */
export function rateDuration(expression: RateExpression): Duration {
  const match = /^rate\((\d+) (minutes?|hours?|days?)\)$/.exec(expression);
  const unit = match?.[2] ? RATE_UNIT_MINUTES[match[2]] : undefined;
  if (!match?.[1] || unit === undefined || Number(match[1]) < 1) {
    throw new Error(`Not a rate expression EventBridge Scheduler accepts: ${expression}`);
  }
  return Duration.minutes(Number(match[1]) * unit);
}

function clampSeconds(duration: Duration, min: number, max: number): Duration {
  return Duration.seconds(Math.min(max, Math.max(min, duration.toSeconds())));
}
