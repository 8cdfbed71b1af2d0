import { join } from 'node:path';
import { DOMAINS, WORKERS } from '@svc/api';
import { INDEXES } from '@svc/table';
import { RemovalPolicy } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { DEFAULT_RECONCILIATION_UPLOAD_ORIGINS, STAGE_NAMES, STAGES, type StageName } from '../config/stages';
import {
  FILE_PROCESSOR_MAX_CONCURRENCY,
  FILE_PROCESSOR_TIMEOUT,
  REPORTS_PREFIX,
  UPLOADS_PREFIX,
} from '../constructs/reconciliation';
import { TRACE_CALLS_VARIABLE } from '../constructs/tracing';
import { bundledSources } from './support/bundle-files';
import { synthesized, templateOf, useSynthesizedApp } from './support/synth';
import {
  actionsOf,
  type BucketView,
  bucketPolicyStatements,
  buckets,
  eventSourceMappings,
  functionsByService,
  logicalIdOf,
  queuePolicyStatements,
  queues,
  resourcesGranting,
  rolesAllowedOn,
  type Statement,
  statementsOfRole,
} from './support/template-model';

useSynthesizedApp('as-deployed');

const FOURTEEN_DAYS = 14 * 24 * 60 * 60;
const SQS_CONSUME = [
  'sqs:ReceiveMessage',
  'sqs:DeleteMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:GetQueueAttributes',
  'sqs:GetQueueUrl',
];
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
  's3:PutBucketNotification',
  's3:PutLifecycleConfiguration',
];

const arnOf = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });
const objectsArn = (bucketId: string, prefix: string) => ({ 'Fn::Join': ['', [arnOf(bucketId), `/${prefix}*`]] });
const bucketAndObjects = (bucketId: string) => [arnOf(bucketId), { 'Fn::Join': ['', [arnOf(bucketId), '/*']] }];
const joinSchema = z.object({ 'Fn::Join': z.tuple([z.literal(''), z.array(z.unknown())]) });

/** Reconciliation's pieces, found by how they are wired rather than by logical id. */
function filesOf(stage: StageName) {
  const template = templateOf(stage);
  const functions = functionsByService(template);
  const fn = (service: string) => {
    const found = functions.get(service);
    if (!found) throw new Error(`No ${service} function in ${stage}`);
    return found;
  };
  const processor = fn('file-processor');
  const api = fn('reconciliation');
  const tableId = logicalIdOf(template, 'AWS::DynamoDB::Table');

  const mappings = eventSourceMappings(template).filter((m) => m.FunctionName.Ref === processor.logicalId);
  expect(mappings, 'one event source feeds the file processor').toHaveLength(1);
  const [mapping] = mappings;
  const queueId = mapping?.EventSourceArn['Fn::GetAtt'][0];
  const deadLetterQueueId = queues(template).get(queueId ?? '')?.Properties.RedrivePolicy?.deadLetterTargetArn[
    'Fn::GetAtt'
  ][0];

  // The stack has other buckets (receipts.ts): the reconciliation bucket is the one the domain
  // function is given, and the one that notifies the files queue.
  const all = buckets(template);
  const bucketRef = z
    .object({ Ref: z.string() })
    .safeParse(api.properties.Environment.Variables.SVC_RECONCILIATION_BUCKET);
  const bucketId = bucketRef.success ? bucketRef.data.Ref : undefined;
  const bucket = all.get(bucketId ?? '');
  const notifying = [...all].filter(([, candidate]) => candidate.Properties.NotificationConfiguration !== undefined);
  expect(
    notifying.map(([id]) => id),
    'the reconciliation bucket alone notifies',
  ).toEqual([bucketId]);
  expect(JSON.stringify(bucket?.Properties.NotificationConfiguration)).toContain(`"${queueId}"`);
  const logsBucketId = bucket?.Properties.LoggingConfiguration?.DestinationBucketName.Ref;
  const logsBucket = all.get(logsBucketId ?? '');
  // The receipts bucket logs to the same access-log bucket, under receipts/ (receipts.test.ts).
  const receiptsRef = z
    .object({ Ref: z.string() })
    .safeParse(fn('receipts-worker').properties.Environment.Variables.SVC_RECEIPTS_BUCKET);
  const receiptsBucketId = receiptsRef.success ? receiptsRef.data.Ref : undefined;

  const queuePolicyIds = Object.entries(template.findResources('AWS::SQS::QueuePolicy'))
    .filter(([, policy]) => JSON.stringify(policy.Properties.Queues) === JSON.stringify([{ Ref: queueId }]))
    .map(([id]) => id);
  expect(queuePolicyIds, 'one policy on the files queue').toHaveLength(1);
  const [queuePolicyId] = queuePolicyIds;

  if (
    !mapping ||
    !queueId ||
    !deadLetterQueueId ||
    !bucketId ||
    !bucket ||
    !logsBucketId ||
    !logsBucket ||
    !receiptsBucketId ||
    !queuePolicyId
  ) {
    throw new Error(`Reconciliation of ${stage} is not wired as expected`);
  }
  return {
    template,
    processor,
    api,
    tableId,
    mapping,
    queueId,
    deadLetterQueueId,
    queuePolicyId,
    bucketId,
    bucket,
    logsBucketId,
    logsBucket,
    receiptsBucketId,
  };
}

function statementsOf(template: Template, roleId: string): Statement[] {
  const statements = statementsOfRole(template, roleId);
  expect(statements.every((s) => s.Effect === 'Allow')).toBe(true);
  return statements;
}

function lifecycleRules(bucket: BucketView) {
  return bucket.Properties.LifecycleConfiguration?.Rules ?? [];
}

/** The Allow CDK's bucket-emptying handler gets on a DESTROY stage's buckets (its role, by ARN). */
const emptiesOnDelete = (statement: { Effect?: string; Principal?: unknown; Action?: unknown }) =>
  statement.Effect === 'Allow' &&
  JSON.stringify(statement.Principal ?? '').includes('CustomS3AutoDeleteObjectsCustomResourceProviderRole');

const removalOf = (stage: StageName) =>
  STAGES[stage].removalPolicy === RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE ? 'RetainExceptOnCreate' : 'Delete';
const replacementOf = (stage: StageName) =>
  STAGES[stage].removalPolicy === RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE ? 'Retain' : 'Delete';

describe.each(STAGE_NAMES)('the %s reconciliation bucket', (stage) => {
  it('blocks all public access, owns every object (no ACLs) and encrypts with S3-managed keys', () => {
    const { bucket } = filesOf(stage);
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
    const { template, bucketId } = filesOf(stage);
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
        Resource: bucketAndObjects(bucketId),
        Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } },
      }),
    );
    expect(statements.filter((statement) => statement.Effect === 'Allow' && !emptiesOnDelete(statement))).toEqual([]);
  });

  it(
    STAGES[stage].removalPolicy === RemovalPolicy.DESTROY
      ? 'empties itself when the stack is deleted (CDK’s handler alone may list and delete its objects)'
      : 'keeps its files when the stack is deleted: nothing may empty it',
    () => {
      const { template, bucketId, logsBucketId } = filesOf(stage);
      const destroy = STAGES[stage].removalPolicy === RemovalPolicy.DESTROY;
      const emptying = Object.values(template.findResources('Custom::S3AutoDeleteObjects'));
      for (const id of [bucketId, logsBucketId]) {
        const ofThis = emptying.filter(
          (resource) => JSON.stringify(resource.Properties?.BucketName) === JSON.stringify({ Ref: id }),
        );
        expect(ofThis.length, id).toBe(destroy ? 1 : 0);
        const allows = (bucketPolicyStatements(template).get(id) ?? []).filter(emptiesOnDelete);
        expect(allows.length, id).toBe(destroy ? 1 : 0);
      }
    },
  );

  it('keeps every version: an overwrite keeps the older file, for 30 days after it is replaced', () => {
    const { bucket } = filesOf(stage);
    expect(bucket.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(lifecycleRules(bucket)).toContainEqual({
      Id: 'NoncurrentVersionsAndLeftovers',
      Status: 'Enabled',
      NoncurrentVersionExpiration: { NoncurrentDays: 30 },
      AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
      ExpiredObjectDeleteMarker: true,
    });
  });

  it(`expires uploads/ and reports/ after the stage's ${STAGES[stage].reconciliationRetentionDays} days, and nothing else by age`, () => {
    const { bucket } = filesOf(stage);
    const days = STAGES[stage].reconciliationRetentionDays;
    expect(lifecycleRules(bucket)).toHaveLength(3);
    expect(lifecycleRules(bucket)).toContainEqual({
      Id: 'ExpireUploads',
      Status: 'Enabled',
      Prefix: 'uploads/',
      ExpirationInDays: days,
    });
    expect(lifecycleRules(bucket)).toContainEqual({
      Id: 'ExpireReports',
      Status: 'Enabled',
      Prefix: 'reports/',
      ExpirationInDays: days,
    });
  });

  it('lets browsers POST from the stage origins, exposing the ETag, with preflights cached for an hour', () => {
    const { bucket } = filesOf(stage);
    expect(bucket.Properties.CorsConfiguration?.CorsRules).toEqual([
      {
        AllowedMethods: ['POST'],
        AllowedOrigins: [...(STAGES[stage].reconciliationUploadOrigins ?? DEFAULT_RECONCILIATION_UPLOAD_ORIGINS)],
        ExposedHeaders: ['ETag'],
        MaxAge: 3600,
      },
    ]);
  });

  it('is kept or deleted with the stack as the stage config says, like the table', () => {
    const { template, bucket, logsBucket } = filesOf(stage);
    const table = Object.values(template.findResources('AWS::DynamoDB::Table'))[0];
    expect(bucket.DeletionPolicy).toBe(removalOf(stage));
    expect(bucket.UpdateReplacePolicy).toBe(replacementOf(stage));
    expect(bucket.DeletionPolicy).toBe(table?.DeletionPolicy);
    expect(logsBucket.DeletionPolicy).toBe(removalOf(stage));
  });

  it('is named for the stage, the account and the region', () => {
    const { bucket } = filesOf(stage);
    expect(bucket.Properties.BucketName).toEqual({
      'Fn::Join': ['', [`svc-${stage}-reconciliation-`, { Ref: 'AWS::AccountId' }, '-', { Ref: 'AWS::Region' }]],
    });
  });
});

describe.each(STAGE_NAMES)('the %s reconciliation access logs', (stage) => {
  it('go to the access-log bucket (not the bucket itself), under reconciliation/, partitioned by event date', () => {
    const { bucket, bucketId, logsBucketId } = filesOf(stage);
    expect(logsBucketId).not.toBe(bucketId);
    expect(bucket.Properties.LoggingConfiguration).toEqual({
      DestinationBucketName: { Ref: logsBucketId },
      LogFilePrefix: 'reconciliation/',
      TargetObjectKeyFormat: { PartitionedPrefix: { PartitionDateSource: 'EventTime' } },
    });
  });

  it('are kept in a private, SSE-S3 encrypted bucket for the stage retention', () => {
    const { logsBucket } = filesOf(stage);
    expect(logsBucket.Properties).toMatchObject({
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
    });
    expect(lifecycleRules(logsBucket)).toContainEqual(
      expect.objectContaining({ ExpirationInDays: STAGES[stage].reconciliationRetentionDays }),
    );
  });

  it('are written by S3 logging only: for this bucket under reconciliation/, for the receipts bucket under receipts/, of this account, over TLS', () => {
    const { template, bucketId, logsBucketId, receiptsBucketId } = filesOf(stage);
    const statements = bucketPolicyStatements(template).get(logsBucketId) ?? [];
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Resource: bucketAndObjects(logsBucketId),
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    );
    expect(statements.filter((statement) => statement.Effect === 'Allow' && !emptiesOnDelete(statement))).toEqual([
      {
        Effect: 'Allow',
        Principal: { Service: 'logging.s3.amazonaws.com' },
        Action: 's3:PutObject',
        Resource: objectsArn(logsBucketId, 'reconciliation/'),
        Condition: {
          ArnLike: { 'aws:SourceArn': arnOf(bucketId) },
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
        },
      },
      {
        Effect: 'Allow',
        Principal: { Service: 'logging.s3.amazonaws.com' },
        Action: 's3:PutObject',
        Resource: objectsArn(logsBucketId, 'receipts/'),
        Condition: {
          ArnLike: { 'aws:SourceArn': arnOf(receiptsBucketId) },
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
        },
      },
    ]);
  });
});

describe.each(STAGE_NAMES)('the %s upload notification', (stage) => {
  it('sends every object created under uploads/, and nothing else, to the files queue', () => {
    const { bucket, queueId } = filesOf(stage);
    expect(bucket.Properties.NotificationConfiguration).toEqual({
      QueueConfigurations: [
        {
          Event: 's3:ObjectCreated:*',
          Filter: { S3Key: { Rules: [{ Name: 'prefix', Value: UPLOADS_PREFIX }] } },
          Queue: arnOf(queueId),
        },
      ],
    });
    expect(UPLOADS_PREFIX).toBe('uploads/');
  });

  it('lets only S3, for this bucket of this account, send to the files queue', () => {
    const { template, bucket, queueId } = filesOf(stage);
    const allows = (queuePolicyStatements(template).get(queueId) ?? []).filter(
      (statement) => z.object({ Effect: z.literal('Allow') }).safeParse(statement).success,
    );
    // The bucket's own name, as an ARN: `arn:<partition>:s3:::` then the name's parts.
    const [first, ...rest] = joinSchema.parse(bucket.Properties.BucketName)['Fn::Join'][1];
    expect(typeof first).toBe('string');
    expect(allows).toEqual([
      {
        Effect: 'Allow',
        Principal: { Service: 's3.amazonaws.com' },
        Action: 'sqs:SendMessage',
        Condition: {
          ArnEquals: {
            'aws:SourceArn': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:s3:::${first}`, ...rest]] },
          },
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
        },
      },
    ]);
  });

  it('is configured after that policy exists (S3 checks the destination), without a custom resource', () => {
    const { template, bucket, queuePolicyId } = filesOf(stage);
    expect(bucket.DependsOn).toContain(queuePolicyId);
    expect(Object.keys(template.findResources('Custom::S3BucketNotifications'))).toEqual([]);
  });

  it('is the only sender: no role may send to the files queue or its dead-letter queue', () => {
    const { template, queueId, deadLetterQueueId } = filesOf(stage);
    expect(rolesAllowedOn(template, queueId, ['sqs:SendMessage', 'sqs:*'])).toEqual(new Set());
    expect(rolesAllowedOn(template, deadLetterQueueId, ['sqs:SendMessage', 'sqs:*'])).toEqual(new Set());
  });
});

describe.each(STAGE_NAMES)('the %s files queue', (stage) => {
  it('moves a notification to a 14-day dead-letter queue after 5 receives, all encrypted', () => {
    const { template, queueId, deadLetterQueueId } = filesOf(stage);
    const all = queues(template);
    expect(all.get(queueId)?.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      RedrivePolicy: { deadLetterTargetArn: arnOf(deadLetterQueueId), maxReceiveCount: 5 },
    });
    expect(all.get(deadLetterQueueId)?.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: FOURTEEN_DAYS,
    });
  });

  it('and its dead-letter queue refuse plain HTTP and follow the stage removal policy', () => {
    const { template, queueId, deadLetterQueueId } = filesOf(stage);
    const policies = queuePolicyStatements(template);
    for (const id of [queueId, deadLetterQueueId]) {
      expect(policies.get(id), `${id} refuses plain HTTP`).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
      expect(queues(template).get(id)?.DeletionPolicy, id).toBe(removalOf(stage));
    }
  });

  it('hides a notification for six processor timeouts (30 minutes)', () => {
    const { template, queueId, processor } = filesOf(stage);
    expect(processor.properties.Timeout).toBe(FILE_PROCESSOR_TIMEOUT.toSeconds());
    expect(FILE_PROCESSOR_TIMEOUT.toSeconds()).toBe(300);
    expect(queues(template).get(queueId)?.Properties.VisibilityTimeout).toBe(6 * 300);
  });
});

describe.each(STAGE_NAMES)('the %s file processor', (stage) => {
  it('is WORKERS.fileProcessor: Node 22 on arm64, 1024 MB, five minutes, its own log group', () => {
    const { template, processor } = filesOf(stage);
    expect(WORKERS.fileProcessor).toEqual({
      entry: 'services/reconciliation/src/handlers/file-processor.ts',
      memoryMb: 1024,
    });
    expect(processor.properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      MemorySize: WORKERS.fileProcessor.memoryMb,
      Timeout: 300,
    });
    const logGroupId = processor.properties.LoggingConfig?.LogGroup.Ref ?? '';
    expect(template.findResources('AWS::Logs::LogGroup')[logGroupId]?.Properties).toMatchObject({
      RetentionInDays: STAGES[stage].logRetention,
    });
  });

  it('is bundled from the WORKERS entry, not the domain function (the source map of its asset)', () => {
    const { template, processor } = filesOf(stage);
    const resource = template.findResources('AWS::Lambda::Function')[processor.logicalId];
    // The asset's zip is named for its hash; the assembly keeps it unzipped as asset.<hash>.
    const { S3Key } = z.object({ Properties: z.object({ Code: z.object({ S3Key: z.string() }) }) }).parse(resource)
      .Properties.Code;
    const assetPath = `asset.${S3Key.replace(/\.zip$/, '')}`;
    const sources = bundledSources(join(synthesized().outdir, assetPath));
    const bundles = (entry: string) => sources.some((source) => source.endsWith(`/${entry}`));
    expect(bundles(WORKERS.fileProcessor.entry)).toBe(true);
    // Not the domain function's bundle: no HTTP handler in it.
    expect(bundles(DOMAINS.reconciliation.entry)).toBe(false);
  });

  it('takes batches of 5 notifications from the files queue, reporting failed items, at most 5 at once', () => {
    const { mapping, queueId } = filesOf(stage);
    expect(mapping.EventSourceArn).toEqual(arnOf(queueId));
    expect(mapping.BatchSize).toBe(5);
    expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(mapping.ScalingConfig?.MaximumConcurrency).toBe(FILE_PROCESSOR_MAX_CONCURRENCY);
    expect(FILE_PROCESSOR_MAX_CONCURRENCY).toBe(5);
  });

  it('gets the table, the stage, the bucket name and the retention its reports expire after', () => {
    const { processor, tableId, bucketId } = filesOf(stage);
    const variables = processor.properties.Environment.Variables;
    const own = Object.entries(variables).filter(([name]) => name.startsWith('SVC_') && name !== TRACE_CALLS_VARIABLE);
    expect(Object.fromEntries(own)).toEqual({
      SVC_TABLE_NAME: { Ref: tableId },
      SVC_STAGE: stage,
      SVC_RECONCILIATION_BUCKET: { Ref: bucketId },
      SVC_RECONCILIATION_RETENTION_DAYS: String(STAGES[stage].reconciliationRetentionDays),
    });
  });

  it('may GetObject (also the version a notification names) under uploads/ and PutObject under reports/, and no other S3 action', () => {
    const { template, processor, bucketId } = filesOf(stage);
    const statements = statementsOf(template, processor.roleId);
    expect(actionsOf(statements, 's3:')).toEqual(new Set(['s3:GetObject', 's3:GetObjectVersion', 's3:PutObject']));
    expect(resourcesGranting(statements, 's3:GetObject')).toEqual([objectsArn(bucketId, UPLOADS_PREFIX)]);
    // The bucket is versioned: S3's notifications carry versionId, which GetObject then reads.
    expect(resourcesGranting(statements, 's3:GetObjectVersion')).toEqual([objectsArn(bucketId, UPLOADS_PREFIX)]);
    expect(resourcesGranting(statements, 's3:PutObject')).toEqual([objectsArn(bucketId, REPORTS_PREFIX)]);
  });

  it('may GetItem, BatchGetItem and PutItem on the table only: no Query, Scan, update or delete', () => {
    const { template, processor, tableId } = filesOf(stage);
    const statements = statementsOf(template, processor.roleId);
    expect(actionsOf(statements, 'dynamodb:')).toEqual(
      new Set(['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem']),
    );
    for (const action of ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem']) {
      expect(resourcesGranting(statements, action), action).toEqual([arnOf(tableId)]);
    }
  });

  it('consumes the files queue and nothing else: no send, no KMS', () => {
    const { template, processor, queueId } = filesOf(stage);
    const statements = statementsOf(template, processor.roleId);
    expect(actionsOf(statements, 'sqs:')).toEqual(new Set(SQS_CONSUME));
    for (const action of SQS_CONSUME) {
      expect(resourcesGranting(statements, action), action).toEqual([arnOf(queueId)]);
    }
    expect(actionsOf(statements, 'kms:')).toEqual(new Set());
  });
});

describe.each(STAGE_NAMES)('the %s reconciliation domain function', (stage) => {
  it('gets the bucket name', () => {
    const { api, bucketId } = filesOf(stage);
    expect(api.properties.Environment.Variables.SVC_RECONCILIATION_BUCKET).toEqual({ Ref: bucketId });
  });

  it('may PutObject under uploads/ (its presigned POSTs and blueprint files) and GetObject under reports/ only', () => {
    const { template, api, bucketId } = filesOf(stage);
    const statements = statementsOf(template, api.roleId);
    expect(actionsOf(statements, 's3:')).toEqual(new Set(['s3:PutObject', 's3:GetObject']));
    expect(resourcesGranting(statements, 's3:PutObject')).toEqual([objectsArn(bucketId, UPLOADS_PREFIX)]);
    expect(resourcesGranting(statements, 's3:GetObject')).toEqual([objectsArn(bucketId, REPORTS_PREFIX)]);
    // Never the whole bucket: no `<bucket>/*`, no `*`.
    for (const resource of resourcesGranting(statements, 's3:GetObject')) {
      expect(JSON.stringify(resource)).not.toMatch(/"\/\*"|"\*"/);
    }
  });

  it('reads items, queries gsi1 and keeps idempotency records; no table Query, Scan, batch write or other index', () => {
    const { template, api, tableId } = filesOf(stage);
    const statements = statementsOf(template, api.roleId);
    expect(actionsOf(statements, 'dynamodb:')).toEqual(
      new Set([
        'dynamodb:GetItem',
        'dynamodb:BatchGetItem',
        'dynamodb:Query',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
      ]),
    );
    expect(resourcesGranting(statements, 'dynamodb:Query')).toEqual([
      { 'Fn::Join': ['', [arnOf(tableId), `/index/${INDEXES.gsi1.name}`]] },
    ]);
  });
});

describe.each(STAGE_NAMES)('the %s reconciliation files', (stage) => {
  it('are reachable by the domain function and the processor alone, and nobody may delete them', () => {
    const { template, bucketId, api, processor } = filesOf(stage);
    expect(rolesAllowedOn(template, bucketId, S3_ACTIONS_OF_NOTE)).toEqual(new Set([api.roleId, processor.roleId]));
    expect(
      rolesAllowedOn(template, bucketId, ['s3:*', 's3:DeleteObject', 's3:DeleteObjectVersion', 's3:PutBucketPolicy']),
    ).toEqual(new Set());
  });

  it('let nobody write the access logs but S3, nor read them from a function', () => {
    const { template, logsBucketId } = filesOf(stage);
    expect(rolesAllowedOn(template, logsBucketId, S3_ACTIONS_OF_NOTE)).toEqual(new Set());
  });
});

describe.each(STAGE_NAMES.filter((name) => STAGES[name].alarms.enabled))('reconciliation alarms on %s', (stage) => {
  const alarmOn = (template: Template, properties: Record<string, unknown>) =>
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      EvaluationPeriods: 1,
      ...properties,
    });

  it('fire on any notification in the files dead-letter queue', () => {
    const { template, deadLetterQueueId } = filesOf(stage);
    alarmOn(template, {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLetterQueueId, 'QueueName'] } }],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 1,
    });
  });

  it('fire on processor errors at the stage threshold', () => {
    const { template, processor } = filesOf(stage);
    alarmOn(template, {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: processor.logicalId } }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: STAGES[stage].alarms.functionErrors,
    });
  });

  it('are exposed on the stack, two of them', () => {
    expect(synthesized().stacks.get(stage)?.reconciliation.alarms).toHaveLength(2);
  });
});

describe.each(STAGE_NAMES.filter((name) => !STAGES[name].alarms.enabled))('reconciliation on %s', (stage) => {
  it('creates no alarms, as its config says', () => {
    expect(synthesized().stacks.get(stage)?.reconciliation.alarms).toEqual([]);
    templateOf(stage).resourceCountIs('AWS::CloudWatch::Alarm', 0);
  });
});

describe('the stage config', () => {
  it('keeps bank files 30 days in dev, 90 in staging and 400 in prod', () => {
    expect(STAGE_NAMES.map((name) => STAGES[name].reconciliationRetentionDays)).toEqual([30, 90, 400]);
  });

  it('lets any origin post uploads unless a stage narrows it: the presigned policy is the guard', () => {
    expect(DEFAULT_RECONCILIATION_UPLOAD_ORIGINS).toEqual(['*']);
  });
});
