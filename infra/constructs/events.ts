import { STREAM_PUBLISHER_FILTER, WORKERS } from '@svc/api';
import {
  DELIVERY_MAX_RECEIVES,
  DELIVERY_PARTITION_PREFIX,
  EVENT_SOURCE,
  PACING_ATTRIBUTES,
  PACING_PREFIXES,
  WORKER_BATCH_WRITE_PREFIXES,
} from '@svc/webhooks';
import { Duration, Validations } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { type IGrantable, PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Schedule, ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { RateExpression, StageConfig } from '../config/stages';
import { DEAD_LETTER_RETENTION, encryptedQueue, queueWithDeadLetters, schedulerRole } from './background-parts';
import { thresholdAlarm } from './service-alarms';
import { ServiceFunction, type ServiceFunctionProps, TRACING_WILDCARD_REASON } from './service-function';
import { grantTableAccess, type TableGrant } from './table-access';

export interface EventsProps {
  stage: StageConfig;
  /** The service table; its stream (NEW_AND_OLD_IMAGES) feeds the stream publisher. */
  table: ITable;
  /**
   * The `webhooks` domain function: it seals webhook secrets with the key and sends a redelivery
   * to the delivery queue, so it gets the queue URL, the key id and those two grants here.
   */
  webhooksApi: ServiceFunction;
  /**
   * The hosted onboarding page's public address (SVC_CONNECT_URL): onboarding process events
   * carry each process's `onboarding_url`, and the publisher shapes them without a request.
   */
  connectUrl: string;
}

/** The `source` the stream publisher puts on every event; the fan-out rule matches it. */
export const EVENTS_RULE_SOURCE = EVENT_SOURCE;

/** Stream records per publisher invocation (DynamoDB's default batch). */
export const STREAM_BATCH_SIZE = 100;
/**
 * Retries of a failing stream batch before its records are given up (bisected on the way, so a
 * poison record ends up alone): without a bound one bad record would hold its shard until the
 * stream drops it after 24 hours, and every event behind it would wait as long.
 */
export const STREAM_RETRY_ATTEMPTS = 10;
/** The stream's own retention: a record is never dropped for its age before DynamoDB drops it. */
export const STREAM_MAX_RECORD_AGE = Duration.days(1);
/** At most 100 records, their events ten to a PutEvents call (plus a read for charge attempts). */
export const STREAM_PUBLISHER_TIMEOUT = Duration.seconds(60);

/**
 * A batch of ten events: their gsi2 queries, the endpoints read, conditional puts, and the new
 * deliveries sent ten to a SendMessageBatch.
 */
export const FAN_OUT_TIMEOUT = Duration.seconds(30);
/** Events per fan-out invocation (SQS's maximum without a batching window). */
export const FAN_OUT_BATCH_SIZE = 10;
/**
 * Concurrent fan-out invocations the fan-out queue may drive (the event source's cap, not reserved
 * concurrency, for the reason billing.ts gives): five batches of ten events in flight keep the
 * table writes and the sends to the delivery queue at a steady rate, whatever the burst.
 */
export const FAN_OUT_MAX_CONCURRENCY = 5;
/**
 * Receives before an event moves to the fan-out dead-letter queue: a message the handler reports
 * failed (or a batch that throws or times out) comes back after the visibility timeout. Fan-out
 * is idempotent (delivery uuids derive from event and endpoint), so every retry is safe.
 */
export const FAN_OUT_MAX_RECEIVE_COUNT = 5;
/**
 * The rule's retry policy covers putting the event on the fan-out queue only (throttling, an
 * unavailable queue): keep trying for as long as the stream could replay the event (24 hours),
 * then the dead-letter queue.
 */
export const FAN_OUT_TARGET_RETRIES = 185;
export const FAN_OUT_TARGET_MAX_EVENT_AGE = Duration.hours(24);

/**
 * Ten deliveries in parallel, each at most one POST with a 10 s timeout, a KMS decrypt and a few
 * table writes. It must stay below the delivery lease (ATTEMPT_LEASE_SECONDS, 60 s in
 * services/webhooks): a worker that times out never overlaps the next worker's attempt.
 */
export const DELIVERY_WORKER_TIMEOUT = Duration.seconds(30);
export const DELIVERY_BATCH_SIZE = 10;
/**
 * Concurrent worker invocations the delivery queue may drive (the event source's cap, not
 * reserved concurrency, for the reason billing.ts gives): a hundred batches of ten, so at most
 * 1,000 requests to receivers at once, whatever the back-log. An invocation waits for its batch's
 * slowest receiver, and one organisation has at most DEFAULT_IN_FLIGHT_PER_ORGANISATION sends in
 * flight (services/webhooks/src/domain/in-flight.ts), so it holds at most that many invocations:
 * the cap is kept well above it, and the others always find invocations free (issue 44).
 */
export const DELIVERY_WORKER_MAX_CONCURRENCY = 100;
/** Receives before a delivery message moves to the dead-letter queue. */
export const DELIVERY_MAX_RECEIVE_COUNT = DELIVERY_MAX_RECEIVES;
/** SQS's longest retention: dead letters, and the queues whose messages are the only copy of their work. */

/** Retries wait in the due index; the sweeper sends what is due to the queue every minute. */
export const SWEEP_SCHEDULE: RateExpression = 'rate(1 minute)';
/**
 * What a sweep takes before it falls due: up to the next sweep, each sent with the queue's delay
 * until its second, so a paced endpoint's reserved seconds are kept (delivery-sweeper.ts).
 */
export const SWEEP_LOOKAHEAD_SECONDS = 60;
/** Below the period, so one sweep has finished (or timed out) before the next one starts. */
export const SWEEPER_TIMEOUT = Duration.seconds(50);

/** Thresholds of the pipeline's alarms. */
export const DELIVERY_BACKLOG_AGE_ALARM = Duration.minutes(15);
/** Fan-out takes events within seconds; five minutes of waiting means it is stuck or throttled. */
export const FAN_OUT_BACKLOG_AGE_ALARM = Duration.minutes(5);
export const STREAM_ITERATOR_AGE_ALARM = Duration.minutes(5);

/** The encryption context the webhooks code passes to Encrypt and Decrypt (services/webhooks secrets.ts). */
export const WEBHOOK_SECRET_CONTEXT = { purpose: 'webhook-secret' } as const;

/** Point reads: the stream publisher shapes subscriptions' events from what they name. */
export const STREAM_PUBLISHER_TABLE_GRANT: TableGrant = {
  reads: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
  // Subscriptions' event data (services/subscriptions event-data.ts, domain/shapes.ts): a charge
  // attempt's event reads its subscription, a subscription's its plan's name, an invoice's the
  // payment that paid it (what was refunded). No other domain's builder reads the table.
  readKeys: ['SUBSCRIPTION#*', 'PLAN#*', 'PAYMENT#*'],
  indexes: [],
  writes: [],
  writeKeys: [],
};
/**
 * Reads endpoints (Query on gsi2, by URL), writes a delivery too large to travel in its message
 * (conditional put, in the delivery's partition only).
 */
export const FAN_OUT_TABLE_GRANT: TableGrant = {
  reads: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
  // The endpoints an event's subscriptions name.
  readKeys: ['WEBHOOK#*'],
  indexes: ['gsi2'],
  // The organisation's subscriptions to an event (gsi2pk = ORG#<org>#EVENT#<name>), as before:
  // which partition key IAM matches on an index query is not stated by AWS (docs/security.md).
  indexKeys: 'any',
  writes: ['dynamodb:PutItem'],
  writeKeys: [`${DELIVERY_PARTITION_PREFIX}*`],
};
/**
 * Reads the delivery and its endpoint; writes the delivery (puts, alone or as a TransactWriteItems,
 * which IAM checks per operation). The Webhook Responses of a batch, with the deliveries that
 * ended, go out in one BatchWriteItem; IAM sees one action for its puts and deletes alike, so
 * every write is held to Webhook Response and delivery partitions: it can write (or delete)
 * nothing else. No update, query or scan.
 */
export const DELIVERY_WORKER_TABLE_GRANT: TableGrant = {
  reads: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
  // The delivery, its endpoint (and sealed secret), the endpoint's pause, and the Webhook Response
  // a retried attempt finds already written. No client, organisation or payment: a delivery
  // carries its event whole (services/webhooks domain/delivery-attempt.ts).
  readKeys: ['DELIVERY#*', 'WEBHOOK#*', 'WEBHOOK_PAUSE#*', 'WEBHOOK_RESPONSE#*'],
  indexes: [],
  writes: ['dynamodb:PutItem', 'dynamodb:BatchWriteItem'],
  writeKeys: WORKER_BATCH_WRITE_PREFIXES.map((prefix) => `${prefix}*`),
  attributeUpdates: [
    {
      leadingKeys: PACING_PREFIXES.map((prefix) => `${prefix}*`),
      attributes: PACING_ATTRIBUTES,
      why: "an endpoint's pace: ADD to a second's count, SET a pause (services/webhooks/src/domain/pacing.ts)",
    },
  ],
};

/**
 * The sweeper pages the due index, re-reads each due delivery and writes it back marked queued
 * (guarded by its version) before sending it: reads and puts of delivery items only.
 */
export const SWEEPER_TABLE_GRANT: TableGrant = {
  reads: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
  readKeys: [`${DELIVERY_PARTITION_PREFIX}*`],
  indexes: ['due'],
  // A due-index partition is a shard of due work, named by no entity.
  indexKeys: 'any',
  writes: ['dynamodb:PutItem'],
  writeKeys: [`${DELIVERY_PARTITION_PREFIX}*`],
};

const SEND_MESSAGE = 'sqs:SendMessage';

interface FunctionDefaults {
  base: Record<string, string>;
  common: Pick<ServiceFunctionProps, 'logRetention' | 'removalPolicy'>;
}

/**
 * The event pipeline behind webhooks: the table stream's publisher puts each written item's
 * events on the bus; a rule sends every `svc` event to the fan-out queue (the message body is the
 * whole event); the fan-out worker takes them in batches of ten and queues one delivery per
 * subscribed endpoint and event (the delivery travels in its message); the delivery worker's
 * claim writes it, then it POSTs to the receiver; deliveries whose next attempt is due (retries,
 * lapsed leases) wait in the table's due index, and the sweeper queues them again every minute. Webhook
 * passwords and HMAC keys are sealed with a KMS key of their own. Every stage that can lose work
 * has a dead-letter queue.
 */
export class Events extends Construct {
  readonly bus: EventBus;
  /** Routes every `svc` event to the fan-out queue. */
  readonly rule: Rule;
  /** Seals webhook passwords and HMAC keys (encryption context `purpose=webhook-secret`). */
  readonly secretsKey: Key;
  readonly deliveryQueue: Queue;
  readonly deliveryDeadLetterQueue: Queue;
  /** Every `svc` event, as the rule puts it (the whole event is the body); the fan-out worker's source. */
  readonly fanOutQueue: Queue;
  /**
   * Events fan-out never handled: the rule could not put them on the fan-out queue, or they failed
   * FAN_OUT_MAX_RECEIVE_COUNT receives. Either way the message body is the event.
   */
  readonly fanOutDeadLetterQueue: Queue;
  /** Where the stream event source puts the position of records it gave up on. */
  readonly streamDeadLetterQueue: Queue;
  readonly streamPublisher: ServiceFunction;
  readonly fanOut: ServiceFunction;
  readonly deliveryWorker: ServiceFunction;
  readonly sweeper: ServiceFunction;
  readonly sweepSchedule: Schedule;
  /** The role the sweep schedule assumes: invoke the sweeper, nothing else. */
  readonly schedulerRole: Role;
  /** Empty where the stage config turns alarms off. */
  readonly alarms: readonly Alarm[];

  constructor(scope: Construct, id: string, props: EventsProps) {
    super(scope, id);
    const { stage } = props;
    this.secretsKey = new Key(this, 'WebhookSecretsKey', {
      description: `svc fundraising webhook passwords and HMAC keys (${stage.name})`,
      alias: `alias/svc-${stage.name}-webhook-secrets`,
      enableKeyRotation: true,
      // Retained wherever the table is: sealed secrets in a kept table must stay readable.
      removalPolicy: stage.removalPolicy,
    });

    this.bus = new EventBus(this, 'Bus', {
      eventBusName: `svc-${stage.name}-events`,
      description: `svc fundraising domain events (${stage.name})`,
    });

    ({ queue: this.deliveryQueue, deadLetterQueue: this.deliveryDeadLetterQueue } = queueWithDeadLetters(
      this,
      'Delivery',
      stage,
      {
        // A first attempt lives only in its message until the worker claims it: kept as long as SQS allows.
        retentionPeriod: DEAD_LETTER_RETENTION,
        // AWS's rule for SQS event sources: at least six times the function timeout.
        visibilityTimeout: Duration.seconds(DELIVERY_WORKER_TIMEOUT.toSeconds() * 6),
        maxReceiveCount: DELIVERY_MAX_RECEIVE_COUNT,
      },
    ));
    ({ queue: this.fanOutQueue, deadLetterQueue: this.fanOutDeadLetterQueue } = queueWithDeadLetters(
      this,
      'FanOut',
      stage,
      {
        // An event lives only in its message until fan-out has queued its deliveries.
        retentionPeriod: DEAD_LETTER_RETENTION,
        // AWS's rule for SQS event sources: at least six times the function timeout (no batching window).
        visibilityTimeout: Duration.seconds(FAN_OUT_TIMEOUT.toSeconds() * 6),
        maxReceiveCount: FAN_OUT_MAX_RECEIVE_COUNT,
      },
    ));
    this.streamDeadLetterQueue = encryptedQueue(this, 'StreamDeadLetterQueue', stage, {
      retentionPeriod: DEAD_LETTER_RETENTION,
    });
    Validations.of(this.streamDeadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is a dead-letter queue: the stream event source mapping names it as its on-failure destination, which the rule does not look for; a dead-letter queue of its own would only move the same records once more.',
    });

    const defaults = this.functionDefaults(props);
    this.streamPublisher = this.createStreamPublisher(props, defaults);
    this.fanOut = this.createFanOut(props, defaults);
    this.rule = this.createRule(stage);
    this.deliveryWorker = this.createDeliveryWorker(props, defaults);
    this.sweeper = this.createSweeper(props, defaults);
    this.schedulerRole = this.schedulerRoleFor(this.sweeper);
    this.sweepSchedule = this.scheduleSweeps(stage, this.sweeper, this.schedulerRole);
    this.connectWebhooksApi(props.webhooksApi);
    this.alarms = stage.alarms.enabled ? this.createAlarms(stage) : [];
  }

  /** What every pipeline function shares: the table, the stage, log retention and removal. */
  private functionDefaults({ stage, table }: EventsProps): FunctionDefaults {
    return {
      base: { SVC_TABLE_NAME: table.tableName, SVC_STAGE: stage.name },
      common: { logRetention: stage.logRetention, removalPolicy: stage.removalPolicy },
    };
  }

  /** Stream publisher: table stream → PutEvents. */
  private createStreamPublisher({ stage, table, connectUrl }: EventsProps, { base, common }: FunctionDefaults) {
    const fn = new ServiceFunction(this, 'StreamPublisher', {
      entry: WORKERS.streamPublisher.entry,
      memoryMb: WORKERS.streamPublisher.memoryMb,
      description: `svc fundraising stream publisher (${stage.name})`,
      timeout: STREAM_PUBLISHER_TIMEOUT,
      environment: {
        ...base,
        SVC_EVENT_BUS_NAME: this.bus.eventBusName,
        SVC_CONNECT_URL: connectUrl,
        POWERTOOLS_SERVICE_NAME: 'stream-publisher',
      },
      ...common,
    });
    grantTableAccess(table, fn.role, STREAM_PUBLISHER_TABLE_GRANT);
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['events:PutEvents'], resources: [this.bus.eventBusArn] }),
    );
    // Grants the stream reads (DescribeStream, GetShardIterator, GetRecords on this stream, and
    // ListStreams, which IAM cannot scope) and SendMessage on the on-failure queue.
    fn.function.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: STREAM_BATCH_SIZE,
        // The handler reports the first record it could not publish; the stream retries from it, in order.
        reportBatchItemFailures: true,
        bisectBatchOnError: true,
        retryAttempts: STREAM_RETRY_ATTEMPTS,
        maxRecordAge: STREAM_MAX_RECORD_AGE,
        // Holds the shard and sequence numbers given up on (not the records): replay within the
        // stream's 24 hours, or from the items themselves, which the table keeps.
        onFailure: new SqsDlq(this.streamDeadLetterQueue),
        // Limiter, pacing, health and delivery items carry no events: they never invoke it.
        filters: [FilterCriteria.filter(STREAM_PUBLISHER_FILTER)],
      }),
    );
    Validations.of(fn.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'dynamodb:ListStreams, which the DynamoDB stream event source needs, supports no resource-level permissions; the stream reads themselves (DescribeStream, GetShardIterator, GetRecords) name this table stream only. ' +
        TRACING_WILDCARD_REASON,
    });

    return fn;
  }

  /** Fan-out: a batch of events → one delivery per subscribed endpoint and event, queued. */
  private createFanOut({ stage, table }: EventsProps, { base, common }: FunctionDefaults) {
    const fn = new ServiceFunction(this, 'FanOut', {
      entry: WORKERS.fanOut.entry,
      memoryMb: WORKERS.fanOut.memoryMb,
      description: `svc fundraising event fan-out (${stage.name})`,
      timeout: FAN_OUT_TIMEOUT,
      environment: {
        ...base,
        SVC_DELIVERY_QUEUE_URL: this.deliveryQueue.queueUrl,
        POWERTOOLS_SERVICE_NAME: 'fan-out',
      },
      ...common,
    });
    grantTableAccess(table, fn.role, FAN_OUT_TABLE_GRANT);
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: [SEND_MESSAGE], resources: [this.deliveryQueue.queueArn] }),
    );
    // Grants the consume actions on the fan-out queue (receive, delete, visibility); no send.
    fn.function.addEventSource(
      new SqsEventSource(this.fanOutQueue, {
        batchSize: FAN_OUT_BATCH_SIZE,
        // The handler reports the messages it could not handle; only those come back.
        reportBatchItemFailures: true,
        maxConcurrency: FAN_OUT_MAX_CONCURRENCY,
        // No batching window: webhooks leave as soon as an event arrives, and under load the
        // poller's receives fill batches of ten anyway; a window would only delay a quiet stage.
      }),
    );
    return fn;
  }

  private createRule(stage: StageConfig): Rule {
    // The rule's grant: the queue policy allows events.amazonaws.com to send for this rule only
    // (aws:SourceArn), and the same on the dead-letter queue. No input: the body is the whole event.
    return new Rule(this, 'FanOutRule', {
      eventBus: this.bus,
      description: `Every svc event to the webhook fan-out queue (${stage.name})`,
      eventPattern: { source: [EVENTS_RULE_SOURCE] },
      targets: [
        new SqsQueue(this.fanOutQueue, {
          deadLetterQueue: this.fanOutDeadLetterQueue,
          retryAttempts: FAN_OUT_TARGET_RETRIES,
          maxEventAge: FAN_OUT_TARGET_MAX_EVENT_AGE,
        }),
      ],
    });
  }

  /** Delivery worker: one attempt per message, failed items reported. */
  private createDeliveryWorker({ stage, table }: EventsProps, { base, common }: FunctionDefaults) {
    const fn = new ServiceFunction(this, 'DeliveryWorker', {
      entry: WORKERS.deliveryWorker.entry,
      memoryMb: WORKERS.deliveryWorker.memoryMb,
      description: `svc fundraising webhook delivery worker (${stage.name})`,
      timeout: DELIVERY_WORKER_TIMEOUT,
      // Never SVC_WEBHOOK_ALLOW_PRIVATE: absent, the outbound guard refuses private targets.
      environment: { ...base, POWERTOOLS_SERVICE_NAME: 'delivery-worker' },
      ...common,
    });
    grantTableAccess(table, fn.role, DELIVERY_WORKER_TABLE_GRANT);
    // Opens sealed secrets; the ciphertext names the key, so the worker needs no key id.
    this.grantSecrets(fn.role, ['kms:Decrypt']);
    // Grants the consume actions on the delivery queue (receive, delete, visibility); no send.
    fn.function.addEventSource(
      new SqsEventSource(this.deliveryQueue, {
        batchSize: DELIVERY_BATCH_SIZE,
        reportBatchItemFailures: true,
        maxConcurrency: DELIVERY_WORKER_MAX_CONCURRENCY,
      }),
    );

    return fn;
  }

  /** Sweeper: due deliveries (retries, lapsed leases) back onto the queue. */
  private createSweeper({ stage, table }: EventsProps, { base, common }: FunctionDefaults) {
    const fn = new ServiceFunction(this, 'DeliverySweeper', {
      entry: WORKERS.deliverySweeper.entry,
      memoryMb: WORKERS.deliverySweeper.memoryMb,
      description: `svc fundraising webhook delivery sweeper (${stage.name})`,
      timeout: SWEEPER_TIMEOUT,
      environment: {
        ...base,
        SVC_DELIVERY_QUEUE_URL: this.deliveryQueue.queueUrl,
        SVC_DELIVERY_SWEEP_LOOKAHEAD_SECONDS: String(SWEEP_LOOKAHEAD_SECONDS),
        POWERTOOLS_SERVICE_NAME: 'delivery-sweeper',
      },
      ...common,
    });
    grantTableAccess(table, fn.role, SWEEPER_TABLE_GRANT);
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: [SEND_MESSAGE], resources: [this.deliveryQueue.queueArn] }),
    );
    return fn;
  }

  private scheduleSweeps(stage: StageConfig, sweeper: ServiceFunction, schedulerRole: Role): Schedule {
    // A missed or failed sweep is redone by the next one a minute later; a retry would only overlap it.
    sweeper.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
    return new Schedule(this, 'SweepSchedule', {
      schedule: ScheduleExpression.expression(SWEEP_SCHEDULE),
      description: `Queues the webhook deliveries that are due (${stage.name})`,
      target: new LambdaInvoke(sweeper.function, {
        // The policy is on the role already; LambdaInvoke's own grant would add `<function>:*`.
        role: schedulerRole.withoutPolicyUpdates(),
        // Same reason: no retries and no dead-letter queue; nothing is lost with a start.
        retryAttempts: 0,
        maxEventAge: Duration.minutes(1),
      }),
    });
  }

  /** The webhooks API: seals secrets (and shows HMAC keys), sends a redelivery to the queue. */
  private connectWebhooksApi(webhooksApi: ServiceFunction): void {
    webhooksApi.function.addEnvironment('SVC_DELIVERY_QUEUE_URL', this.deliveryQueue.queueUrl);
    webhooksApi.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: [SEND_MESSAGE], resources: [this.deliveryQueue.queueArn] }),
    );
    this.allowSealing(webhooksApi);
  }

  /**
   * Lets a function seal and open webhook secrets with the secrets key, as the webhooks code does
   * (services/webhooks secrets.ts): the key id in SVC_WEBHOOK_KMS_KEY_ID, kms:Encrypt and
   * kms:Decrypt on this key only, and only with the webhooks encryption context. The webhooks
   * domain function gets it here; onboarding (webhooks given with a process) from the stack.
   */
  allowSealing(fn: ServiceFunction): void {
    fn.function.addEnvironment('SVC_WEBHOOK_KMS_KEY_ID', this.secretsKey.keyArn);
    this.grantSecrets(fn.role, ['kms:Encrypt', 'kms:Decrypt']);
  }

  /** Key use for webhook secrets only: the request must carry the webhooks encryption context. */
  private grantSecrets(grantee: IGrantable, actions: readonly ('kms:Encrypt' | 'kms:Decrypt')[]): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...actions],
        resources: [this.secretsKey.keyArn],
        conditions: { StringEquals: { 'kms:EncryptionContext:purpose': WEBHOOK_SECRET_CONTEXT.purpose } },
      }),
    );
  }

  private schedulerRoleFor(sweeper: ServiceFunction): Role {
    return schedulerRole(this, 'SchedulerRole', {
      description: 'EventBridge Scheduler: starts the webhook delivery sweeper (execution role)',
      policyName: 'StartDeliverySweeper',
      statements: [
        new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [sweeper.function.functionArn] }),
      ],
    });
  }

  private createAlarms(stage: StageConfig): Alarm[] {
    const scope = new Construct(this, 'Alarms');
    const fiveMinutes = Duration.minutes(5);
    const deadLetters = (id: string, queue: Queue, what: string) =>
      thresholdAlarm(
        scope,
        id,
        queue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' }),
        1,
        what,
      );
    return [
      deadLetters(
        'DeliveryDeadLetters',
        this.deliveryDeadLetterQueue,
        `Delivery messages failed ${DELIVERY_MAX_RECEIVE_COUNT} receives and wait in the dead-letter queue`,
      ),
      deadLetters(
        'FanOutDeadLetters',
        this.fanOutDeadLetterQueue,
        `Events that failed ${FAN_OUT_MAX_RECEIVE_COUNT} fan-out receives, or that the rule could not put on the fan-out queue, wait in its dead-letter queue; no delivery was created for them`,
      ),
      deadLetters(
        'StreamDeadLetters',
        this.streamDeadLetterQueue,
        'The stream publisher gave up on table stream records; their events never reached the bus',
      ),
      thresholdAlarm(
        scope,
        'DeliveryBacklogAge',
        this.deliveryQueue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, statistic: 'Maximum' }),
        DELIVERY_BACKLOG_AGE_ALARM.toSeconds(),
        'Webhooks are late: age in seconds of the oldest message on the delivery queue',
      ),
      thresholdAlarm(
        scope,
        'FanOutBacklogAge',
        this.fanOutQueue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, statistic: 'Maximum' }),
        FAN_OUT_BACKLOG_AGE_ALARM.toSeconds(),
        'Webhooks are late: age in seconds of the oldest event on the fan-out queue',
      ),
      thresholdAlarm(
        scope,
        'StreamIteratorAge',
        this.streamPublisher.function.metric('IteratorAge', { period: fiveMinutes, statistic: 'Maximum' }),
        STREAM_ITERATOR_AGE_ALARM.toMilliseconds(),
        'Events reach the bus late: stream publisher iterator age in milliseconds',
      ),
      thresholdAlarm(
        scope,
        'DeliveryWorkerErrors',
        this.deliveryWorker.function.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
        stage.alarms.functionErrors,
        'The webhook delivery worker threw or timed out',
      ),
      thresholdAlarm(
        scope,
        'SweeperErrors',
        this.sweeper.function.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
        stage.alarms.functionErrors,
        'The webhook delivery sweeper threw or timed out: retries are not being queued',
      ),
    ];
  }
}
