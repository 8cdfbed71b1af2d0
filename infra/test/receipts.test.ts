import { RemovalPolicy } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { STAGE_NAMES, STAGES, type StageName } from '../config/stages';
import {
  RECEIPTS_MAX_RECEIVE_COUNT,
  RECEIPTS_PREFIX,
  RECEIPTS_WORKER_MAX_CONCURRENCY,
  RECEIPTS_WORKER_TIMEOUT,
} from '../constructs/receipts';
import { synthesized, templateOf, useSynthesizedApp } from './support/synth';
import {
  type BucketView,
  bucketPolicyStatements,
  buckets,
  eventSourceMappings,
  functionsByService,
  queues,
  resourcesGranting,
  rolesAllowedOn,
  statementsOfRole,
} from './support/template-model';

useSynthesizedApp();

const FOURTEEN_DAYS = 14 * 24 * 60 * 60;
/** Every S3 action that reads, writes, deletes or reconfigures objects or the bucket, and the wildcards. */
const S3_ACTIONS_OF_NOTE = [
  's3:*',
  's3:GetObject',
  's3:GetObjectVersion',
  's3:PutObject',
  's3:DeleteObject',
  's3:DeleteObjectVersion',
  's3:ListBucket',
  's3:ListBucketVersions',
  's3:PutBucketPolicy',
  's3:PutLifecycleConfiguration',
];

const arnOf = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });
const bucketAndObjects = (bucketId: string) => [arnOf(bucketId), { 'Fn::Join': ['', [arnOf(bucketId), '/*']] }];
const receiptObjects = (bucketId: string) => ({ 'Fn::Join': ['', [arnOf(bucketId), `/${RECEIPTS_PREFIX}*`]] });
const refSchema = z.object({ Ref: z.string() });

/** The receipts' pieces, found by how they are wired rather than by logical id. */
function receiptsOf(stage: StageName) {
  const template = templateOf(stage);
  const functions = functionsByService(template);
  const fn = (service: string) => {
    const found = functions.get(service);
    if (!found) throw new Error(`No ${service} function in ${stage}`);
    return found;
  };
  const worker = fn('receipts-worker');
  const api = fn('receipts');
  const portal = fn('portal');
  const mappings = eventSourceMappings(template).filter((m) => m.FunctionName.Ref === worker.logicalId);
  expect(mappings, 'one event source feeds the receipts worker').toHaveLength(1);
  const [mapping] = mappings;
  const queueId = mapping?.EventSourceArn['Fn::GetAtt'][0];
  const deadLetterQueueId = queues(template).get(queueId ?? '')?.Properties.RedrivePolicy?.deadLetterTargetArn[
    'Fn::GetAtt'
  ][0];
  const bucketId = refSchema.parse(worker.properties.Environment.Variables.SVC_RECEIPTS_BUCKET).Ref;
  const bucket = buckets(template).get(bucketId);
  // The reconciliation bucket's access-log bucket, where the receipts bucket logs too.
  const reconciliationBucketId = refSchema.parse(
    fn('reconciliation').properties.Environment.Variables.SVC_RECONCILIATION_BUCKET,
  ).Ref;
  const accessLogsBucketId =
    buckets(template).get(reconciliationBucketId)?.Properties.LoggingConfiguration?.DestinationBucketName.Ref;
  if (!mapping || !queueId || !deadLetterQueueId || !bucket || !accessLogsBucketId) {
    throw new Error(`The receipts of ${stage} are not wired as expected`);
  }
  return { template, worker, api, portal, mapping, queueId, deadLetterQueueId, bucketId, bucket, accessLogsBucketId };
}

function lifecycleRules(bucket: BucketView) {
  return bucket.Properties.LifecycleConfiguration?.Rules ?? [];
}

/** The Allow CDK's bucket-emptying handler gets on a DESTROY stage's buckets (its role, by ARN). */
const emptiesOnDelete = (statement: { Effect?: string; Principal?: unknown }) =>
  statement.Effect === 'Allow' &&
  JSON.stringify(statement.Principal ?? '').includes('CustomS3AutoDeleteObjectsCustomResourceProviderRole');

const removalOf = (stage: StageName) =>
  STAGES[stage].removalPolicy === RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE ? 'RetainExceptOnCreate' : 'Delete';

describe.each(STAGE_NAMES)('the %s receipts bucket', (stage) => {
  it('is versioned, blocks all public access, owns every object (no ACLs) and encrypts with S3-managed keys', () => {
    const { bucket } = receiptsOf(stage);
    expect(bucket.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.Properties.OwnershipControls?.Rules).toEqual([{ ObjectOwnership: 'BucketOwnerEnforced' }]);
    expect(bucket.Properties.BucketEncryption?.ServerSideEncryptionConfiguration).toEqual([
      { ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } },
    ]);
  });

  it('refuses plain HTTP and TLS below 1.2 for everyone, and its policy allows nobody anything', () => {
    const { template, bucketId } = receiptsOf(stage);
    const statements = bucketPolicyStatements(template).get(bucketId) ?? [];
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Action: 's3:*',
        Principal: { AWS: '*' },
        Resource: bucketAndObjects(bucketId),
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    );
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Action: 's3:*',
        Principal: { AWS: '*' },
        Resource: bucketAndObjects(bucketId),
        Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } },
      }),
    );
    expect(statements.filter((statement) => statement.Effect === 'Allow' && !emptiesOnDelete(statement))).toEqual([]);
  });

  it(`expires receipts/ (current and noncurrent versions) after the stage's ${STAGES[stage].receiptRetentionDays} days, and nothing else by age`, () => {
    const { bucket } = receiptsOf(stage);
    const days = STAGES[stage].receiptRetentionDays;
    expect(RECEIPTS_PREFIX).toBe('receipts/');
    expect(lifecycleRules(bucket)).toEqual([
      {
        Id: 'Retention',
        Status: 'Enabled',
        Prefix: RECEIPTS_PREFIX,
        ExpirationInDays: days,
        NoncurrentVersionExpiration: { NoncurrentDays: days },
        ExpiredObjectDeleteMarker: false,
      },
      { Id: 'Leftovers', Status: 'Enabled', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } },
    ]);
  });

  it('logs its access to the access-log bucket, under receipts/', () => {
    const { bucket, bucketId, accessLogsBucketId } = receiptsOf(stage);
    expect(accessLogsBucketId).not.toBe(bucketId);
    expect(bucket.Properties.LoggingConfiguration).toMatchObject({
      DestinationBucketName: { Ref: accessLogsBucketId },
      LogFilePrefix: 'receipts/',
    });
  });

  it('is kept or deleted with the stack as the stage config says, like the table', () => {
    const { template, bucket } = receiptsOf(stage);
    const table = Object.values(template.findResources('AWS::DynamoDB::Table'))[0];
    expect(bucket.DeletionPolicy).toBe(removalOf(stage));
    expect(bucket.DeletionPolicy).toBe(table?.DeletionPolicy);
  });

  it("is reachable by the receipts function, its worker and the portal (a donor's own PDFs) alone, and nobody may delete its documents", () => {
    const { template, bucketId, api, worker, portal } = receiptsOf(stage);
    expect(rolesAllowedOn(template, bucketId, S3_ACTIONS_OF_NOTE)).toEqual(
      new Set([api.roleId, worker.roleId, portal.roleId]),
    );
    expect(
      rolesAllowedOn(template, bucketId, ['s3:*', 's3:DeleteObject', 's3:DeleteObjectVersion', 's3:PutBucketPolicy']),
    ).toEqual(new Set());
  });
});

describe.each(STAGE_NAMES)('the %s receipts roles', (stage) => {
  // The portal's PDF of a donor's receipt is made, and kept, as the receipts function makes it (pdfOf).
  it.each(['receipts', 'receipts-worker', 'portal'])('let %s get and put objects under receipts/ only', (service) => {
    const { template, bucketId } = receiptsOf(stage);
    const fn = functionsByService(template).get(service);
    if (!fn) throw new Error(`No ${service} function in ${stage}`);
    const statements = statementsOfRole(template, fn.roleId);
    const onBucket = statements.filter((statement) => JSON.stringify(statement.Resource).includes(`"${bucketId}"`));
    expect(onBucket).toEqual([
      expect.objectContaining({
        Effect: 'Allow',
        Action: ['s3:GetObject', 's3:PutObject'],
        Resource: receiptObjects(bucketId),
      }),
    ]);
    for (const action of ['s3:GetObject', 's3:PutObject']) {
      expect(
        resourcesGranting(statements, action).filter((resource) => JSON.stringify(resource).includes(`"${bucketId}"`)),
      ).toEqual([receiptObjects(bucketId)]);
    }
    expect(fn.properties.Environment.Variables.SVC_RECEIPTS_BUCKET).toEqual({ Ref: bucketId });
  });
});

describe.each(STAGE_NAMES)('the %s receipts queue', (stage) => {
  it(`moves a message to a 14-day dead-letter queue after ${RECEIPTS_MAX_RECEIVE_COUNT} receives, all encrypted`, () => {
    const { template, queueId, deadLetterQueueId } = receiptsOf(stage);
    const all = queues(template);
    expect(all.get(queueId)?.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      RedrivePolicy: { deadLetterTargetArn: arnOf(deadLetterQueueId), maxReceiveCount: RECEIPTS_MAX_RECEIVE_COUNT },
    });
    expect(all.get(deadLetterQueueId)?.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: FOURTEEN_DAYS,
    });
  });

  it('feeds the worker one message at a time, reporting failed items, at a bounded concurrency', () => {
    const { mapping } = receiptsOf(stage);
    expect(mapping.BatchSize).toBe(1);
    expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(mapping.ScalingConfig?.MaximumConcurrency).toBe(RECEIPTS_WORKER_MAX_CONCURRENCY);
  });

  it('hides a message for at least six worker timeouts', () => {
    const { template, queueId, worker } = receiptsOf(stage);
    expect(worker.properties.Timeout).toBe(RECEIPTS_WORKER_TIMEOUT.toSeconds());
    expect(queues(template).get(queueId)?.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(
      6 * RECEIPTS_WORKER_TIMEOUT.toSeconds(),
    );
  });

  it('takes messages from the receipts function (batches) and the worker (next pages) only; no role sends to its dead-letter queue', () => {
    const { template, queueId, deadLetterQueueId, api, worker } = receiptsOf(stage);
    expect(rolesAllowedOn(template, queueId, ['sqs:SendMessage', 'sqs:*'])).toEqual(
      new Set([api.roleId, worker.roleId]),
    );
    expect(rolesAllowedOn(template, queueId, ['sqs:ReceiveMessage', 'sqs:DeleteMessage'])).toEqual(
      new Set([worker.roleId]),
    );
    expect(rolesAllowedOn(template, deadLetterQueueId, ['sqs:SendMessage', 'sqs:*'])).toEqual(new Set());
  });
});

describe.each(STAGE_NAMES.filter((name) => STAGES[name].alarms.enabled))('receipts alarms on %s', (stage) => {
  const alarmOn = (template: Template, properties: Record<string, unknown>) =>
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      ...properties,
    });

  it('fire on any message in the receipts dead-letter queue', () => {
    const { template, deadLetterQueueId } = receiptsOf(stage);
    alarmOn(template, {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLetterQueueId, 'QueueName'] } }],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 1,
    });
  });

  it('fire on worker errors at the stage threshold', () => {
    const { template, worker } = receiptsOf(stage);
    alarmOn(template, {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: worker.logicalId } }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: STAGES[stage].alarms.functionErrors,
    });
  });

  it('are exposed on the stack, two of them', () => {
    expect(synthesized().stacks.get(stage)?.receipts.alarms).toHaveLength(2);
  });
});

describe.each(STAGE_NAMES.filter((name) => !STAGES[name].alarms.enabled))('receipts on %s', (stage) => {
  it('creates no alarms, as its config says', () => {
    expect(synthesized().stacks.get(stage)?.receipts.alarms).toEqual([]);
  });
});

describe('the stage config', () => {
  it('keeps receipts 30 days in dev, 90 in staging and ten years and a little in prod', () => {
    expect(STAGE_NAMES.map((name) => STAGES[name].receiptRetentionDays)).toEqual([30, 90, 3_700]);
  });
});
