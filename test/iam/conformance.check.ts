import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { createServiceApp } from '../../infra/stacks/service-app';
import { appProps, SKIP_BUNDLING } from '../../infra/test/support/app-props';
import { type DomainFunctionView, functionsByService } from '../../infra/test/support/template-model';
import { ANY_PARTITION, checkCalls, loadCalls, unexercisedReads, unexercisedWrites, unusedGrants } from './conformance';
import type { RecordedCall } from './recorder';

/**
 * Runs after the test suite (`pnpm test`): every AWS call a deployed function's handler made in
 * the run, held against that function's role in the prod template. A call the role does not allow
 * fails here; granted actions no call used are printed.
 */
/**
 * Write partitions (with the action, where only one of a statement's is not reached) a role holds
 * for code the suite does not reach, each with the path. Anything else granted and never written
 * with that action fails: a role writes only the key prefixes its code writes, with the actions
 * its code sends there.
 */
const UNEXERCISED_WRITES: ReadonlyArray<{ fn: string; leadingKey: string; action?: string; why: string }> = [
  {
    fn: 'webhooks',
    leadingKey: 'ORG#*',
    action: 'dynamodb:DeleteItem',
    why: 'the URL marker released when an endpoint is deleted or its URL changes: not recorded in the full run of 2026-11-29; to confirm with a test, or remove',
  },
  {
    fn: 'fan-out',
    leadingKey: 'DELIVERY#*',
    why: 'a delivery too large to travel in its SQS message is stored first (services/webhooks fan-out); the suite sends small events',
  },
  {
    fn: 'organisations',
    leadingKey: 'IDEMPOTENCY#*',
    why: "an operator's approval or decline sent with an Idempotency-Key (@svc/http keeps a record); the suite's approvals send none",
  },
  // A POST sent with an Idempotency-Key keeps a record (@svc/http middleware/idempotency.ts: Put,
  // then Update); the suite sends the header to payments and reconciliation only (the middleware's
  // own contract is tested on a route of its own, test/http-contract.test.ts).
  ...['supporters', 'subscriptions', 'webhooks', 'onboarding', 'portal'].map((fn) => ({
    fn,
    leadingKey: 'IDEMPOTENCY#*',
    why: "a POST sent with an Idempotency-Key keeps a record; the suite's calls to this domain send none",
  })),
  {
    fn: 'payment-resolver',
    leadingKey: 'SUBSCRIPTION#*',
    why: 'a payment that starts a subscription settled by the resolver rather than by the donor or an event (domain/approval.ts settlePending)',
  },
  // The portal sets up a donor's new payment method as payments does (services/portal
  // domain/payment-method.ts → createPaymentSource): at Stripe a customer, and every provider's
  // shared circuit and rate counts. The suite changes methods on the simulated provider only.
  ...[
    { leadingKey: 'PROVIDER_CUSTOMER#*', action: 'dynamodb:PutItem' },
    { leadingKey: 'PROVIDER_HEALTH#*', action: 'dynamodb:UpdateItem' },
    { leadingKey: 'PROVIDER_RATE#*', action: 'dynamodb:UpdateItem' },
  ].map((write) => ({
    fn: 'portal',
    ...write,
    why: "a donor's new payment method at Stripe or Adyen: test/stripe-portal.test.ts now reaches Stripe's (added after the last full run's recording); the circuit and rate counts only on a provider's failure or a limited provider. To confirm from the next recording, or remove",
  })),
];

/**
 * Read partitions (on the table, or on an index) a role holds for code the suite does not reach,
 * or that no partition can name, each with the reason. Anything else granted and never read fails:
 * a role reads only the key prefixes its code reads.
 */
const DUE_SHARDS =
  "a due-index partition is a shard of due work, not an entity; which partition key IAM matches dynamodb:LeadingKeys against on an index query is not stated by AWS, so the workers' index queries are not held to keys";
/**
 * In one process (the local runtime, a test file) every authenticator verifies with identity's own
 * signer's keys, held in memory; deployed, each domain's function is its own process and reads the
 * published public keys (services/identity domain/signing-keys.ts publicKeyFor).
 */
const PUBLISHED_KEYS =
  "deployed, the authenticator reads the published public keys; in one process it verifies with identity's signer's keys in memory, so the suite rarely reads them";
const AUTHENTICATED = [
  'organisations',
  'payments',
  'supporters',
  'subscriptions',
  'webhooks',
  'onboarding',
  'reconciliation',
  'portal',
  'receipts',
];
/**
 * Read grants the full run of 2026-11-29 recorded no call for, where the code has a path that reads
 * them: each still to be confirmed by a test that reaches it (or the grant removed), see the issue
 * 46 note. Listed, not silently allowed: a new unused grant still fails.
 */
const NOT_YET_CONFIRMED = 'granted for a path the suite does not reach yet; to confirm with a test, or remove';

const UNEXERCISED_READS: ReadonlyArray<{ fn: string; leadingKey: string; index?: string; why: string }> = [
  { fn: 'delivery-sweeper', index: 'due', leadingKey: ANY_PARTITION, why: DUE_SHARDS },
  { fn: 'billing-run', index: 'due', leadingKey: ANY_PARTITION, why: DUE_SHARDS },
  { fn: 'mail-sweeper', index: 'due', leadingKey: ANY_PARTITION, why: DUE_SHARDS },
  {
    fn: 'receipts-worker',
    leadingKey: 'MAIL#*',
    why: 'a receipt mailed again (a page retried after its mails were queued) reads the outbox item its id names; the suite retries pages only before their mails',
  },
  {
    fn: 'payment-resolver',
    index: 'due,gsi1',
    leadingKey: ANY_PARTITION,
    why: `${DUE_SHARDS}; gsi1 (in the same statement) for the plans of a subscription a settled payment starts`,
  },
  {
    fn: 'fan-out',
    index: 'gsi2',
    leadingKey: ANY_PARTITION,
    why: "an organisation's subscriptions to an event (ORG#<org>#EVENT#<name>): as for the due index, not held to keys",
  },
  ...AUTHENTICATED.map((fn) => ({ fn, leadingKey: 'SIGNING_KEYS', why: PUBLISHED_KEYS })),
  ...['SUBSCRIPTION#*', 'PLAN#*', 'ACCOUNT#*'].map((leadingKey) => ({
    fn: 'payment-resolver',
    leadingKey,
    why: 'a payment that starts a subscription settled by the resolver rather than by the donor or an event (domain/approval.ts settlePending) reads its plan and account and writes the subscription',
  })),
  {
    fn: 'payments',
    leadingKey: 'PLAN#*',
    why: `a returned debit or a late recurring success is dunned by its plan (subscriptions' reopenReturnedDebit through the port); in one test process the plan is often served by another function's memo of hot reads: ${NOT_YET_CONFIRMED}`,
  },
  ...['ORG#*#EVENT_SUBSCRIPTIONS', 'ORG#*#WEBHOOK_RESPONSES*', 'ORG#*#EVENT#*'].map((leadingKey) => ({
    fn: 'webhooks',
    index: 'gsi1,gsi2',
    leadingKey,
    why: `an organisation's event subscriptions, webhook responses and subscriptions to an event on the indexes: ${NOT_YET_CONFIRMED}`,
  })),
  ...['ONBOARDING_CONFIG#*', 'PARTNER_LINK#*', 'WEBHOOK#*', 'EVENT_SUBSCRIPTION#*', 'PASSWORD_GUESSES#*'].map(
    (leadingKey) => ({
      fn: 'onboarding',
      leadingKey,
      why: `an execution's configuration, partner links, the endpoints and subscriptions it creates, and the guess counts (read back by their conditional writes): ${NOT_YET_CONFIRMED}`,
    }),
  ),
  {
    fn: 'reconciliation',
    leadingKey: 'ORG#*',
    why: `the organisation a report or source belongs to: ${NOT_YET_CONFIRMED}`,
  },
  ...['PROVIDER_CUSTOMER#*', 'PROVIDER_HEALTH#*'].map((leadingKey) => ({
    fn: 'portal',
    leadingKey,
    why: `a donor's new payment method at Stripe or Adyen (its customer, the provider's circuit; test/stripe-portal.test.ts came after the last recording): ${NOT_YET_CONFIRMED}`,
  })),
  {
    fn: 'portal',
    leadingKey: 'PLAN#*',
    why: "a subscription's plan name as GET shows it (subscriptions' planRefs); the portal's tests use the global default plan, which is no item",
  },
  {
    fn: 'stream-publisher',
    leadingKey: 'PLAN#*',
    why: "a subscription event names its plan's name (subscriptions' domain/shapes.ts planRefs); in the run, the subscriptions whose events the publisher shaped were on the global default plan, which is no item",
  },
];

/** The recording to check: the latest run's, or one named (a whole run kept aside while others run parts). */
const RUN = process.env.TEST_AWS_CALLS_CHECK_DIR || undefined;

let template: Template;
let functions: Map<string, DomainFunctionView>;

beforeAll(() => {
  const { stacks } = createServiceApp(appProps(SKIP_BUNDLING));
  const prod = stacks.find((stack) => stack.config.name === 'prod');
  if (!prod) throw new Error('no prod stack');
  template = Template.fromStack(prod);
  functions = functionsByService(template);
});

describe('IAM conformance of the test run', () => {
  it('finds every call the functions made allowed by their roles', () => {
    const calls = loadCalls(RUN);
    // The run recorded the functions it exercised (an empty record would pass vacuously).
    const exercised = new Set(calls.map((call) => call.fn));
    for (const fn of [
      'payments',
      'subscriptions',
      'webhooks',
      'delivery-worker',
      'delivery-sweeper',
      'fan-out',
      'mail-worker',
      'mail-sweeper',
      'receipts',
      'receipts-worker',
    ]) {
      expect(exercised, `no call of ${fn} was recorded`).toContain(fn);
    }
    const { findings, used } = checkCalls(template, functions, calls);
    const unused = unusedGrants(template, functions, used);
    if (unused.length > 0) {
      console.info(
        `Granted but not called in this run (${unused.length}):\n${unused.map((u) => `  ${u.fn}: ${u.action}`).join('\n')}`,
      );
    }
    expect(findings.map((f) => `${f.fn} ${f.action} on ${f.resource}: ${f.why}`)).toEqual([]);
  });

  it('finds every partition a role may write written by its code in the run (or listed with the path the suite does not reach)', () => {
    const unexercised = unexercisedWrites(template, functions, loadCalls(RUN)).filter(
      (found) =>
        !UNEXERCISED_WRITES.some(
          (known) =>
            known.fn === found.fn &&
            known.leadingKey === found.leadingKey &&
            (known.action === undefined || known.action === found.action),
        ),
    );
    expect(unexercised.map((found) => `${found.fn} may ${found.action} ${found.leadingKey}`)).toEqual([]);
  });

  it('finds every partition a role may read read by its code in the run (or listed with the path the suite does not reach)', () => {
    const unexercised = unexercisedReads(template, functions, loadCalls(RUN)).filter(
      (found) =>
        !UNEXERCISED_READS.some(
          (known) => known.fn === found.fn && known.leadingKey === found.leadingKey && known.index === found.index,
        ),
    );
    expect(
      unexercised.map((found) => `${found.fn} may read ${found.leadingKey}${found.index ? ` on ${found.index}` : ''}`),
    ).toEqual([]);
  });

  it('refuses a write to a partition the role only reads: no domain but identity writes credentials', () => {
    const write = (
      fn: string,
      command: string,
      pk: string,
      extra: Partial<RecordedCall['resources'][number]> = {},
    ) => ({
      fn,
      service: 'DynamoDB',
      command,
      resources: [{ variable: 'SVC_TABLE_NAME', partitionKeys: [pk], ...extra }],
    });
    /** Onboarding's transaction part that updates a partner client, naming `attributes`. */
    const clientUpdate = (attributes: string[]) => ({
      fn: 'onboarding',
      service: 'DynamoDB',
      command: 'TransactWrite',
      resources: [{ variable: 'SVC_TABLE_NAME', partitionKeys: ['CLIENT#partner'], action: 'UpdateItem', attributes }],
    });
    const { findings } = checkCalls(template, functions, [
      // Supporters reads the caller's client, and may not write it.
      write('supporters', 'Put', 'CLIENT#operator'),
      write('payments', 'Update', 'SIGNING_KEYS'),
      // A worker's put outside its partitions.
      write('billing-worker', 'Put', 'CLIENT#operator'),
      write('file-processor', 'Put', 'PAYMENT#x'),
      // Onboarding may change a client's grants, and nothing else of it.
      clientUpdate(['grants', 'grants_version', 'pk', 'sk']),
      clientUpdate(['grants', 'pk', 'secret_hash', 'sk']),
      write('onboarding', 'Put', 'CLIENT#new'),
      // Identity writes the signing keys and no client.
      write('identity', 'Put', 'SIGNING_KEYS'),
      write('identity', 'Put', 'CLIENT#new'),
    ]);
    expect(findings.map((f) => [f.fn, f.action, f.resource.replace(/^.*\(pk /, '').replace(')', '')])).toEqual([
      ['supporters', 'dynamodb:PutItem', 'CLIENT#'],
      ['payments', 'dynamodb:UpdateItem', 'SIGNING_KEYS'],
      ['billing-worker', 'dynamodb:PutItem', 'CLIENT#'],
      ['file-processor', 'dynamodb:PutItem', 'PAYMENT#'],
      ['onboarding', 'dynamodb:UpdateItem', 'CLIENT#'],
      ['onboarding', 'dynamodb:PutItem', 'CLIENT#'],
      ['identity', 'dynamodb:PutItem', 'CLIENT#'],
    ]);
  });

  it('evaluates a KMS encryption context condition: webhook secrets only with their purpose', () => {
    const kms = (fn: string, purpose: string) => ({
      fn,
      service: 'KMS',
      command: 'Decrypt',
      resources: [{ variable: 'SVC_WEBHOOK_KMS_KEY_ID' }],
      context: { 'kms:EncryptionContext:purpose': purpose },
    });
    const { findings } = checkCalls(template, functions, [kms('webhooks', 'webhook-secret'), kms('webhooks', 'other')]);
    expect(findings.map((f) => [f.fn, f.action])).toEqual([['webhooks', 'kms:Decrypt']]);
  });

  it('refuses calls a role does not allow (the check itself)', () => {
    const call = (fn: string, command: string, resources: RecordedCall['resources'], service = 'DynamoDB') => ({
      fn,
      service,
      command,
      resources,
    });
    const { findings } = checkCalls(template, functions, [
      // The sweeper may read and write deliveries, but nothing may delete the table's items.
      call('delivery-sweeper', 'Delete', [{ variable: 'SVC_TABLE_NAME', partitionKeys: ['DELIVERY#x'] }]),
      // The delivery worker's batch writes are held to its own items by dynamodb:LeadingKeys.
      call('delivery-worker', 'BatchWrite', [{ variable: 'SVC_TABLE_NAME', partitionKeys: ['PAYMENT#x'] }]),
      // Supporters has no queue at all.
      call('supporters', 'SendMessage', [{ variable: 'SVC_DELIVERY_QUEUE_URL' }], 'SQS'),
      call('nobody', 'Get', [{ variable: 'SVC_TABLE_NAME' }]),
    ]);
    expect(findings.map((f) => [f.fn, f.action])).toEqual([
      ['delivery-sweeper', 'dynamodb:DeleteItem'],
      ['delivery-worker', 'dynamodb:BatchWriteItem'],
      ['supporters', 'sqs:SendMessage'],
      ['nobody', 'Get'],
    ]);
  });

  it('maps a call with its parameters to the action IAM checks: GetObject of a version needs s3:GetObjectVersion', () => {
    const versioned = (fn: string, key: string) => ({
      fn,
      service: 'S3',
      command: 'GetObject',
      resources: [{ variable: 'SVC_RECONCILIATION_BUCKET', objectKey: key }],
      parameters: ['VersionId'],
    });
    const { findings } = checkCalls(template, functions, [
      // The file processor reads the version S3's notification names, under uploads/.
      versioned('file-processor', 'uploads/org/file.xml'),
      // The reconciliation API may read reports, but never a named version of them.
      versioned('reconciliation', 'reports/org/report.csv'),
    ]);
    expect(findings.map((f) => [f.fn, f.action])).toEqual([['reconciliation', 's3:GetObjectVersion']]);
  });

  it('holds SES SendEmail to the stage identity: the mail worker sends from it, nothing else does', () => {
    const from = functions.get('mail-worker')?.properties.Environment.Variables.SVC_MAIL_FROM;
    expect(typeof from).toBe('string');
    const send = (fn: string) => ({
      fn,
      service: 'SESv2',
      command: 'SendEmail',
      resources: [{ variable: 'SVC_MAIL_FROM' }],
    });
    const { findings } = checkCalls(template, functions, [send('mail-worker'), send('mail-sweeper'), send('payments')]);
    expect(findings.map((f) => [f.fn, f.action])).toEqual([
      ['mail-sweeper', 'ses:SendEmail'],
      ['payments', 'ses:SendEmail'],
    ]);
  });
});
