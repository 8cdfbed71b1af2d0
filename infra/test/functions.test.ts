import { DOMAINS } from '@svc/api';
import { describe, expect, it } from 'vitest';
import { STAGE_NAMES, STAGES } from '../config/stages';
import { domainNames } from '../constructs/domain-function';
import { MAIL_KEYS } from '../constructs/mail';
import { RECEIPTS_WORKER_TABLE_GRANT } from '../constructs/receipts';
import { tableAccessFor, tableActionsOf, tableGrantFor, writeStatementsOf } from '../constructs/table-access';
import { templateOf, useSynthesizedApp } from './support/synth';
import {
  functionsByService,
  iamGlob,
  logicalIdOf,
  logicalIdStartingWith,
  managedPoliciesOfRole,
  rolesAllowedOn,
  statementsOfRole,
} from './support/template-model';

useSynthesizedApp();

function functionOf(stage: (typeof STAGE_NAMES)[number], service: string) {
  const fn = functionsByService(templateOf(stage)).get(service);
  if (!fn) throw new Error(`No function for ${service} in ${stage}`);
  return fn;
}

/** The dynamodb:LeadingKeys patterns of each DynamoDB statement of a function's role (undefined: none). */
function leadingKeysOf(stage: (typeof STAGE_NAMES)[number], service: string): Array<string[] | undefined> {
  const { roleId } = functionOf(stage, service);
  return statementsOfRole(templateOf(stage), roleId)
    .filter((statement) => statement.Action.some((action) => action.startsWith('dynamodb:')))
    .map(
      (statement) =>
        (statement as { Condition?: Record<string, Record<string, string[]>> }).Condition?.[
          'ForAllValues:StringLike'
        ]?.['dynamodb:LeadingKeys'],
    );
}

/** Raw CloudFormation functions of CDK's own, run on deploy or delete only (constructs/tracing.ts). */
const CDK_DEPLOY_TIME_HANDLERS = [
  'CustomVpcRestrictDefaultSGCustomResourceProvider',
  'CustomS3AutoDeleteObjectsCustomResourceProvider',
];

function dynamoActionsOf(stage: (typeof STAGE_NAMES)[number], service: string): string[] {
  const { roleId } = functionOf(stage, service);
  return statementsOfRole(templateOf(stage), roleId)
    .flatMap((statement) => statement.Action)
    .filter((action) => action.startsWith('dynamodb:'));
}

describe.each(STAGE_NAMES)('the %s functions', (stage) => {
  it('are one Node 22 arm64 Lambda per DOMAINS entry, sized as DOMAINS says', () => {
    const functions = functionsByService(templateOf(stage));
    for (const domain of domainNames()) {
      const fn = functions.get(domain);
      expect(fn, domain).toBeDefined();
      expect(fn?.properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        MemorySize: DOMAINS[domain].memoryMb,
      });
    }
    const domainFunctions = [...functions.keys()].filter((service) => service in DOMAINS);
    expect(domainFunctions.sort()).toEqual(Object.keys(DOMAINS).sort());
  });

  it('every function of the template traces actively in X-Ray, and its role may send the segments', () => {
    const template = templateOf(stage);
    const functions = Object.entries(template.findResources('AWS::Lambda::Function'));
    expect(functions.length).toBeGreaterThan(15);
    for (const [id, fn] of functions) {
      // CDK's own deploy-time handlers (see constructs/tracing.ts).
      if (CDK_DEPLOY_TIME_HANDLERS.some((prefix) => id.startsWith(prefix))) continue;
      expect(fn.Properties.TracingConfig, id).toEqual({ Mode: 'Active' });
      const roleId = (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      const actions = statementsOfRole(template, roleId).flatMap((statement) => statement.Action);
      expect(actions, id).toEqual(expect.arrayContaining(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']));
    }
  });

  it('trace their calls (Powertools Tracer, SVC_TRACE_CALLS) exactly where the stage says, every function built from our code', () => {
    const functions = [...functionsByService(templateOf(stage)).entries()];
    // Every domain and worker, the search migrator and the signing-key bootstrap.
    expect(functions.length).toBeGreaterThan(15);
    for (const [service, fn] of functions) {
      const variables = fn.properties.Environment?.Variables ?? {};
      if (STAGES[stage].traceCalls) expect(variables.SVC_TRACE_CALLS, service).toBe('true');
      else expect(variables, service).not.toHaveProperty('SVC_TRACE_CALLS');
    }
  });

  it('get the table name, stage, service name and source maps, and only identity gets the signing key', () => {
    const template = templateOf(stage);
    const tableId = logicalIdOf(template, 'AWS::DynamoDB::Table');
    const secretId = logicalIdStartingWith(template, 'AWS::SecretsManager::Secret', 'SigningKeys');
    const fingerprintId = logicalIdStartingWith(template, 'AWS::SecretsManager::Secret', 'CardFingerprintKey');
    const hashKeyId = logicalIdStartingWith(template, 'AWS::SecretsManager::Secret', 'HashKey');
    for (const domain of domainNames()) {
      const variables = functionOf(stage, domain).properties.Environment.Variables;
      expect(variables).toMatchObject({
        SVC_TABLE_NAME: { Ref: tableId },
        SVC_STAGE: stage,
        POWERTOOLS_SERVICE_NAME: domain,
        NODE_OPTIONS: '--enable-source-maps',
        // Every domain keeps idempotency records, whose fingerprints and responses use the hash key.
        SVC_HASH_KEY_SECRET_ARN: { Ref: hashKeyId },
        // The calling client and the account paid into: remembered a second (no hot read key).
        SVC_HOT_READ_SECONDS: '1',
      });
      if (domain === 'identity') expect(variables.SVC_SIGNING_KEY_SECRET_ARN).toEqual({ Ref: secretId });
      else expect(variables).not.toHaveProperty('SVC_SIGNING_KEY_SECRET_ARN');
      // Payments, and the portal that sets up a donor's new card as payments does.
      if (domain === 'payments' || domain === 'portal') {
        expect(variables.SVC_CARD_FINGERPRINT_SECRET_ARN).toEqual({ Ref: fingerprintId });
      } else expect(variables).not.toHaveProperty('SVC_CARD_FINGERPRINT_SECRET_ARN');
    }
  });

  it('log to their own log group with the stage retention', () => {
    const template = templateOf(stage);
    const logGroups = template.findResources('AWS::Logs::LogGroup');
    for (const service of functionsByService(template).keys()) {
      const logGroupId = functionOf(stage, service).properties.LoggingConfig?.LogGroup.Ref;
      expect(logGroupId, service).toBeDefined();
      expect(logGroups[logGroupId ?? '']?.Properties).toMatchObject({ RetentionInDays: STAGES[stage].logRetention });
    }
  });

  it('carry no AWS managed policies: each role may write only to its own log group before grants', () => {
    const template = templateOf(stage);
    for (const [service, fn] of functionsByService(template)) {
      expect(managedPoliciesOfRole(template, fn.roleId), service).toEqual([]);
      const logStatements = statementsOfRole(template, fn.roleId).filter((s) => s.Action.includes('logs:PutLogEvents'));
      expect(logStatements, service).toEqual([
        expect.objectContaining({
          Resource: { 'Fn::GetAtt': [fn.properties.LoggingConfig?.LogGroup.Ref, 'Arn'] },
        }),
      ]);
    }
  });

  it('hold exactly the DynamoDB actions their routes call for (narrowed where declared), no more', () => {
    for (const domain of domainNames()) {
      const grant = tableGrantFor(domain);
      const expected = [...tableActionsOf(grant), ...(grant.indexes.length > 0 ? ['dynamodb:Query'] : [])];
      expect(new Set(dynamoActionsOf(stage, domain)), `${domain} (${tableAccessFor(domain)})`).toEqual(
        new Set(expected),
      );
    }
  });

  it('give the platform function no DynamoDB access at all', () => {
    expect(dynamoActionsOf(stage, 'platform')).toEqual([]);
  });

  it('let organisations read the table and update items (operator approval and decline)', () => {
    expect(dynamoActionsOf(stage, 'organisations')).toEqual(
      expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem']),
    );
  });

  it('let identity read clients and write only the published public keys (and its callers’ rate counts)', () => {
    expect([...new Set(dynamoActionsOf(stage, 'identity'))].sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
    expect(leadingKeysOf(stage, 'identity')).toEqual([
      ['CLIENT#*', 'SIGNING_KEYS', 'RATE_LIMIT#*'],
      ['SIGNING_KEYS'],
      ['RATE_LIMIT#*'],
    ]);
  });

  it('grant each write action only on the partitions that take it: no PutItem or DeleteItem on a rate-limit counter, signing keys put by identity alone', () => {
    const template = templateOf(stage);
    const writes = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];
    const writersOf = (key: string, action: string) =>
      [...functionsByService(template)]
        .filter(([, fn]) =>
          statementsOfRole(template, fn.roleId).some((statement) => {
            const condition = statement.Condition as Record<string, Record<string, string[]>> | undefined;
            const keys = condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] ?? [];
            return statement.Action.includes(action) && keys.some((pattern) => iamGlob(pattern, key));
          }),
        )
        .map(([service]) => service)
        .sort();
    // The per-second counters are one UpdateItem per request, never put or deleted.
    for (const action of writes.filter((a) => a !== 'dynamodb:UpdateItem')) {
      expect(writersOf('RATE_LIMIT#x', action), action).toEqual([]);
    }
    expect(writersOf('SIGNING_KEYS', 'dynamodb:PutItem')).toEqual(['identity']);
    for (const action of writes.filter((a) => a !== 'dynamodb:PutItem')) {
      expect(writersOf('SIGNING_KEYS', action), action).toEqual([]);
    }
    // Idempotency records are put, then updated; never deleted.
    expect(writersOf('IDEMPOTENCY#x', 'dynamodb:DeleteItem')).toEqual([]);
  });

  it("hold the background workers' reads to the partitions they read: the delivery worker reads no client", () => {
    const template = templateOf(stage);
    const reads = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem', 'dynamodb:Query'];
    for (const worker of [
      'delivery-worker',
      'delivery-sweeper',
      'fan-out',
      'stream-publisher',
      'billing-run',
      'billing-worker',
      'payment-resolver',
      'file-processor',
      'receipts-worker',
    ]) {
      for (const statement of statementsOfRole(template, functionOf(stage, worker).roleId)) {
        if (!statement.Action.some((action) => reads.includes(action))) continue;
        // An index statement may reach any shard of due work (which key IAM matches there is not stated).
        if (JSON.stringify(statement.Resource).includes('/index/')) continue;
        const condition = statement.Condition as Record<string, Record<string, string[]>> | undefined;
        const keys = condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'];
        expect(keys, `${worker} reads without dynamodb:LeadingKeys`).toBeDefined();
        expect(
          (keys ?? []).filter((pattern) => ['CLIENT#x', 'SIGNING_KEYS', 'USER#x'].some((key) => iamGlob(pattern, key))),
          worker,
        ).toEqual([]);
      }
    }
    expect(leadingKeysOf(stage, 'delivery-worker')[0]).toEqual([
      'DELIVERY#*',
      'WEBHOOK#*',
      'WEBHOOK_PAUSE#*',
      'WEBHOOK_RESPONSE#*',
    ]);
    // The receipts worker: its grant's reads and writes, and the mail items it queues (mail.grantQueueing).
    expect(leadingKeysOf(stage, 'receipts-worker')).toEqual([
      RECEIPTS_WORKER_TABLE_GRANT.readKeys,
      ...writeStatementsOf(RECEIPTS_WORKER_TABLE_GRANT).map((statement) => statement.keys),
      MAIL_KEYS,
    ]);
  });

  it('hold every domain with table access to its partition keys (dynamodb:LeadingKeys): reads to its read keys, writes to its write keys', () => {
    for (const domain of domainNames()) {
      const grant = tableGrantFor(domain);
      if (tableActionsOf(grant).length === 0) continue;
      const statements = leadingKeysOf(stage, domain);
      expect(statements, domain).toEqual([
        ...(grant.reads.length > 0 ? [grant.readKeys] : []),
        ...(grant.writes.length > 0 ? writeStatementsOf(grant).map((statement) => statement.keys) : []),
        ...(grant.attributeUpdates ?? []).map((update) => update.leadingKeys),
        ...(grant.indexes.length > 0 ? [grant.indexKeys ?? grant.readKeys] : []),
        // The portal also puts its mails' outbox items (mail.grantQueueing, outbox only).
        ...(domain === 'portal' ? [MAIL_KEYS] : []),
      ]);
    }
    // Payments never reaches another domain's private items: webhooks, onboarding, clients' secrets.
    const [reads = [], ...writeStatements] = leadingKeysOf(stage, 'payments');
    const writes = writeStatements.flat();
    expect(reads).toEqual(expect.arrayContaining(['PAYMENT#*', 'CLIENT#*']));
    // Idempotency records and the limiter's counts are written (and read back by the write) only.
    expect(reads).not.toContain('IDEMPOTENCY#*');
    expect(reads).not.toContain('PROVIDER_RATE#*');
    expect(writes).not.toContain('CLIENT#*');
    for (const foreign of ['WEBHOOK#*', 'ONBOARDING#*', 'USER#*', 'DELIVERY#*']) expect(reads).not.toContain(foreign);
  });

  it("let no role write a client or the signing keys but identity (signing keys) and onboarding (a client's grants, by attribute)", () => {
    const template = templateOf(stage);
    const writes = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];
    for (const [service, fn] of functionsByService(template)) {
      for (const statement of statementsOfRole(template, fn.roleId)) {
        const writing = statement.Action.filter((action) => writes.includes(action));
        if (writing.length === 0) continue;
        const condition = statement.Condition as Record<string, Record<string, string[]>> | undefined;
        const keys = condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'];
        // Every write of every role is held to partition keys.
        expect(keys, `${service} writes without dynamodb:LeadingKeys`).toBeDefined();
        const credentials = (keys ?? []).filter((key) => ['CLIENT#x', 'SIGNING_KEYS'].some((k) => iamGlob(key, k)));
        if (credentials.length === 0) continue;
        if (service === 'identity') {
          expect(credentials, service).toEqual(['SIGNING_KEYS']);
          continue;
        }
        expect(service).toBe('onboarding');
        expect(writing).toEqual(['dynamodb:UpdateItem']);
        expect(condition?.['ForAllValues:StringEquals']?.['dynamodb:Attributes']).toEqual([
          'pk',
          'sk',
          'grants',
          'grants_version',
        ]);
      }
    }
  });

  it('never allow a table scan or a wildcard DynamoDB action', () => {
    for (const service of functionsByService(templateOf(stage)).keys()) {
      const actions = dynamoActionsOf(stage, service);
      expect(
        actions.filter((action) => action === 'dynamodb:Scan' || action.includes('*')),
        service,
      ).toEqual([]);
    }
  });

  it('let only the payments and portal functions read the card fingerprint key, and nobody write it', () => {
    const template = templateOf(stage);
    const secretId = logicalIdStartingWith(template, 'AWS::SecretsManager::Secret', 'CardFingerprintKey');
    expect(rolesAllowedOn(template, secretId, ['secretsmanager:GetSecretValue', 'secretsmanager:*'])).toEqual(
      new Set([functionOf(stage, 'payments').roleId, functionOf(stage, 'portal').roleId]),
    );
    expect(rolesAllowedOn(template, secretId, ['secretsmanager:PutSecretValue', 'secretsmanager:*']).size).toBe(0);
  });

  it('let every domain function and the billing worker read the hash key, and nobody write it', () => {
    const template = templateOf(stage);
    const secretId = logicalIdStartingWith(template, 'AWS::SecretsManager::Secret', 'HashKey');
    // The billing worker hashes the token of a charge reminder's portal link (issue 47 point 5).
    const readers = new Set([...domainNames(), 'billing-worker'].map((service) => functionOf(stage, service).roleId));
    expect(rolesAllowedOn(template, secretId, ['secretsmanager:GetSecretValue', 'secretsmanager:*'])).toEqual(readers);
    expect(rolesAllowedOn(template, secretId, ['secretsmanager:PutSecretValue', 'secretsmanager:*']).size).toBe(0);
  });

  it('let only the identity function and the bootstrap read the signing key, and only the bootstrap write it', () => {
    const template = templateOf(stage);
    const secretId = logicalIdStartingWith(template, 'AWS::SecretsManager::Secret', 'SigningKeys');
    const identityRole = functionOf(stage, 'identity').roleId;
    const bootstrapRole = functionOf(stage, 'signing-key-bootstrap').roleId;
    expect(rolesAllowedOn(template, secretId, ['secretsmanager:GetSecretValue', 'secretsmanager:*'])).toEqual(
      new Set([identityRole, bootstrapRole]),
    );
    expect(
      rolesAllowedOn(template, secretId, [
        'secretsmanager:PutSecretValue',
        'secretsmanager:UpdateSecret',
        'secretsmanager:*',
      ]),
    ).toEqual(new Set([bootstrapRole]));
  });
});
