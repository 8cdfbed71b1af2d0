import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { functionsByService } from '../../infra/test/support/template-model';
import { ANY_PARTITION, checkCalls, unexercisedReads, unexercisedWrites } from './conformance';
import type { RecordedCall } from './recorder';

/**
 * The conformance check's own logic, on a small template written here (the check itself runs
 * over the whole suite's recording in conformance.check.ts): a worker whose role reads deliveries
 * and endpoints, queries the due index, puts deliveries and only updates its counters.
 */
const TABLE = { 'Fn::GetAtt': ['Table', 'Arn'] };
const leading = (...keys: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': keys } });

function templateWith(statements: unknown[]): Template {
  return Template.fromJSON({
    Resources: {
      Table: { Type: 'AWS::DynamoDB::Table', Properties: {} },
      WorkerRole: { Type: 'AWS::IAM::Role', Properties: {} },
      WorkerPolicy: {
        Type: 'AWS::IAM::Policy',
        Properties: { Roles: [{ Ref: 'WorkerRole' }], PolicyDocument: { Statement: statements } },
      },
      Worker: {
        Type: 'AWS::Lambda::Function',
        Properties: {
          Role: { 'Fn::GetAtt': ['WorkerRole', 'Arn'] },
          Runtime: 'nodejs22.x',
          Architectures: ['arm64'],
          MemorySize: 256,
          Environment: { Variables: { POWERTOOLS_SERVICE_NAME: 'worker', SVC_TABLE_NAME: { Ref: 'Table' } } },
        },
      },
    },
  });
}

const READS = {
  Effect: 'Allow',
  Action: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
  Resource: TABLE,
  Condition: leading('DELIVERY#*', 'WEBHOOK#*'),
};
const DUE_QUERY = {
  Effect: 'Allow',
  Action: 'dynamodb:Query',
  Resource: { 'Fn::Join': ['', [TABLE, '/index/due']] },
  Condition: leading('DELIVERY_DUE#*'),
};
const PUTS = { Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: TABLE, Condition: leading('DELIVERY#*') };
const COUNTS = {
  Effect: 'Allow',
  Action: 'dynamodb:UpdateItem',
  Resource: TABLE,
  Condition: leading('WEBHOOK_PACE#*'),
};

const call = (command: string, pk: string, extra: Partial<RecordedCall['resources'][number]> = {}): RecordedCall => ({
  fn: 'worker',
  service: 'DynamoDB',
  command,
  resources: [{ variable: 'SVC_TABLE_NAME', partitionKeys: [pk], ...extra }],
});

/** Every grant of the template exercised once. */
const ALL_USED: RecordedCall[] = [
  call('Get', 'DELIVERY#1'),
  call('BatchGet', 'WEBHOOK#1'),
  call('Query', 'DELIVERY_DUE#3', { index: 'due' }),
  call('Put', 'DELIVERY#1'),
  call('Update', 'WEBHOOK_PACE#1'),
];

describe('the IAM conformance check', () => {
  const template = templateWith([READS, DUE_QUERY, PUTS, COUNTS]);
  const functions = functionsByService(template);

  it('allows the reads and writes the role grants, and refuses a read of a partition it does not', () => {
    expect(checkCalls(template, functions, ALL_USED).findings).toEqual([]);
    const { findings } = checkCalls(template, functions, [
      // A client is no partition of the worker's.
      call('Get', 'CLIENT#operator'),
      call('BatchGet', 'CLIENT#operator'),
      // The due index is held to the delivery shards; the table itself is not queried.
      call('Query', 'PAYMENT_DUE#1', { index: 'due' }),
      call('Query', 'DELIVERY#1'),
    ]);
    expect(findings.map((f) => f.action)).toEqual([
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:Query',
    ]);
  });

  it('finds nothing unexercised when every granted partition was read and written with each granted action', () => {
    expect(unexercisedReads(template, functions, ALL_USED)).toEqual([]);
    expect(unexercisedWrites(template, functions, ALL_USED)).toEqual([]);
  });

  it('finds a read partition granted and never read, on the table and on an index', () => {
    const calls = ALL_USED.filter((c) => c.command !== 'BatchGet' && c.command !== 'Query');
    expect(unexercisedReads(template, functions, calls)).toEqual([
      { fn: 'worker', leadingKey: 'WEBHOOK#*' },
      { fn: 'worker', index: 'due', leadingKey: 'DELIVERY_DUE#*' },
    ]);
  });

  it('counts a write as no read, and a read of another index as no read of this one', () => {
    const calls = [
      ...ALL_USED.filter((c) => c.command !== 'Get' && c.command !== 'Query'),
      call('Query', 'DELIVERY_DUE#3', { index: 'gsi1' }),
    ];
    expect(unexercisedReads(template, functions, calls)).toEqual([
      { fn: 'worker', leadingKey: 'DELIVERY#*' },
      { fn: 'worker', index: 'due', leadingKey: 'DELIVERY_DUE#*' },
    ]);
  });

  it('counts a transaction condition check as a read of its partition', () => {
    const withCheck = templateWith([
      { ...READS, Action: [...READS.Action, 'dynamodb:ConditionCheckItem'] },
      DUE_QUERY,
      PUTS,
      COUNTS,
    ]);
    const calls: RecordedCall[] = [
      ...ALL_USED.filter((c) => c.command !== 'Get'),
      {
        fn: 'worker',
        service: 'DynamoDB',
        command: 'TransactWrite',
        itemActions: ['ConditionCheckItem'],
        resources: [{ variable: 'SVC_TABLE_NAME', partitionKeys: ['DELIVERY#1'], action: 'ConditionCheckItem' }],
      },
    ];
    const withCheckFunctions = functionsByService(withCheck);
    expect(checkCalls(withCheck, withCheckFunctions, calls).findings).toEqual([]);
    expect(unexercisedReads(withCheck, withCheckFunctions, calls)).toEqual([]);
  });

  it('reports a read statement held to no partition: it reaches clients and every other partition', () => {
    const open = templateWith([{ ...READS, Condition: undefined }, DUE_QUERY, PUTS, COUNTS]);
    expect(unexercisedReads(open, functionsByService(open), ALL_USED)).toEqual([
      { fn: 'worker', leadingKey: ANY_PARTITION },
    ]);
  });

  it('finds each write action a partition is granted and never took: a put granted where only updates are sent', () => {
    const broad = templateWith([
      READS,
      DUE_QUERY,
      {
        Effect: 'Allow',
        Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
        Resource: TABLE,
        Condition: leading('DELIVERY#*', 'WEBHOOK_PACE#*'),
      },
    ]);
    expect(unexercisedWrites(broad, functionsByService(broad), ALL_USED)).toEqual([
      { fn: 'worker', action: 'dynamodb:PutItem', leadingKey: 'WEBHOOK_PACE#*' },
      { fn: 'worker', action: 'dynamodb:UpdateItem', leadingKey: 'DELIVERY#*' },
    ]);
  });

  it('counts a batch write by its own action and a transaction part by the action IAM checks for it', () => {
    const batch = templateWith([
      READS,
      DUE_QUERY,
      { Effect: 'Allow', Action: 'dynamodb:BatchWriteItem', Resource: TABLE, Condition: leading('DELIVERY#*') },
      { ...PUTS, Condition: leading('WEBHOOK_RESPONSE#*') },
      COUNTS,
    ]);
    const calls: RecordedCall[] = [
      ...ALL_USED.filter((c) => c.command !== 'Put'),
      call('BatchWrite', 'DELIVERY#1'),
      {
        fn: 'worker',
        service: 'DynamoDB',
        command: 'TransactWrite',
        itemActions: ['PutItem'],
        resources: [{ variable: 'SVC_TABLE_NAME', partitionKeys: ['WEBHOOK_RESPONSE#1'], action: 'PutItem' }],
      },
    ];
    expect(unexercisedWrites(batch, functionsByService(batch), calls)).toEqual([]);
    // A put is no batch write, nor the reverse.
    expect(
      unexercisedWrites(batch, functionsByService(batch), [...ALL_USED, call('Put', 'WEBHOOK_RESPONSE#1')]),
    ).toEqual([{ fn: 'worker', action: 'dynamodb:BatchWriteItem', leadingKey: 'DELIVERY#*' }]);
  });

  it('counts a key of a statement on several indexes as read when one of them was queried with it', () => {
    const twoIndexes = templateWith([
      READS,
      {
        ...DUE_QUERY,
        Resource: [{ 'Fn::Join': ['', [TABLE, '/index/gsi1']] }, { 'Fn::Join': ['', [TABLE, '/index/gsi2']] }],
        Condition: leading('ORG#*#WEBHOOKS', 'WEBHOOK#*#RESPONSES*'),
      },
      PUTS,
      COUNTS,
    ]);
    const calls = [
      ...ALL_USED.filter((c) => c.command !== 'Query'),
      call('Query', 'ORG#1#WEBHOOKS', { index: 'gsi1' }),
      // An index query on the table's keys, or on another index, exercises nothing here.
      call('Query', 'WEBHOOK#1#RESPONSES', { index: 'due' }),
    ];
    expect(unexercisedReads(twoIndexes, functionsByService(twoIndexes), calls)).toEqual([
      { fn: 'worker', index: 'gsi1,gsi2', leadingKey: 'WEBHOOK#*#RESPONSES*' },
    ]);
  });

  it('judges no function the run did not exercise', () => {
    expect(unexercisedReads(template, functions, [])).toEqual([]);
    expect(unexercisedWrites(template, functions, [])).toEqual([]);
  });
});
