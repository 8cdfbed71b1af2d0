import { WORKERS } from '@svc/api';
import { INDEXES } from '@svc/table';
import { RemovalPolicy } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { STAGE_NAMES, STAGES, type StageName } from '../config/stages';
import {
  BILLING_RUN_TIMEOUT,
  BILLING_WORKER_TABLE_GRANT,
  BILLING_WORKER_TIMEOUT,
  MAX_RECEIVE_COUNT,
  rateDuration,
} from '../constructs/billing';
import { synthesized, templateOf, useSynthesizedApp } from './support/synth';
import {
  actionsOf,
  eventSourceMappings,
  functionsByService,
  inlineStatementsOfRole,
  logicalIdOf,
  queuePolicyStatements,
  queues,
  resourcesGranting,
  resourcesOfStatement,
  rolesAllowedOn,
  schedules,
  statementsOfRole,
  trustOfRole,
} from './support/template-model';

useSynthesizedApp();

const FOURTEEN_DAYS = 14 * 24 * 60 * 60;
const WRITES_AND_SCANS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:TransactWriteItems',
  'dynamodb:Scan',
];

const arnOf = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });
const indexArnOf = (tableId: string, index: string) => ({
  'Fn::Join': ['', [arnOf(tableId), `/index/${index}`]],
});

/** The billing pieces, found by how they are wired rather than by logical id. */
function billingOf(stage: StageName) {
  const template = templateOf(stage);
  const functions = functionsByService(template);
  const run = functions.get('billing-run');
  const worker = functions.get('billing-worker');
  if (!run || !worker) throw new Error(`No billing functions in ${stage}`);
  // Other queues of the stack (the webhook delivery queue) have dead-letter queues too.
  const consumed = new Set(
    eventSourceMappings(template)
      .filter((mapping) => mapping.FunctionName.Ref === worker.logicalId)
      .map((mapping) => mapping.EventSourceArn['Fn::GetAtt'][0]),
  );
  const redriven = [...queues(template)].filter(([id, queue]) => consumed.has(id) && queue.Properties.RedrivePolicy);
  expect(redriven, 'exactly one queue with a dead-letter queue feeds the billing worker').toHaveLength(1);
  const [queueId, queue] = redriven[0] ?? [];
  const deadLetterQueueId = queue?.Properties.RedrivePolicy?.deadLetterTargetArn['Fn::GetAtt'][0];
  const runSchedules = schedules(template).filter((s) => s.Target.Arn['Fn::GetAtt'][0] === run.logicalId);
  expect(runSchedules, 'exactly one schedule targets the billing run').toHaveLength(1);
  const [schedule] = runSchedules;
  if (!queueId || !deadLetterQueueId || !schedule) throw new Error('unreachable');
  return {
    template,
    run,
    worker,
    queueId,
    deadLetterQueueId,
    schedule,
    tableId: logicalIdOf(template, 'AWS::DynamoDB::Table'),
  };
}

describe('the stage rate', () => {
  it.each([
    ['rate(15 minutes)', 900],
    ['rate(1 minute)', 60],
    ['rate(2 hours)', 7200],
    ['rate(1 day)', 86_400],
  ] as const)('reads %s as %i seconds', (expression, seconds) => {
    expect(rateDuration(expression).toSeconds()).toBe(seconds);
  });

  it('refuses a rate of zero', () => {
    expect(() => rateDuration('rate(0 minutes)')).toThrow(/Not a rate expression/);
  });
});

describe.each(STAGE_NAMES)('billing on %s', (stage) => {
  it('starts the billing run at the stage rate, retrying twice within one period, with its own dead-letter queue', () => {
    const { schedule, deadLetterQueueId, queueId, template } = billingOf(stage);
    expect(schedule.ScheduleExpression).toBe(STAGES[stage].billingSchedule);
    expect(schedule.State).toBe('ENABLED');
    expect(schedule.Target.RetryPolicy).toEqual({
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: rateDuration(STAGES[stage].billingSchedule).toSeconds(),
    });
    const scheduleDeadLetterId = schedule.Target.DeadLetterConfig?.Arn['Fn::GetAtt'][0];
    expect(scheduleDeadLetterId).toBeDefined();
    expect([queueId, deadLetterQueueId]).not.toContain(scheduleDeadLetterId);
    expect(queues(template).get(scheduleDeadLetterId ?? '')?.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: FOURTEEN_DAYS,
    });
  });

  it('passes the scheduled time, the same on every retry, to the run', () => {
    const input: unknown = JSON.parse(billingOf(stage).schedule.Target.Input ?? 'null');
    expect(input).toEqual({
      scheduledTime: '<aws.scheduler.scheduled-time>',
      executionId: '<aws.scheduler.execution-id>',
    });
  });

  it('retries a failed run (Lambda invokes it asynchronously) only within one schedule period, then keeps it', () => {
    const { template, run } = billingOf(stage);
    const failureQueueId = synthesized()
      .stacks.get(stage)
      ?.getLogicalId(synthesized().stacks.get(stage)?.billing.runFailureQueue.node.defaultChild as never);
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: run.logicalId },
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: rateDuration(STAGES[stage].billingSchedule).toSeconds(),
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [failureQueueId, 'Arn'] } } },
    });
    // The run may send there (Lambda sends the failed start with its role).
    expect(resourcesGranting(statementsOfRole(template, run.roleId), 'sqs:SendMessage')).toContainEqual(
      arnOf(failureQueueId ?? ''),
    );
  });

  it('lets the scheduler role invoke the billing run and write its dead-letter queue, nothing else', () => {
    const { template, schedule, run } = billingOf(stage);
    const roleId = schedule.Target.RoleArn['Fn::GetAtt'][0];
    expect(statementsOfRole(template, roleId), 'no policy attached besides the inline one').toEqual([]);
    const statements = inlineStatementsOfRole(template, roleId);
    expect(statements.every((s) => s.Effect === 'Allow')).toBe(true);
    expect(actionsOf(statements, '')).toEqual(new Set(['lambda:InvokeFunction', 'sqs:SendMessage']));
    expect(resourcesGranting(statements, 'lambda:InvokeFunction')).toEqual([arnOf(run.logicalId)]);
    expect(resourcesGranting(statements, 'sqs:SendMessage')).toEqual([schedule.Target.DeadLetterConfig?.Arn]);
    expect(trustOfRole(template, roleId)).toEqual([
      expect.objectContaining({
        Effect: 'Allow',
        Action: 'sts:AssumeRole',
        Principal: { Service: 'scheduler.amazonaws.com' },
        Condition: { StringEquals: expect.objectContaining({ 'aws:SourceAccount': { Ref: 'AWS::AccountId' } }) },
      }),
    ]);
  });

  it('invokes the run through the role only: no resource policy on the function', () => {
    const { template, run } = billingOf(stage);
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission'));
    expect(permissions.filter((p) => JSON.stringify(p).includes(`"${run.logicalId}"`))).toEqual([]);
  });

  it('queues billing work encrypted, over TLS only, into a dead-letter queue after 5 receives kept 14 days', () => {
    const { template, queueId, deadLetterQueueId } = billingOf(stage);
    const all = queues(template);
    const queue = all.get(queueId);
    const deadLetters = all.get(deadLetterQueueId);
    expect(MAX_RECEIVE_COUNT).toBe(5);
    expect(queue?.Properties.RedrivePolicy?.maxReceiveCount).toBe(5);
    expect(queue?.Properties.SqsManagedSseEnabled).toBe(true);
    expect(deadLetters?.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: FOURTEEN_DAYS,
    });
    const policies = queuePolicyStatements(template);
    for (const id of all.keys()) {
      expect(policies.get(id), `${id} refuses plain HTTP`).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
  });

  it('keeps or deletes the queues with the stack, as the stage config says', () => {
    const expected =
      STAGES[stage].removalPolicy === RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE ? 'RetainExceptOnCreate' : 'Delete';
    for (const [id, queue] of queues(billingOf(stage).template)) expect(queue.DeletionPolicy, id).toBe(expected);
  });

  it('hides a message from other receivers for at least six worker timeouts', () => {
    const { template, queueId, worker } = billingOf(stage);
    expect(worker.properties.Timeout).toBe(BILLING_WORKER_TIMEOUT.toSeconds());
    expect(queues(template).get(queueId)?.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(
      6 * (worker.properties.Timeout ?? Number.POSITIVE_INFINITY),
    );
  });

  it('feeds the worker batches of 10 from the billing queue, reporting failed items only', () => {
    const { template, queueId, worker } = billingOf(stage);
    const mappings = eventSourceMappings(template).filter((m) => m.FunctionName.Ref === worker.logicalId);
    expect(mappings).toHaveLength(1);
    const [mapping] = mappings;
    expect(mapping?.EventSourceArn).toEqual(arnOf(queueId));
    expect(mapping?.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(mapping?.BatchSize).toBe(10);
    expect(mapping?.MaximumBatchingWindowInSeconds).toBeLessThanOrEqual(1);
  });

  it('gives both functions the table, stage and queue URL; the run 5 minutes, the worker 60 s', () => {
    const { run, worker, queueId, tableId } = billingOf(stage);
    for (const fn of [run, worker]) {
      expect(fn.properties.Environment.Variables).toMatchObject({
        SVC_BILLING_QUEUE_URL: { Ref: queueId },
        SVC_TABLE_NAME: { Ref: tableId },
        SVC_STAGE: stage,
      });
      expect(fn.properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'] });
    }
    expect(run.properties.Timeout).toBe(BILLING_RUN_TIMEOUT.toSeconds());
    expect(BILLING_RUN_TIMEOUT.toMinutes()).toBe(5);
    expect(worker.properties.Timeout).toBe(60);
    expect(run.properties.MemorySize).toBe(WORKERS.billingRun.memoryMb);
    expect(worker.properties.MemorySize).toBe(WORKERS.billingWorker.memoryMb);
  });

  it('lets the billing run query the due index only, read no item, and never write or scan the table', () => {
    const { template, run, tableId } = billingOf(stage);
    const statements = statementsOfRole(template, run.roleId);
    // The run only finds what is due and queues it: the worker reads the items (issue 46, point 6).
    expect(actionsOf(statements, 'dynamodb:')).toEqual(new Set(['dynamodb:Query']));
    expect(resourcesGranting(statements, 'dynamodb:Query')).toEqual([indexArnOf(tableId, INDEXES.due.name)]);
    expect(resourcesGranting(statements, 'dynamodb:GetItem')).toEqual([]);
    for (const action of WRITES_AND_SCANS) expect(resourcesGranting(statements, action), action).toEqual([]);
  });

  it('lets the billing run send to the billing queue and its failure queue only, and do nothing else with SQS', () => {
    const { template, run, queueId } = billingOf(stage);
    const statements = statementsOfRole(template, run.roleId);
    expect(actionsOf(statements, 'sqs:')).toEqual(new Set(['sqs:SendMessage']));
    const stack = synthesized().stacks.get(stage);
    const failureQueueId = stack?.getLogicalId(stack.billing.runFailureQueue.node.defaultChild as never) ?? '';
    // The billing queue, and the run-failure queue Lambda sends a failed start to with this role.
    expect(resourcesGranting(statements, 'sqs:SendMessage')).toEqual([arnOf(queueId), arnOf(failureQueueId)]);
  });

  it('lets the worker read items by key and write invoices, charge attempts and reminders: no Query, Update, delete, batch-write or scan', () => {
    const { template, worker, tableId } = billingOf(stage);
    const statements = statementsOfRole(template, worker.roleId);
    expect(actionsOf(statements, 'dynamodb:')).toEqual(
      new Set([...BILLING_WORKER_TABLE_GRANT.reads, ...BILLING_WORKER_TABLE_GRANT.writes]),
    );
    for (const action of ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:ConditionCheckItem']) {
      // The table only; PutItem in two statements (the charge's items, a reminder's mail).
      expect(new Set(resourcesGranting(statements, action).map((r) => JSON.stringify(r))), action).toEqual(
        new Set([JSON.stringify(arnOf(tableId))]),
      );
    }
    for (const action of [
      'dynamodb:Query',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:Scan',
    ]) {
      expect(resourcesGranting(statements, action), action).toEqual([]);
    }
  });

  it('lets the worker consume from the billing queue, and send to the mail queue only (charge reminders)', () => {
    const { template, worker, queueId } = billingOf(stage);
    const stack = synthesized().stacks.get(stage);
    const mailQueueId = stack?.getLogicalId(stack.mail.queue.node.defaultChild as never) ?? '';
    const all = statementsOfRole(template, worker.roleId).filter((s) => s.Action.some((a) => a.startsWith('sqs:')));
    const sends = all.filter((s) => s.Action.includes('sqs:SendMessage'));
    expect(sends.map((s) => s.Action)).toEqual([['sqs:SendMessage']]);
    expect(resourcesGranting(sends, 'sqs:SendMessage')).toEqual([arnOf(mailQueueId)]);
    const statements = all.filter((s) => !sends.includes(s));
    expect(statements.flatMap(resourcesOfStatement)).toEqual(statements.map(() => arnOf(queueId)));
    expect(actionsOf(statements, 'sqs:')).toEqual(
      new Set([
        'sqs:ReceiveMessage',
        'sqs:DeleteMessage',
        'sqs:ChangeMessageVisibility',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
      ]),
    );
  });

  it('gives the worker what a charge reminder needs: the mail queue, the hash key, the public address; the link and mail partitions to put, the supporter, organisation and portal settings to read', () => {
    const { template, worker } = billingOf(stage);
    const stack = synthesized().stacks.get(stage);
    if (!stack) throw new Error(`no ${stage} stack`);
    const variables = worker.properties.Environment.Variables;
    expect(Object.keys(variables)).toEqual(
      expect.arrayContaining(['SVC_MAIL_QUEUE_URL', 'SVC_HASH_KEY_SECRET_ARN', 'SVC_PUBLIC_URL']),
    );
    expect(variables.SVC_HASH_KEY_SECRET_ARN).toEqual({
      Ref: stack.getLogicalId(stack.hashKey.node.defaultChild as never),
    });
    const statements = statementsOfRole(template, worker.roleId);
    const leadingKeys = (action: string) =>
      statements
        .filter((statement) => statement.Action.includes(action))
        .flatMap(
          (statement) =>
            (statement as { Condition?: Record<string, Record<string, string[]>> }).Condition?.[
              'ForAllValues:StringLike'
            ]?.['dynamodb:LeadingKeys'] ?? [],
        );
    expect(leadingKeys('dynamodb:PutItem')).toEqual(
      expect.arrayContaining(['PORTAL_LINK#*', 'MAIL#*', 'SUBSCRIPTION#*']),
    );
    expect(leadingKeys('dynamodb:GetItem')).toEqual(
      expect.arrayContaining(['SUPPORTER#*', 'ORG#*', 'PORTAL_SETTINGS#*', 'SUBSCRIPTION#*']),
    );
    expect(actionsOf(statements, 'secretsmanager:')).toEqual(
      new Set(['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret']),
    );
  });

  it('lets only the run put messages on the billing queue, and nobody on its dead-letter queue', () => {
    const { template, run, queueId, deadLetterQueueId } = billingOf(stage);
    expect(rolesAllowedOn(template, queueId, ['sqs:SendMessage', 'sqs:*'])).toEqual(new Set([run.roleId]));
    expect(rolesAllowedOn(template, deadLetterQueueId, ['sqs:SendMessage', 'sqs:*'])).toEqual(new Set());
  });
});

describe.each(STAGE_NAMES.filter((name) => STAGES[name].alarms.enabled))('billing alarms on %s', (stage) => {
  const alarmOn = (template: Template, properties: Record<string, unknown>) =>
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      ...properties,
    });

  it('fire on any message in the billing dead-letter queue', () => {
    const { template, deadLetterQueueId } = billingOf(stage);
    alarmOn(template, {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLetterQueueId, 'QueueName'] } }],
      Statistic: 'Maximum',
      Threshold: 1,
    });
  });

  it('fire on any start of the run that failed every attempt', () => {
    const { template } = billingOf(stage);
    const stack = synthesized().stacks.get(stage);
    const failureQueueId = stack?.getLogicalId(stack.billing.runFailureQueue.node.defaultChild as never);
    alarmOn(template, {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [failureQueueId, 'QueueName'] } }],
      Threshold: 1,
    });
  });

  it('fire on any start the schedule could not deliver', () => {
    const { template, schedule } = billingOf(stage);
    const scheduleDeadLetterId = schedule.Target.DeadLetterConfig?.Arn['Fn::GetAtt'][0];
    alarmOn(template, {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [scheduleDeadLetterId, 'QueueName'] } }],
      Threshold: 1,
    });
  });

  it('fire on one failed billing run in 15 minutes', () => {
    const { template, run } = billingOf(stage);
    alarmOn(template, {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: run.logicalId } }],
      Statistic: 'Sum',
      Period: 900,
      Threshold: 1,
    });
  });

  it('fire on worker errors at the stage threshold', () => {
    const { template, worker } = billingOf(stage);
    alarmOn(template, {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: worker.logicalId } }],
      Period: 300,
      Threshold: STAGES[stage].alarms.functionErrors,
    });
  });

  it('are exposed on the stack, four of them', () => {
    expect(synthesized().stacks.get(stage)?.billing.alarms).toHaveLength(5);
  });
});

describe.each(STAGE_NAMES.filter((name) => !STAGES[name].alarms.enabled))('billing on %s', (stage) => {
  it('creates no alarms, as its config says', () => {
    expect(synthesized().stacks.get(stage)?.billing.alarms).toEqual([]);
    templateOf(stage).resourceCountIs('AWS::CloudWatch::Alarm', 0);
  });
});
