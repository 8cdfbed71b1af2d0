import { WORKERS } from '@svc/api';
import { MAIL_MAX_RECEIVES, MAIL_WORKER_TIMEOUT_SECONDS } from '@svc/mail';
import { describe, expect, it } from 'vitest';
import { STAGE_NAMES, STAGES, type StageName } from '../config/stages';
import { MAIL_SWEEP_SCHEDULE, MAIL_UNSENT_AGE_ALARM } from '../constructs/mail';
import { templateOf, useSynthesizedApp } from './support/synth';
import {
  eventSourceMappings,
  functionsByService,
  queues,
  resourcesGranting,
  rolesAllowedOn,
  schedules,
  statementsOfRole,
} from './support/template-model';

useSynthesizedApp();

const FOURTEEN_DAYS = 14 * 24 * 60 * 60;

/** The mail pieces, found by how they are wired. */
function mailOf(stage: StageName) {
  const template = templateOf(stage);
  const functions = functionsByService(template);
  const worker = functions.get('mail-worker');
  const sweeper = functions.get('mail-sweeper');
  if (!worker || !sweeper) throw new Error(`No mail functions in ${stage}`);
  const mappings = eventSourceMappings(template).filter((m) => m.FunctionName.Ref === worker.logicalId);
  expect(mappings, 'one queue feeds the mail worker').toHaveLength(1);
  const queueId = mappings[0]?.EventSourceArn['Fn::GetAtt'][0] ?? '';
  const queue = queues(template).get(queueId);
  const deadLetterQueueId = queue?.Properties.RedrivePolicy?.deadLetterTargetArn['Fn::GetAtt'][0] ?? '';
  return { template, worker, sweeper, mapping: mappings[0], queueId, queue, deadLetterQueueId };
}

describe.each(STAGE_NAMES)('mail on %s', (stage) => {
  it('has a queue with a dead-letter queue (five receives, kept 14 days) feeding the worker, failures reported alone', () => {
    const { queue, deadLetterQueueId, template, mapping } = mailOf(stage);
    expect(queue?.Properties.RedrivePolicy?.maxReceiveCount).toBe(MAIL_MAX_RECEIVES);
    expect(queue?.Properties.VisibilityTimeout).toBe(MAIL_WORKER_TIMEOUT_SECONDS * 6);
    expect(queues(template).get(deadLetterQueueId)?.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: FOURTEEN_DAYS,
    });
    expect(mapping?.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(mapping?.ScalingConfig?.MaximumConcurrency).toBeGreaterThanOrEqual(2);
  });

  it('lets the worker send only from the stage identity: ses:SendEmail on its identity ARN, nothing else of SES', () => {
    const { template, worker, sweeper } = mailOf(stage);
    const statements = statementsOfRole(template, worker.roleId);
    const sesActions = new Set(statements.flatMap((s) => s.Action).filter((a) => a.startsWith('ses:')));
    expect([...sesActions]).toEqual(['ses:SendEmail']);
    expect(resourcesGranting(statements, 'ses:SendEmail')).toEqual([
      {
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            ':ses:',
            { Ref: 'AWS::Region' },
            ':',
            { Ref: 'AWS::AccountId' },
            `:identity/${STAGES[stage].mail.identity}`,
          ],
        ],
      },
    ]);
    expect(worker.properties.Environment.Variables.SVC_MAIL_FROM).toBe(STAGES[stage].mail.from);
    expect(STAGES[stage].mail.from.endsWith(`@${STAGES[stage].mail.identity}`)).toBe(true);
    // The sweeper sends no mail.
    expect(resourcesGranting(statementsOfRole(template, sweeper.roleId), 'ses:SendEmail')).toEqual([]);
  });

  it('holds the worker to the outbox items and the sweeper to them, the due index and the mail queue', () => {
    const { template, worker, sweeper, queueId } = mailOf(stage);
    const workerStatements = statementsOfRole(template, worker.roleId);
    for (const action of ['dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:Scan']) {
      expect(resourcesGranting(workerStatements, action), action).toEqual([]);
    }
    const leading = workerStatements
      .filter((s) => s.Action.includes('dynamodb:UpdateItem'))
      .map((s) => JSON.stringify(s.Condition));
    expect(leading).toEqual([expect.stringContaining('"MAIL#*"')]);
    const sweeperStatements = statementsOfRole(template, sweeper.roleId);
    expect(resourcesGranting(sweeperStatements, 'sqs:SendMessage')).toEqual([{ 'Fn::GetAtt': [queueId, 'Arn'] }]);
    expect(JSON.stringify(resourcesGranting(sweeperStatements, 'dynamodb:Query'))).toContain('/index/due');
    expect(resourcesGranting(sweeperStatements, 'dynamodb:PutItem')).toEqual([]);
  });

  it('lets the portal put outbox items and send to the mail queue, and read no mail', () => {
    const { template, queueId } = mailOf(stage);
    const portal = functionsByService(template).get('portal');
    if (!portal) throw new Error('no portal function');
    expect(portal.properties.Environment.Variables.SVC_MAIL_QUEUE_URL).toEqual({ Ref: queueId });
    const statements = statementsOfRole(template, portal.roleId);
    expect(resourcesGranting(statements, 'sqs:SendMessage')).toEqual([{ 'Fn::GetAtt': [queueId, 'Arn'] }]);
    const mail = statements.filter((s) => JSON.stringify(s.Condition ?? {}).includes('"MAIL#*"'));
    expect(mail.map((s) => s.Action)).toEqual([['dynamodb:PutItem']]);
  });

  it('lets the receipts worker put and read mail items and send to the mail queue, and send no mail itself', () => {
    const { template, queueId } = mailOf(stage);
    const receiptsWorker = functionsByService(template).get('receipts-worker');
    if (!receiptsWorker) throw new Error('no receipts worker function');
    expect(receiptsWorker.properties.Environment.Variables.SVC_MAIL_QUEUE_URL).toEqual({ Ref: queueId });
    const statements = statementsOfRole(template, receiptsWorker.roleId);
    // The mail queue, and its own queue (a batch's next page).
    const receiptsQueue = receiptsWorker.properties.Environment.Variables.SVC_RECEIPTS_QUEUE_URL as { Ref: string };
    expect(new Set(resourcesGranting(statements, 'sqs:SendMessage').map((arn) => JSON.stringify(arn)))).toEqual(
      new Set([queueId, receiptsQueue.Ref].map((id) => JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] }))),
    );
    // Its mails are the outbox's (mail.grantQueueing): the mail items only, by key.
    const mail = statements.filter((s) => JSON.stringify(s.Condition ?? {}).includes('"MAIL#*"'));
    expect(mail.map((s) => [...s.Action].sort())).toEqual([['dynamodb:GetItem', 'dynamodb:PutItem']]);
    expect(mail.map((s) => JSON.stringify(s.Condition))).toEqual([
      JSON.stringify({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['MAIL#*'] } }),
    ]);
    expect(statements.flatMap((s) => s.Action).filter((action) => action.startsWith('ses:'))).toEqual([]);
  });

  it('takes mails from the portal, the billing worker, the receipts worker and the sweeper only', () => {
    const { template, queueId, sweeper } = mailOf(stage);
    const functions = functionsByService(template);
    const roleOf = (service: string) => {
      const fn = functions.get(service);
      if (!fn) throw new Error(`no ${service} function`);
      return fn.roleId;
    };
    expect(rolesAllowedOn(template, queueId, ['sqs:SendMessage', 'sqs:*'])).toEqual(
      new Set([roleOf('portal'), roleOf('billing-worker'), roleOf('receipts-worker'), sweeper.roleId]),
    );
  });

  it('sweeps unsent mails on a schedule', () => {
    const { template, sweeper } = mailOf(stage);
    const found = schedules(template).filter((s) => s.Target.Arn['Fn::GetAtt'][0] === sweeper.logicalId);
    expect(found).toHaveLength(1);
    expect(found[0]?.ScheduleExpression).toBe(MAIL_SWEEP_SCHEDULE);
  });

  it('is sized as WORKERS says', () => {
    const { worker, sweeper } = mailOf(stage);
    expect(worker.properties.MemorySize).toBe(WORKERS.mailWorker.memoryMb);
    expect(sweeper.properties.MemorySize).toBe(WORKERS.mailSweeper.memoryMb);
    expect(worker.properties.Timeout).toBe(MAIL_WORKER_TIMEOUT_SECONDS);
  });

  it(`alarms on dead letters and on mails unsent ${MAIL_UNSENT_AGE_ALARM.toMinutes()} minutes or a silent sweeper, where the stage has alarms`, () => {
    const { template, deadLetterQueueId } = mailOf(stage);
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as Array<{
      Properties: Record<string, unknown>;
    }>;
    const deadLetters = alarms.filter(
      (a) =>
        a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible' &&
        JSON.stringify(a.Properties.Dimensions).includes(deadLetterQueueId),
    );
    const unsent = alarms.filter((a) => a.Properties.MetricName === 'MailUnsentAge');
    if (!STAGES[stage].alarms.enabled) {
      expect([...deadLetters, ...unsent]).toEqual([]);
      return;
    }
    expect(deadLetters).toHaveLength(1);
    expect(deadLetters[0]?.Properties).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(unsent).toHaveLength(1);
    expect(unsent[0]?.Properties).toMatchObject({
      Namespace: `svc/${stage}`,
      Statistic: 'Maximum',
      Threshold: MAIL_UNSENT_AGE_ALARM.toSeconds(),
      TreatMissingData: 'breaching',
      Dimensions: [{ Name: 'service', Value: 'svc' }],
    });
    // Both reach the stage's alarm topic.
    for (const alarm of [...deadLetters, ...unsent]) expect(alarm.Properties.AlarmActions).toBeDefined();
  });
});
