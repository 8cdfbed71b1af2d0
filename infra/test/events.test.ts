import { QUIET_ENTITIES, RECEIPT_PAYMENT_EVENTS, WORKERS } from '@svc/api';
import { INDEXES } from '@svc/table';
import { ATTEMPT_LEASE_SECONDS, DEFAULT_IN_FLIGHT_PER_ORGANISATION, EVENT_SOURCE } from '@svc/webhooks';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { STAGE_NAMES, STAGES, type StageName } from '../config/stages';
import {
  DELIVERY_WORKER_MAX_CONCURRENCY,
  DELIVERY_WORKER_TIMEOUT,
  FAN_OUT_BACKLOG_AGE_ALARM,
  FAN_OUT_BATCH_SIZE,
  FAN_OUT_MAX_CONCURRENCY,
  FAN_OUT_MAX_RECEIVE_COUNT,
  FAN_OUT_TIMEOUT,
  SWEEP_SCHEDULE,
  SWEEPER_TABLE_GRANT,
  WEBHOOK_SECRET_CONTEXT,
} from '../constructs/events';
import { TRACE_CALLS_VARIABLE } from '../constructs/tracing';
import { synthesized, templateOf, useSynthesizedApp } from './support/synth';
import {
  actionsOf,
  eventSourceMappings,
  functionsByService,
  inlineStatementsOfRole,
  lambdaPermissions,
  logicalIdOf,
  logicalIdStartingWith,
  managedPoliciesOfRole,
  queuePolicyStatements,
  queues,
  resourcesGranting,
  rolesAllowedOn,
  rules,
  type Statement,
  schedules,
  statementsOfRole,
  trustOfRole,
} from './support/template-model';

useSynthesizedApp();

const FOURTEEN_DAYS = 14 * 24 * 60 * 60;
const TABLE_WRITES_AND_SCANS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:Scan',
];
const SQS_CONSUME = [
  'sqs:ReceiveMessage',
  'sqs:DeleteMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:GetQueueAttributes',
  'sqs:GetQueueUrl',
];

const arnOf = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });
const indexArnOf = (tableId: string, index: string) => ({
  'Fn::Join': ['', [arnOf(tableId), `/index/${index}`]],
});
const secretContext = { StringEquals: { 'kms:EncryptionContext:purpose': 'webhook-secret' } };

/** The pipeline's pieces, found by how they are wired rather than by logical id. */
function pipelineOf(stage: StageName) {
  const template = templateOf(stage);
  const functions = functionsByService(template);
  const fn = (service: string) => {
    const found = functions.get(service);
    if (!found) throw new Error(`No ${service} function in ${stage}`);
    return found;
  };
  const publisher = fn('stream-publisher');
  const fanOut = fn('fan-out');
  const worker = fn('delivery-worker');
  const sweeper = fn('delivery-sweeper');
  const webhooks = fn('webhooks');
  const onboarding = fn('onboarding');
  const tableId = logicalIdOf(template, 'AWS::DynamoDB::Table');
  const busId = logicalIdOf(template, 'AWS::Events::EventBus');
  const keyId = logicalIdStartingWith(template, 'AWS::KMS::Key', 'EventsWebhookSecretsKey');

  const mappings = eventSourceMappings(template);
  const workerMappings = mappings.filter((m) => m.FunctionName.Ref === worker.logicalId);
  const streamMappings = mappings.filter((m) => m.FunctionName.Ref === publisher.logicalId);
  const fanOutMappings = mappings.filter((m) => m.FunctionName.Ref === fanOut.logicalId);
  expect(workerMappings, 'one event source feeds the delivery worker').toHaveLength(1);
  expect(streamMappings, 'one event source feeds the stream publisher').toHaveLength(1);
  expect(fanOutMappings, 'one event source feeds fan-out').toHaveLength(1);
  const [workerMapping] = workerMappings;
  const [streamMapping] = streamMappings;
  const [fanOutMapping] = fanOutMappings;
  const fanOutQueueId = fanOutMapping?.EventSourceArn['Fn::GetAtt'][0];
  const deliveryQueueId = workerMapping?.EventSourceArn['Fn::GetAtt'][0];
  const deliveryDeadLetterId = queues(template).get(deliveryQueueId ?? '')?.Properties.RedrivePolicy
    ?.deadLetterTargetArn['Fn::GetAtt'][0];
  const streamDeadLetterId = streamMapping?.DestinationConfig?.OnFailure.Destination['Fn::GetAtt'][0];

  // Two rules on the bus: every event to the fan-out queue, and the payment events a receipt
  // depends on to the receipts queue (receipts.ts). Each found by the queue it targets.
  const receiptsWorker = fn('receipts-worker');
  const receiptsMappings = mappings.filter((m) => m.FunctionName.Ref === receiptsWorker.logicalId);
  expect(receiptsMappings, 'one event source feeds the receipts worker').toHaveLength(1);
  const receiptsQueueId = receiptsMappings[0]?.EventSourceArn['Fn::GetAtt'][0];
  const receiptsDeadLetterId = queues(template).get(receiptsQueueId ?? '')?.Properties.RedrivePolicy
    ?.deadLetterTargetArn['Fn::GetAtt'][0];
  const busRules = [...rules(template)].filter(([, rule]) => rule.EventBusName?.Ref === busId);
  expect(busRules, 'two rules on the bus').toHaveLength(2);
  const targeting = (queueId: string | undefined) =>
    busRules.filter(([, rule]) => rule.Targets.some((target) => target.Arn['Fn::GetAtt'][0] === queueId));
  const fanOutRules = targeting(fanOutQueueId);
  const receiptsRules = targeting(receiptsQueueId);
  expect(fanOutRules, 'one rule on the bus targets the fan-out queue').toHaveLength(1);
  expect(receiptsRules, 'one rule on the bus targets the receipts queue').toHaveLength(1);
  const [ruleId, rule] = fanOutRules[0] ?? [];
  const [receiptsRuleId, receiptsRule] = receiptsRules[0] ?? [];
  expect(ruleId).not.toBe(receiptsRuleId);
  const fanOutDeadLetterId = rule?.Targets[0]?.DeadLetterConfig?.Arn['Fn::GetAtt'][0];

  const sweeps = schedules(template).filter((s) => s.Target.Arn['Fn::GetAtt'][0] === sweeper.logicalId);
  expect(sweeps, 'one schedule starts the sweeper').toHaveLength(1);
  const [schedule] = sweeps;

  if (
    !workerMapping ||
    !streamMapping ||
    !fanOutMapping ||
    !fanOutQueueId ||
    !deliveryQueueId ||
    !deliveryDeadLetterId ||
    !streamDeadLetterId ||
    !ruleId ||
    !rule ||
    !fanOutDeadLetterId ||
    !receiptsQueueId ||
    !receiptsDeadLetterId ||
    !receiptsRuleId ||
    !receiptsRule ||
    !schedule
  ) {
    throw new Error(`The event pipeline of ${stage} is not wired as expected`);
  }
  return {
    template,
    publisher,
    fanOut,
    worker,
    sweeper,
    webhooks,
    onboarding,
    tableId,
    busId,
    keyId,
    workerMapping,
    streamMapping,
    fanOutMapping,
    fanOutQueueId,
    deliveryQueueId,
    deliveryDeadLetterId,
    streamDeadLetterId,
    ruleId,
    rule,
    fanOutDeadLetterId,
    receiptsWorker,
    receiptsQueueId,
    receiptsDeadLetterId,
    receiptsRuleId,
    receiptsRule,
    schedule,
  };
}

function statementsOf(template: Template, roleId: string): Statement[] {
  const statements = statementsOfRole(template, roleId);
  expect(statements.every((s) => s.Effect === 'Allow')).toBe(true);
  return statements;
}

/** The SVC_* variables of a function (NODE_OPTIONS and POWERTOOLS_SERVICE_NAME are functions.test's). */
/** The service's own variables, less the stage-wide tracing switch (functions.test.ts holds that). */
function serviceVariables(variables: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(variables).filter(([name]) => name.startsWith('SVC_') && name !== TRACE_CALLS_VARIABLE),
  );
}

describe.each(STAGE_NAMES)('the %s event bus', (stage) => {
  it('is a bus of its own, named for the stage, and the stream publisher puts events on it', () => {
    const { template, busId, publisher } = pipelineOf(stage);
    template.hasResourceProperties('AWS::Events::EventBus', { Name: `svc-${stage}-events` });
    expect(publisher.properties.Environment.Variables.SVC_EVENT_BUS_NAME).toEqual({ Ref: busId });
  });

  it('routes every event the publisher sends (source svc) to the fan-out queue, and nothing else', () => {
    const { rule, fanOutQueueId } = pipelineOf(stage);
    expect(EVENT_SOURCE).toBe('svc');
    expect(rule.EventPattern).toEqual({ source: ['svc'] });
    expect(rule.State).toBe('ENABLED');
    expect(rule.Targets).toHaveLength(1);
    expect(rule.Targets[0]?.Arn).toEqual(arnOf(fanOutQueueId));
  });

  it('puts the whole event on the fan-out queue as the message body: no input, path or transformer', () => {
    const { rule } = pipelineOf(stage);
    const [target] = rule.Targets;
    expect(target).toBeDefined();
    expect(target?.Input).toBeUndefined();
    expect(target?.InputPath).toBeUndefined();
    expect(target?.InputTransformer).toBeUndefined();
    // A standard queue: no message group.
    expect(target?.SqsParameters).toBeUndefined();
  });

  it('retries putting an event on the fan-out queue for a day, then puts it in a dead-letter queue', () => {
    const { rule, template, fanOutDeadLetterId } = pipelineOf(stage);
    expect(rule.Targets[0]?.RetryPolicy).toEqual({ MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86_400 });
    expect(queues(template).get(fanOutDeadLetterId)?.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: FOURTEEN_DAYS,
    });
  });

  it('lets EventBridge write that dead-letter queue for this rule only', () => {
    const { template, fanOutDeadLetterId, ruleId } = pipelineOf(stage);
    const allows = (queuePolicyStatements(template).get(fanOutDeadLetterId) ?? []).filter(
      (statement) => z.object({ Effect: z.literal('Allow') }).safeParse(statement).success,
    );
    expect(allows).toEqual([
      expect.objectContaining({
        Principal: { Service: 'events.amazonaws.com' },
        Action: 'sqs:SendMessage',
        Condition: { ArnEquals: { 'aws:SourceArn': arnOf(ruleId) } },
      }),
    ]);
  });

  it('lets EventBridge send to the fan-out queue for this rule only, and no role', () => {
    const { template, fanOutQueueId, ruleId } = pipelineOf(stage);
    const allows = (queuePolicyStatements(template).get(fanOutQueueId) ?? []).filter(
      (statement) => z.object({ Effect: z.literal('Allow') }).safeParse(statement).success,
    );
    expect(allows).toEqual([
      expect.objectContaining({
        Principal: { Service: 'events.amazonaws.com' },
        // What the SqsQueue target grants (grantSendMessages): the send and two reads, nothing else.
        Action: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
        Condition: { ArnEquals: { 'aws:SourceArn': arnOf(ruleId) } },
      }),
    ]);
    expect(rolesAllowedOn(template, fanOutQueueId, ['sqs:SendMessage', 'sqs:*'])).toEqual(new Set());
  });

  it('invokes fan-out through its queue only: no resource policy on any pipeline function, no asynchronous invoke config or dead-letter queue on fan-out', () => {
    const { template, fanOut, publisher, worker, sweeper } = pipelineOf(stage);
    const on = (logicalId: string) =>
      lambdaPermissions(template).filter((p) => JSON.stringify(p.FunctionName).includes(`"${logicalId}"`));
    for (const fn of [fanOut, publisher, worker, sweeper]) expect(on(fn.logicalId), fn.logicalId).toEqual([]);
    expect(fanOut.properties.DeadLetterConfig).toBeUndefined();
    const invokeConfigs = template.findResources('AWS::Lambda::EventInvokeConfig', {
      Properties: { FunctionName: { Ref: fanOut.logicalId } },
    });
    expect(Object.keys(invokeConfigs)).toEqual([]);
  });
});

describe.each(STAGE_NAMES)('the %s receipts rule on the bus', (stage) => {
  it('matches exactly the refund and dispute events of payments the publisher sends (source svc)', () => {
    const { receiptsRule, busId } = pipelineOf(stage);
    expect(RECEIPT_PAYMENT_EVENTS.length).toBeGreaterThan(0);
    expect(receiptsRule.EventBusName).toEqual({ Ref: busId });
    expect(receiptsRule.EventPattern).toEqual({ source: [EVENT_SOURCE], 'detail-type': [...RECEIPT_PAYMENT_EVENTS] });
    expect(receiptsRule.State).toBe('ENABLED');
  });

  it('puts the whole event on the receipts queue only, and what it cannot put in the receipts dead-letter queue', () => {
    const { receiptsRule, receiptsQueueId, receiptsDeadLetterId, fanOutQueueId } = pipelineOf(stage);
    expect(receiptsQueueId).not.toBe(fanOutQueueId);
    expect(receiptsRule.Targets).toHaveLength(1);
    const [target] = receiptsRule.Targets;
    expect(target?.Arn).toEqual(arnOf(receiptsQueueId));
    expect(target?.DeadLetterConfig).toEqual({ Arn: arnOf(receiptsDeadLetterId) });
    expect(target?.Input).toBeUndefined();
    expect(target?.InputPath).toBeUndefined();
    expect(target?.InputTransformer).toBeUndefined();
    expect(target?.SqsParameters).toBeUndefined();
  });

  it('lets EventBridge send to the receipts queue and its dead-letter queue for this rule only', () => {
    const { template, receiptsQueueId, receiptsDeadLetterId, receiptsRuleId } = pipelineOf(stage);
    const allowsOn = (queueId: string) =>
      (queuePolicyStatements(template).get(queueId) ?? []).filter(
        (statement) => z.object({ Effect: z.literal('Allow') }).safeParse(statement).success,
      );
    expect(allowsOn(receiptsQueueId)).toEqual([
      expect.objectContaining({
        Principal: { Service: 'events.amazonaws.com' },
        Action: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
        Condition: { ArnEquals: { 'aws:SourceArn': arnOf(receiptsRuleId) } },
      }),
    ]);
    expect(allowsOn(receiptsDeadLetterId)).toEqual([
      expect.objectContaining({
        Principal: { Service: 'events.amazonaws.com' },
        Action: 'sqs:SendMessage',
        Condition: { ArnEquals: { 'aws:SourceArn': arnOf(receiptsRuleId) } },
      }),
    ]);
  });
});

describe.each(STAGE_NAMES)('the %s fan-out queue', (stage) => {
  it(`moves an event to the 14-day fan-out dead-letter queue after ${FAN_OUT_MAX_RECEIVE_COUNT} receives, all encrypted`, () => {
    const { template, fanOutQueueId, fanOutDeadLetterId } = pipelineOf(stage);
    const all = queues(template);
    expect(FAN_OUT_MAX_RECEIVE_COUNT).toBe(5);
    expect(all.get(fanOutQueueId)?.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      // The same queue the rule target puts what it could not deliver in: one place for lost events.
      RedrivePolicy: { deadLetterTargetArn: arnOf(fanOutDeadLetterId), maxReceiveCount: 5 },
    });
    expect(fanOutQueueId).not.toBe(fanOutDeadLetterId);
  });

  it('hides a message for at least six fan-out timeouts (plus any batching window)', () => {
    const { template, fanOutQueueId, fanOut, fanOutMapping } = pipelineOf(stage);
    const timeout = fanOut.properties.Timeout ?? Number.POSITIVE_INFINITY;
    expect(timeout).toBe(FAN_OUT_TIMEOUT.toSeconds());
    expect(queues(template).get(fanOutQueueId)?.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(
      6 * timeout + (fanOutMapping.MaximumBatchingWindowInSeconds ?? 0),
    );
  });

  it('feeds fan-out batches of 10 events, reporting failed items, at a bounded concurrency, without delay', () => {
    const { fanOutMapping } = pipelineOf(stage);
    expect(FAN_OUT_BATCH_SIZE).toBe(10);
    expect(fanOutMapping.BatchSize).toBe(FAN_OUT_BATCH_SIZE);
    expect(fanOutMapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(fanOutMapping.ScalingConfig?.MaximumConcurrency).toBe(FAN_OUT_MAX_CONCURRENCY);
    expect(FAN_OUT_MAX_CONCURRENCY).toBeGreaterThanOrEqual(2);
    // At most a second's wait for a batch to fill: webhooks should not wait on batching.
    expect(fanOutMapping.MaximumBatchingWindowInSeconds ?? 0).toBeLessThanOrEqual(1);
  });

  it('is consumed by fan-out only, and nobody but EventBridge sends to its dead-letter queue', () => {
    const { template, fanOutQueueId, fanOutDeadLetterId, fanOut } = pipelineOf(stage);
    expect(rolesAllowedOn(template, fanOutQueueId, ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:*'])).toEqual(
      new Set([fanOut.roleId]),
    );
    expect(rolesAllowedOn(template, fanOutDeadLetterId, ['sqs:SendMessage', 'sqs:*'])).toEqual(new Set());
  });
});

describe.each(STAGE_NAMES)('the %s stream publisher', (stage) => {
  it('reads the table stream from its oldest record, in batches of 100', () => {
    const { streamMapping, tableId } = pipelineOf(stage);
    expect(streamMapping.EventSourceArn).toEqual({ 'Fn::GetAtt': [tableId, 'StreamArn'] });
    expect(streamMapping.StartingPosition).toBe('TRIM_HORIZON');
    expect(streamMapping.BatchSize).toBe(100);
    // One batch per shard at a time: events of one item reach the bus in order.
    expect(streamMapping.ParallelizationFactor ?? 1).toBe(1);
  });

  it('is invoked only for items that can carry events: never for limiter, pacing, health or delivery items (issue 46, point 7)', () => {
    const { streamMapping } = pipelineOf(stage);
    const filters = streamMapping.FilterCriteria?.Filters ?? [];
    expect(filters).toHaveLength(1);
    const pattern = JSON.parse(filters[0]?.Pattern ?? '{}');
    expect(pattern).toEqual({ dynamodb: { NewImage: { entity: { S: [{ 'anything-but': [...QUIET_ENTITIES] }] } } } });
    for (const quiet of [
      'provider_rate',
      'provider_health',
      'webhook_pace',
      'webhook_pause',
      'webhook_in_flight',
      'delivery',
    ])
      expect(QUIET_ENTITIES).toContain(quiet);
    // What carries events stays in.
    for (const loud of [
      'payment',
      'subscription',
      'invoice',
      'organisation',
      'onboarding_process',
      'reconciliation_report',
    ])
      expect(QUIET_ENTITIES).not.toContain(loud);
  });

  it('retries from the failed record, bisects a failing batch, and gives a record up after 10 retries or a day', () => {
    const { streamMapping, template, streamDeadLetterId } = pipelineOf(stage);
    expect(streamMapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(streamMapping.BisectBatchOnFunctionError).toBe(true);
    expect(streamMapping.MaximumRetryAttempts).toBe(10);
    expect(streamMapping.MaximumRecordAgeInSeconds).toBe(86_400);
    expect(queues(template).get(streamDeadLetterId)?.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: FOURTEEN_DAYS,
    });
  });

  it('may put events on this bus only, read items, read the stream, and never write or query the table', () => {
    const { template, publisher, busId, tableId, streamDeadLetterId } = pipelineOf(stage);
    const statements = statementsOf(template, publisher.roleId);
    expect(actionsOf(statements, 'events:')).toEqual(new Set(['events:PutEvents']));
    expect(resourcesGranting(statements, 'events:PutEvents')).toEqual([arnOf(busId)]);
    expect(actionsOf(statements, 'dynamodb:')).toEqual(
      new Set([
        'dynamodb:GetItem',
        'dynamodb:BatchGetItem',
        'dynamodb:DescribeStream',
        'dynamodb:GetRecords',
        'dynamodb:GetShardIterator',
        'dynamodb:ListStreams',
      ]),
    );
    expect(resourcesGranting(statements, 'dynamodb:GetItem')).toEqual([arnOf(tableId)]);
    for (const action of ['dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:DescribeStream']) {
      expect(resourcesGranting(statements, action), action).toEqual([{ 'Fn::GetAtt': [tableId, 'StreamArn'] }]);
    }
    for (const action of [...TABLE_WRITES_AND_SCANS, 'dynamodb:Query']) {
      expect(resourcesGranting(statements, action), action).toEqual([]);
    }
    expect(resourcesGranting(statements, 'sqs:SendMessage')).toEqual([arnOf(streamDeadLetterId)]);
    expect(actionsOf(statements, 'kms:')).toEqual(new Set());
  });

  it('is the only role that may put events on the bus', () => {
    const { template, busId, publisher } = pipelineOf(stage);
    expect(rolesAllowedOn(template, busId, ['events:PutEvents', 'events:*'])).toEqual(new Set([publisher.roleId]));
  });
});

describe.each(STAGE_NAMES)('the %s delivery queue', (stage) => {
  it('moves a message to a 14-day dead-letter queue after 5 receives, all encrypted', () => {
    const { template, deliveryQueueId, deliveryDeadLetterId } = pipelineOf(stage);
    const all = queues(template);
    expect(all.get(deliveryQueueId)?.Properties.RedrivePolicy?.maxReceiveCount).toBe(5);
    expect(all.get(deliveryQueueId)?.Properties.SqsManagedSseEnabled).toBe(true);
    expect(all.get(deliveryDeadLetterId)?.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: FOURTEEN_DAYS,
    });
  });

  it('and every other pipeline queue refuse plain HTTP and follow the stage removal policy', () => {
    const { template, deliveryQueueId, deliveryDeadLetterId, fanOutQueueId, fanOutDeadLetterId, streamDeadLetterId } =
      pipelineOf(stage);
    const policies = queuePolicyStatements(template);
    const expected =
      STAGES[stage].removalPolicy === RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE ? 'RetainExceptOnCreate' : 'Delete';
    const all = [deliveryQueueId, deliveryDeadLetterId, fanOutQueueId, fanOutDeadLetterId, streamDeadLetterId];
    for (const id of all) {
      expect(policies.get(id), `${id} refuses plain HTTP`).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
      expect(queues(template).get(id)?.DeletionPolicy, id).toBe(expected);
    }
    expect(new Set(all).size).toBe(5);
  });

  it('hides a message for at least six worker timeouts; the worker times out within one delivery lease', () => {
    const { template, deliveryQueueId, worker } = pipelineOf(stage);
    const timeout = worker.properties.Timeout ?? Number.POSITIVE_INFINITY;
    expect(timeout).toBe(DELIVERY_WORKER_TIMEOUT.toSeconds());
    expect(timeout).toBeLessThan(ATTEMPT_LEASE_SECONDS);
    expect(queues(template).get(deliveryQueueId)?.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * timeout);
  });

  it('feeds the delivery worker batches of 10, reporting failed items, at a bounded concurrency', () => {
    const { workerMapping } = pipelineOf(stage);
    expect(workerMapping.BatchSize).toBe(10);
    expect(workerMapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(workerMapping.ScalingConfig?.MaximumConcurrency).toBe(DELIVERY_WORKER_MAX_CONCURRENCY);
    expect(DELIVERY_WORKER_MAX_CONCURRENCY).toBeGreaterThanOrEqual(2);
    // One organisation's sends in flight hold at most that many invocations: the others keep
    // most of the worker (issue 44).
    expect(DELIVERY_WORKER_MAX_CONCURRENCY).toBeGreaterThanOrEqual(2 * DEFAULT_IN_FLIGHT_PER_ORGANISATION);
  });

  it('takes messages from fan-out, the sweeper and the webhooks API (redeliver) only; nobody sends to its dead-letter queue', () => {
    const { template, deliveryQueueId, deliveryDeadLetterId, fanOut, sweeper, webhooks } = pipelineOf(stage);
    expect(rolesAllowedOn(template, deliveryQueueId, ['sqs:SendMessage', 'sqs:*'])).toEqual(
      new Set([fanOut.roleId, sweeper.roleId, webhooks.roleId]),
    );
    expect(rolesAllowedOn(template, deliveryDeadLetterId, ['sqs:SendMessage', 'sqs:*'])).toEqual(new Set());
  });
});

describe.each(STAGE_NAMES)('the %s pipeline functions', (stage) => {
  it('are sized as WORKERS says, Node 22 on arm64', () => {
    const { publisher, fanOut, worker, sweeper } = pipelineOf(stage);
    const sized = [
      [publisher, WORKERS.streamPublisher],
      [fanOut, WORKERS.fanOut],
      [worker, WORKERS.deliveryWorker],
      [sweeper, WORKERS.deliverySweeper],
    ] as const;
    for (const [fn, spec] of sized) {
      expect(fn.properties, spec.entry).toMatchObject({
        MemorySize: spec.memoryMb,
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
      });
    }
  });

  it('get the table, the stage and exactly the pipeline variables their code reads', () => {
    const { publisher, fanOut, worker, sweeper, onboarding, tableId, busId, deliveryQueueId } = pipelineOf(stage);
    const base = { SVC_TABLE_NAME: { Ref: tableId }, SVC_STAGE: stage };
    const queueUrl = { SVC_DELIVERY_QUEUE_URL: { Ref: deliveryQueueId } };
    expect(serviceVariables(publisher.properties.Environment.Variables)).toEqual({
      ...base,
      SVC_EVENT_BUS_NAME: { Ref: busId },
      // Onboarding process events carry onboarding_url: the same page address onboarding uses.
      SVC_CONNECT_URL: onboarding.properties.Environment.Variables.SVC_CONNECT_URL,
    });
    expect(publisher.properties.Environment.Variables.SVC_CONNECT_URL).toBeDefined();
    expect(serviceVariables(fanOut.properties.Environment.Variables)).toEqual({ ...base, ...queueUrl });
    // The sweeper takes what falls due before the next sweep, delayed in the queue until its second.
    expect(serviceVariables(sweeper.properties.Environment.Variables)).toEqual({
      ...base,
      ...queueUrl,
      SVC_DELIVERY_SWEEP_LOOKAHEAD_SECONDS: '60',
    });
    expect(serviceVariables(worker.properties.Environment.Variables)).toEqual(base);
  });

  it('give the webhooks domain function the delivery queue URL and the secrets key', () => {
    const { webhooks, deliveryQueueId, keyId } = pipelineOf(stage);
    expect(webhooks.properties.Environment.Variables).toMatchObject({
      SVC_DELIVERY_QUEUE_URL: { Ref: deliveryQueueId },
      SVC_WEBHOOK_KMS_KEY_ID: arnOf(keyId),
    });
  });

  it('never allow private webhook targets: no function anywhere sets SVC_WEBHOOK_ALLOW_PRIVATE', () => {
    const all = Object.entries(templateOf(stage).findResources('AWS::Lambda::Function'));
    expect(all.length).toBeGreaterThan(0);
    for (const [id, resource] of all) {
      expect(JSON.stringify(resource), id).not.toContain('SVC_WEBHOOK_ALLOW_PRIVATE');
    }
  });

  it('let fan-out query subscribers on gsi2 only, read endpoints, put deliveries, consume its queue and send to the delivery queue', () => {
    const { template, fanOut, tableId, deliveryQueueId, fanOutQueueId } = pipelineOf(stage);
    const statements = statementsOf(template, fanOut.roleId);
    expect(actionsOf(statements, 'dynamodb:')).toEqual(
      new Set(['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:Query']),
    );
    expect(resourcesGranting(statements, 'dynamodb:Query')).toEqual([indexArnOf(tableId, INDEXES.gsi2.name)]);
    for (const action of ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem']) {
      expect(resourcesGranting(statements, action), action).toEqual([arnOf(tableId)]);
    }
    for (const action of TABLE_WRITES_AND_SCANS.filter((a) => a !== 'dynamodb:PutItem')) {
      expect(resourcesGranting(statements, action), action).toEqual([]);
    }
    expect(actionsOf(statements, 'sqs:')).toEqual(new Set(['sqs:SendMessage', ...SQS_CONSUME]));
    // The delivery queue only: no function dead-letter queue any more, and no send to its own queue.
    expect(resourcesGranting(statements, 'sqs:SendMessage')).toEqual([arnOf(deliveryQueueId)]);
    for (const action of SQS_CONSUME) {
      expect(resourcesGranting(statements, action), action).toEqual([arnOf(fanOutQueueId)]);
    }
    expect(actionsOf(statements, 'kms:')).toEqual(new Set());
  });

  it('let the delivery worker read and put items (Webhook Responses in one BatchWriteItem), update only its pace, decrypt secrets, and consume the queue; no delete, query or scan', () => {
    const { template, worker, tableId, keyId, deliveryQueueId } = pipelineOf(stage);
    const statements = statementsOf(template, worker.roleId);
    expect(actionsOf(statements, 'dynamodb:')).toEqual(
      new Set([
        'dynamodb:GetItem',
        'dynamodb:BatchGetItem',
        'dynamodb:PutItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:UpdateItem',
      ]),
    );
    // UpdateItem: an endpoint's pace only (services/webhooks/src/domain/pacing.ts), its
    // counters' and pause's attributes only.
    const updates = statements.filter((s) => s.Action.includes('dynamodb:UpdateItem'));
    expect(updates).toHaveLength(1);
    expect(updates[0]?.Action).toEqual(['dynamodb:UpdateItem']);
    expect(updates[0]?.Condition).toEqual({
      'ForAllValues:StringLike': {
        'dynamodb:LeadingKeys': ['WEBHOOK_PACE#*', 'WEBHOOK_PAUSE#*', 'WEBHOOK_IN_FLIGHT#*'],
      },
      'ForAllValues:StringEquals': {
        'dynamodb:Attributes': ['pk', 'sk', 'taken', 'paused_until', 'timeouts', 'held', 'ttl'],
      },
      // The count comes back (UPDATED_NEW), never the rest of an item (ALL_NEW, ALL_OLD).
      StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE', 'UPDATED_OLD', 'UPDATED_NEW'] },
    });
    expect(resourcesGranting(statements, 'dynamodb:PutItem')).toEqual([arnOf(tableId)]);
    expect(resourcesGranting(statements, 'dynamodb:BatchWriteItem')).toEqual([arnOf(tableId)]);
    // BatchWriteItem carries deletes as well as puts: it and every put are granted on Webhook
    // Response and delivery partitions only.
    const batchWrite = statements.filter((s) => s.Action.includes('dynamodb:BatchWriteItem'));
    expect(batchWrite).toHaveLength(1);
    expect(batchWrite[0]?.Action.sort()).toEqual(['dynamodb:BatchWriteItem', 'dynamodb:PutItem']);
    expect(batchWrite[0]?.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['WEBHOOK_RESPONSE#*', 'DELIVERY#*'] },
    });
    for (const action of ['dynamodb:DeleteItem', 'dynamodb:Scan', 'dynamodb:Query']) {
      expect(resourcesGranting(statements, action), action).toEqual([]);
    }
    expect(actionsOf(statements, 'kms:')).toEqual(new Set(['kms:Decrypt']));
    expect(resourcesGranting(statements, 'kms:Decrypt')).toEqual([arnOf(keyId)]);
    expect(resourcesGranting(statements, 'kms:Encrypt')).toEqual([]);
    expect(actionsOf(statements, 'sqs:')).toEqual(new Set(SQS_CONSUME));
    for (const action of SQS_CONSUME) {
      expect(resourcesGranting(statements, action), action).toEqual([arnOf(deliveryQueueId)]);
    }
  });

  it('let the sweeper query the due index, read and mark delivery items only, and send to the delivery queue only', () => {
    const { template, sweeper, tableId, deliveryQueueId } = pipelineOf(stage);
    const statements = statementsOf(template, sweeper.roleId);
    expect(actionsOf(statements, 'dynamodb:')).toEqual(
      new Set(['dynamodb:Query', ...SWEEPER_TABLE_GRANT.reads, ...SWEEPER_TABLE_GRANT.writes]),
    );
    expect(resourcesGranting(statements, 'dynamodb:Query')).toEqual([indexArnOf(tableId, INDEXES.due.name)]);
    // Its reads and its puts, on the table: delivery partitions only.
    const onTable = statements.filter((s) =>
      s.Action.some((a) => a === 'dynamodb:PutItem' || a === 'dynamodb:GetItem'),
    );
    expect(onTable.length).toBeGreaterThan(0);
    for (const statement of onTable) {
      expect(statement).toMatchObject({
        Resource: arnOf(tableId),
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['DELIVERY#*'] } },
      });
    }
    expect(onTable.flatMap((s) => s.Action).sort()).toEqual(
      [...SWEEPER_TABLE_GRANT.reads, ...SWEEPER_TABLE_GRANT.writes].sort(),
    );
    expect(actionsOf(statements, 'sqs:')).toEqual(new Set(['sqs:SendMessage']));
    expect(resourcesGranting(statements, 'sqs:SendMessage')).toEqual([arnOf(deliveryQueueId)]);
    expect(actionsOf(statements, 'kms:')).toEqual(new Set());
  });

  it('let the webhooks domain function encrypt and decrypt with this key only, for webhook secrets only', () => {
    const { template, webhooks, keyId } = pipelineOf(stage);
    const kms = statementsOf(template, webhooks.roleId).filter((s) => s.Action.some((a) => a.startsWith('kms:')));
    expect(actionsOf(kms, 'kms:')).toEqual(new Set(['kms:Encrypt', 'kms:Decrypt']));
    expect(kms).toEqual([expect.objectContaining({ Resource: arnOf(keyId), Condition: secretContext })]);
    expect(WEBHOOK_SECRET_CONTEXT).toEqual({ purpose: 'webhook-secret' });
  });

  it('leave encryption with the secrets key to the webhooks and onboarding functions, decryption to them and the worker, each on that context', () => {
    const { template, webhooks, onboarding, worker, keyId } = pipelineOf(stage);
    expect(rolesAllowedOn(template, keyId, ['kms:Encrypt', 'kms:*'])).toEqual(
      new Set([webhooks.roleId, onboarding.roleId]),
    );
    expect(rolesAllowedOn(template, keyId, ['kms:Decrypt', 'kms:*'])).toEqual(
      new Set([webhooks.roleId, onboarding.roleId, worker.roleId]),
    );
    for (const [service, fn] of functionsByService(template)) {
      const kms = statementsOfRole(template, fn.roleId).filter((s) => s.Action.some((a) => a.startsWith('kms:')));
      for (const statement of kms) {
        expect(statement.Resource, service).toEqual(arnOf(keyId));
        expect(statement.Condition, service).toEqual(secretContext);
      }
    }
  });
});

describe.each(STAGE_NAMES)('the %s webhook secrets key', (stage) => {
  it('rotates, has the stage alias, and is kept or deleted with the stack as the stage config says', () => {
    const { template, keyId } = pipelineOf(stage);
    const key = template.findResources('AWS::KMS::Key')[keyId];
    const expected =
      STAGES[stage].removalPolicy === RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE ? 'RetainExceptOnCreate' : 'Delete';
    expect(key).toMatchObject({ DeletionPolicy: expected, Properties: { EnableKeyRotation: true } });
    template.hasResourceProperties('AWS::KMS::Alias', {
      AliasName: `alias/svc-${stage}-webhook-secrets`,
      TargetKeyId: arnOf(keyId),
    });
  });
});

describe.each(STAGE_NAMES)('the %s delivery sweep', (stage) => {
  it('starts the sweeper every minute, without retries: the next sweep redoes a missed one', () => {
    const { schedule } = pipelineOf(stage);
    expect(SWEEP_SCHEDULE).toBe('rate(1 minute)');
    expect(schedule.ScheduleExpression).toBe('rate(1 minute)');
    expect(schedule.State).toBe('ENABLED');
    expect(schedule.Target.RetryPolicy).toEqual({ MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 });
    expect(schedule.Target.DeadLetterConfig).toBeUndefined();
  });

  it('assumes a role of its own that may invoke the sweeper and nothing else', () => {
    const { template, schedule, sweeper } = pipelineOf(stage);
    const roleId = schedule.Target.RoleArn['Fn::GetAtt'][0];
    expect(roleId).not.toBe(sweeper.roleId);
    expect(statementsOfRole(template, roleId), 'no policy attached besides the inline one').toEqual([]);
    expect(managedPoliciesOfRole(template, roleId)).toEqual([]);
    expect(inlineStatementsOfRole(template, roleId)).toEqual([
      { Effect: 'Allow', Action: ['lambda:InvokeFunction'], Resource: arnOf(sweeper.logicalId) },
    ]);
    expect(trustOfRole(template, roleId)).toEqual([
      expect.objectContaining({
        Effect: 'Allow',
        Action: 'sts:AssumeRole',
        Principal: { Service: 'scheduler.amazonaws.com' },
        Condition: { StringEquals: expect.objectContaining({ 'aws:SourceAccount': { Ref: 'AWS::AccountId' } }) },
      }),
    ]);
  });

  it('does not let Lambda retry a failed sweep either', () => {
    const { template, sweeper } = pipelineOf(stage);
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: sweeper.logicalId },
      MaximumRetryAttempts: 0,
    });
  });
});

describe.each(STAGE_NAMES.filter((name) => STAGES[name].alarms.enabled))('the %s event pipeline alarms', (stage) => {
  const alarmOn = (template: Template, properties: Record<string, unknown>) =>
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      ...properties,
    });
  const queueDimension = (queueId: string) => [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }];

  it('fire on any message in each dead-letter queue of the pipeline', () => {
    const { template, deliveryDeadLetterId, fanOutDeadLetterId, streamDeadLetterId } = pipelineOf(stage);
    for (const id of [deliveryDeadLetterId, fanOutDeadLetterId, streamDeadLetterId]) {
      alarmOn(template, {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: queueDimension(id),
        Statistic: 'Maximum',
        Threshold: 1,
      });
    }
  });

  it('say which events end in the fan-out dead-letter queue: failed receives, or the rule could not put them', () => {
    const { template, fanOutDeadLetterId } = pipelineOf(stage);
    alarmOn(template, {
      Dimensions: queueDimension(fanOutDeadLetterId),
      AlarmDescription: Match.stringLikeRegexp(
        `failed ${FAN_OUT_MAX_RECEIVE_COUNT} fan-out receives, or that the rule could not put`,
      ),
    });
  });

  it('fire when the oldest event on the fan-out queue has waited 5 minutes', () => {
    const { template, fanOutQueueId } = pipelineOf(stage);
    expect(FAN_OUT_BACKLOG_AGE_ALARM.toSeconds()).toBe(300);
    alarmOn(template, {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: queueDimension(fanOutQueueId),
      Statistic: 'Maximum',
      Threshold: 300,
    });
  });

  it('fire when the oldest delivery message has waited 15 minutes', () => {
    const { template, deliveryQueueId } = pipelineOf(stage);
    alarmOn(template, {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: queueDimension(deliveryQueueId),
      Statistic: 'Maximum',
      Threshold: 900,
    });
  });

  it('fire when the stream publisher lags the stream by 5 minutes', () => {
    const { template, publisher } = pipelineOf(stage);
    alarmOn(template, {
      Namespace: 'AWS/Lambda',
      MetricName: 'IteratorAge',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: publisher.logicalId } }],
      Statistic: 'Maximum',
      Threshold: 300_000,
    });
  });

  it('fire on delivery worker and sweeper errors at the stage threshold', () => {
    const { template, worker, sweeper } = pipelineOf(stage);
    for (const fn of [worker, sweeper]) {
      alarmOn(template, {
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: fn.logicalId } }],
        Statistic: 'Sum',
        Period: 300,
        Threshold: STAGES[stage].alarms.functionErrors,
      });
    }
  });

  it('are exposed on the stack, eight of them', () => {
    expect(synthesized().stacks.get(stage)?.events.alarms).toHaveLength(8);
  });
});

describe.each(STAGE_NAMES.filter((name) => !STAGES[name].alarms.enabled))('the %s event pipeline', (stage) => {
  it('creates no alarms, as its config says', () => {
    expect(synthesized().stacks.get(stage)?.events.alarms).toEqual([]);
    templateOf(stage).resourceCountIs('AWS::CloudWatch::Alarm', 0);
  });
});

describe('the stage config', () => {
  it('turns the pipeline alarms on for staging and prod only', () => {
    expect(STAGE_NAMES.filter((name) => STAGES[name].alarms.enabled)).toEqual(['staging', 'prod']);
  });
});
