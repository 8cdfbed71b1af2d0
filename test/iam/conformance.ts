import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Template } from 'aws-cdk-lib/assertions';
import {
  type DomainFunctionView,
  iamGlob as glob,
  resourcesOfStatement,
  type Statement,
  statementsOfRole,
} from '../../infra/test/support/template-model';
import { latestRun, type RecordedCall } from './recorder';

/**
 * Holds every AWS call a function made during the test run against that function's role in the
 * synthesised template: the action, the resource (found through the environment variable that
 * named it, which the template sets to the deployed resource) and the `dynamodb:LeadingKeys`
 * condition where a statement has one. What the local runtime does only locally (it stands in for
 * resources AWS creates) is listed in LOCAL_ONLY with the reason.
 */

const PREFIX: Record<string, string> = {
  DynamoDB: 'dynamodb',
  SQS: 'sqs',
  S3: 's3',
  EventBridge: 'events',
  'Secrets Manager': 'secretsmanager',
  KMS: 'kms',
  'RDS Data': 'rds-data',
  Scheduler: 'scheduler',
  SESv2: 'ses',
};

/** Commands whose IAM action has another name (the document client's short names, batch forms). */
const ACTION: Record<string, string> = {
  Get: 'GetItem',
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  BatchGet: 'BatchGetItem',
  BatchWrite: 'BatchWriteItem',
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
  HeadObject: 'GetObject',
};

/** Calls the local runtime makes only because it stands in for what AWS provides. */
export const LOCAL_ONLY: ReadonlyArray<{ fn: string; action: string; partitionKey?: string; reason: string }> = [];

export interface Finding {
  fn: string;
  action: string;
  resource: string;
  why: string;
}

export function loadCalls(dir = latestRun()): RecordedCall[] {
  let files: string[];
  if (!dir) return [];
  try {
    files = readdirSync(dir).filter((file) => file.endsWith('.jsonl'));
  } catch {
    return [];
  }
  const seen = new Set<string>();
  const calls: RecordedCall[] = [];
  for (const file of files) {
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      if (!line) continue;
      // One of each (function, command, resources' shape): thousands of identical reads say nothing more.
      const call = JSON.parse(line) as RecordedCall;
      const key = JSON.stringify([
        call.fn,
        call.command,
        call.itemActions,
        call.parameters,
        call.context,
        call.resources.map((r) => [
          r.variable,
          r.index,
          r.action,
          r.attributes,
          r.objectKey?.split('/')[0],
          r.partitionKeys?.map(prefixOf),
        ]),
      ]);
      if (seen.has(key)) continue;
      seen.add(key);
      calls.push(call);
    }
  }
  return calls;
}

/** A partition key's entity prefix (`DELIVERY#…` → `DELIVERY#`), enough to tell access patterns apart. */
const prefixOf = (pk: string) => pk.replace(/#.*$/, '#');

/**
 * The IAM action a call needs, with its parameters: IAM checks another action for some of them.
 * A transaction's parts are checked one by one, each as its own action (the recorder keeps
 * them: "Permissions for Put, Update, Delete, and Get actions are governed by the permissions
 * used for the underlying PutItem, UpdateItem, DeleteItem, and GetItem operations",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
 * Conditional writes need no other action (a DynamoDB ConditionExpression, S3's If-Match or
 * If-None-Match): they narrow what the request does, and AWS documents them only as condition
 * keys, which the statements here do not use. KMS encryption contexts and DynamoDB's
 * Attributes and ReturnValues are held by the statements' conditions (conditionHolds).
 * GetObject and HeadObject of a named version need `s3:GetObjectVersion` ("To return a different
 * version, you need the s3:GetObjectVersion permission",
 * https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html and API_HeadObject.html).
 */
export function actionsOf(call: RecordedCall): string[] {
  const prefix = PREFIX[call.service] ?? call.service.toLowerCase();
  if (
    call.service === 'S3' &&
    (call.command === 'GetObject' || call.command === 'HeadObject') &&
    call.parameters?.includes('VersionId')
  )
    return ['s3:GetObjectVersion'];
  if (call.command === 'TransactWrite' || call.command === 'TransactWriteItems')
    return [...new Set(call.itemActions ?? [])].map((a) => `dynamodb:${a}`);
  if (call.command === 'TransactGet' || call.command === 'TransactGetItems') return ['dynamodb:GetItem'];
  return [`${prefix}:${ACTION[call.command] ?? call.command}`];
}

/** An intrinsic reference in the template, rendered so a call's resource can be matched against it. */
function render(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if (typeof object.Ref === 'string') return object.Ref.startsWith('AWS::') ? '*' : `ref(${object.Ref})`;
    const getAtt = object['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return getAtt[1] === 'Arn' ? `arn(${getAtt[0]})` : `${getAtt[1]}(${getAtt[0]})`;
    const join = object['Fn::Join'];
    if (Array.isArray(join)) return (join[1] as unknown[]).map(render).join(String(join[0]));
  }
  return JSON.stringify(value);
}

/** How the template may spell the resource a call named: by its ARN attribute, or an ARN built from its Ref. */
function candidates(service: string, id: string, resource: RecordedCall['resources'][number]): string[] {
  const suffix = resource.index ? `/index/${resource.index}` : resource.objectKey ? `/${resource.objectKey}` : '';
  switch (service) {
    case 'DynamoDB':
      return [`arn(${id})${suffix}`, `arn:aws:dynamodb:region:account:table/ref(${id})${suffix}`];
    case 'S3':
      return [`arn(${id})${suffix}`, `arn:aws:s3:::ref(${id})${suffix}`];
    default:
      return [`arn(${id})`, `ref(${id})`];
  }
}

type Resource = RecordedCall['resources'][number];

/**
 * The request's values of a condition key, as IAM would see them: the partition keys it names
 * (dynamodb:LeadingKeys), the attributes it names (dynamodb:Attributes), and what the recorder
 * kept of its parameters (dynamodb:ReturnValues, kms:EncryptionContext:*). Undefined: the request
 * does not carry the key.
 */
function valuesOf(key: string, call: RecordedCall, resource: Resource): string[] | undefined {
  if (key === 'dynamodb:LeadingKeys') return resource.partitionKeys;
  if (key === 'dynamodb:Attributes') return resource.attributes;
  const value = call.context?.[key];
  return value === undefined ? undefined : [value];
}

/**
 * Evaluates a statement's Condition block for one call and resource, for the operators our
 * policies use; any other operator (or a key the recorder cannot know) fails the call, so a new
 * kind of condition is taught here before it passes.
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html
 * and reference_policies_condition-single-vs-multi-valued-context-keys.html: ForAllValues holds
 * when every request value matches (and, as written here, at least one value exists: a request
 * with no partition key is no item access); the IfExists forms hold when the key is absent.
 */
function conditionHolds(condition: unknown, call: RecordedCall, resource: Resource): boolean {
  if (condition === undefined) return true;
  for (const [operator, keys] of Object.entries(condition as Record<string, Record<string, unknown>>)) {
    for (const [key, allowed] of Object.entries(keys)) {
      const patterns = (Array.isArray(allowed) ? allowed : [allowed]).map(String);
      const values = valuesOf(key, call, resource);
      const like = (value: string) => patterns.some((pattern) => glob(pattern, value));
      const equals = (value: string) => patterns.includes(value);
      switch (operator) {
        case 'ForAllValues:StringLike':
          if (!values?.length || !values.every(like)) return false;
          break;
        case 'ForAllValues:StringEquals':
          if (!values?.length || !values.every(equals)) return false;
          break;
        case 'StringEquals':
          if (!values?.length || !values.every(equals)) return false;
          break;
        case 'StringEqualsIfExists':
          if (values !== undefined && !values.every(equals)) return false;
          break;
        default:
          return false;
      }
    }
  }
  return true;
}

function allows(statement: Statement, action: string, targets: string[], call: RecordedCall, resource: Resource) {
  if (statement.Effect !== 'Allow') return false;
  if (!statement.Action.some((granted) => glob(granted, action))) return false;
  const resources = resourcesOfStatement(statement).map(render);
  if (!resources.some((granted) => targets.some((target) => glob(granted, target)))) return false;
  return conditionHolds(statement.Condition, call, resource);
}

/** The calls no statement of the function's role allows. */
export function checkCalls(
  template: Template,
  functions: ReadonlyMap<string, DomainFunctionView>,
  calls: readonly RecordedCall[],
): { findings: Finding[]; used: Map<string, Set<string>> } {
  const findings: Finding[] = [];
  const used = new Map<string, Set<string>>();
  for (const call of calls) {
    const fn = functions.get(call.fn);
    if (!fn) {
      findings.push({ fn: call.fn, action: call.command, resource: '', why: 'no such function in the template' });
      continue;
    }
    const statements = statementsOfRole(template, fn.roleId);
    const variables = fn.properties.Environment.Variables;
    for (const resource of call.resources) {
      for (const action of resource.action ? [`dynamodb:${resource.action}`] : actionsOf(call)) {
        if (!used.has(call.fn)) used.set(call.fn, new Set());
        used.get(call.fn)?.add(action);
        const local = LOCAL_ONLY.find(
          (entry) =>
            entry.fn === call.fn &&
            entry.action === action &&
            (entry.partitionKey === undefined || resource.partitionKeys?.includes(entry.partitionKey)),
        );
        if (local) continue;
        const held = variables[resource.variable];
        // SES: the template gives the From address as text; IAM checks SendEmail against the
        // identity it is sent from, the address's domain or the address itself (identity ARNs,
        // arn:aws:ses:<region>:<account>:identity/<name>, Service Authorization Reference, SES v2).
        const sesTargets =
          call.service === 'SESv2' && typeof held === 'string'
            ? [held.slice(held.lastIndexOf('@') + 1), held].map((name) => `arn:aws:ses:region:account:identity/${name}`)
            : undefined;
        const id =
          sesTargets?.[0] ??
          (held && typeof held === 'object' ? render(held).replace(/^(ref|arn)\((.*)\)$/, '$2') : undefined);
        if (!id) {
          findings.push({
            fn: call.fn,
            action,
            resource: resource.variable,
            why: `the template does not give ${call.fn} ${resource.variable}`,
          });
          continue;
        }
        const targets = sesTargets ?? candidates(call.service, id, resource);
        if (!statements.some((statement) => allows(statement, action, targets, call, resource))) {
          findings.push({
            fn: call.fn,
            action,
            resource: `${resource.variable} → ${targets[0]}${resource.partitionKeys?.length ? ` (pk ${resource.partitionKeys.map(prefixOf).join(', ')})` : ''}`,
            why: 'no statement of its role allows it',
          });
        }
      }
    }
  }
  return { findings, used };
}

/** Actions a function's role grants that no recorded call used (reported, not a failure). */
export function unusedGrants(
  template: Template,
  functions: ReadonlyMap<string, DomainFunctionView>,
  used: ReadonlyMap<string, ReadonlySet<string>>,
): Array<{ fn: string; action: string }> {
  const unused: Array<{ fn: string; action: string }> = [];
  for (const [name, fn] of functions) {
    const calls = used.get(name);
    if (!calls) continue;
    for (const statement of statementsOfRole(template, fn.roleId)) {
      if (statement.Effect !== 'Allow') continue;
      for (const action of statement.Action) {
        // The Lambda runtime writes the logs (and traces), not the function's code.
        if (action.startsWith('logs:') || action.startsWith('xray:')) continue;
        if (![...calls].some((call) => glob(action, call))) unused.push({ fn: name, action });
      }
    }
  }
  return unused;
}

const WRITE_ACTIONS = new Set([
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
]);

/**
 * The actions that read items: what the code sends to read (GetItem, BatchGetItem, Query), and a
 * transaction's condition check, which IAM checks as its own action and which reads a condition
 * of an item ("For the ConditionCheck action, you can use the dynamodb:ConditionCheckItem
 * permission", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
 * Scan is none of ours.
 */
const READ_ACTIONS = new Set([
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:ConditionCheckItem',
]);

/** What no dynamodb:LeadingKeys condition is reported as: the statement reaches every partition. */
export const ANY_PARTITION = '(any: no dynamodb:LeadingKeys)';

/** The dynamodb:LeadingKeys patterns a statement is held to; undefined: none (any partition). */
function leadingKeysOfStatement(statement: Statement): string[] | undefined {
  const condition = statement.Condition as Record<string, Record<string, string[]>> | undefined;
  return condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'];
}

/** The table indexes a statement names (`…/index/<name>`); none: it names the table itself. */
function indexesOfStatement(statement: Statement): string[] {
  return resourcesOfStatement(statement)
    .map(render)
    .flatMap((resource) => /\/index\/([^/]+)$/.exec(resource)?.[1] ?? []);
}

/** One action of a call on one table resource, with the partitions it named. */
interface ItemAccess {
  fn: string;
  action: string;
  index?: string;
  partitionKeys: string[];
}

function itemAccesses(calls: readonly RecordedCall[]): ItemAccess[] {
  const found: ItemAccess[] = [];
  for (const call of calls) {
    if (call.service !== 'DynamoDB') continue;
    for (const resource of call.resources) {
      for (const action of resource.action ? [`dynamodb:${resource.action}`] : actionsOf(call)) {
        found.push({
          fn: call.fn,
          action,
          ...(resource.index ? { index: resource.index } : {}),
          partitionKeys: resource.partitionKeys ?? [],
        });
      }
    }
  }
  return found;
}

/**
 * Each (write action, partition) a function's role may write that no write of its in the run used,
 * and each table write statement not held to partitions at all: a role writes only the key
 * prefixes its code writes, each with only the actions its code sends there (no PutItem on a
 * counter that is only ever updated). Only functions the run exercised are judged.
 */
export function unexercisedWrites(
  template: Template,
  functions: ReadonlyMap<string, DomainFunctionView>,
  calls: readonly RecordedCall[],
): Array<{ fn: string; action: string; leadingKey: string }> {
  const accesses = itemAccesses(calls).filter((access) => WRITE_ACTIONS.has(access.action));
  const exercised = new Set(calls.map((call) => call.fn));
  const found: Array<{ fn: string; action: string; leadingKey: string }> = [];
  for (const [name, fn] of functions) {
    if (!exercised.has(name)) continue;
    const own = accesses.filter((access) => access.fn === name);
    for (const statement of statementsOfRole(template, fn.roleId)) {
      if (statement.Effect !== 'Allow') continue;
      for (const action of statement.Action.filter((granted) => WRITE_ACTIONS.has(granted))) {
        const patterns = leadingKeysOfStatement(statement);
        if (!patterns) {
          found.push({ fn: name, action, leadingKey: ANY_PARTITION });
          continue;
        }
        for (const pattern of patterns) {
          const used = own.some(
            (access) => access.action === action && access.partitionKeys.some((key) => glob(pattern, key)),
          );
          if (!used) found.push({ fn: name, action, leadingKey: pattern });
        }
      }
    }
  }
  return found;
}

/**
 * Each partition a function's role may read that no read of its in the run named (for a statement
 * on indexes, no Query of one of them; reported with the indexes joined by commas), and each read statement not held to partitions at all: a
 * role reads only the key prefixes its code reads. Reads are judged by partition, not by action:
 * the table client coalesces point reads into BatchGetItem as they come, so a partition read by
 * GetItem in one run is read by BatchGetItem in another. Only functions the run exercised are
 * judged.
 */
export function unexercisedReads(
  template: Template,
  functions: ReadonlyMap<string, DomainFunctionView>,
  calls: readonly RecordedCall[],
): Array<{ fn: string; index?: string; leadingKey: string }> {
  const accesses = itemAccesses(calls).filter((access) => READ_ACTIONS.has(access.action));
  const exercised = new Set(calls.map((call) => call.fn));
  const found: Array<{ fn: string; index?: string; leadingKey: string }> = [];
  for (const [name, fn] of functions) {
    if (!exercised.has(name)) continue;
    const own = accesses.filter((access) => access.fn === name);
    for (const statement of statementsOfRole(template, fn.roleId)) {
      if (statement.Effect !== 'Allow') continue;
      const reading = statement.Action.filter((granted) => READ_ACTIONS.has(granted));
      if (reading.length === 0) continue;
      // A read statement on the table, or on the indexes it names: IAM cannot tell which of the
      // statement's keys serve which of its indexes, so a key used on any of them is exercised.
      const indexes = indexesOfStatement(statement);
      const index = indexes.length > 0 ? indexes.join(',') : undefined;
      const onTarget = own.filter(
        (access) =>
          reading.includes(access.action) &&
          (indexes.length === 0 ? access.index === undefined : indexes.includes(access.index ?? '')),
      );
      const patterns = leadingKeysOfStatement(statement);
      if (!patterns) {
        found.push({ fn: name, ...(index ? { index } : {}), leadingKey: ANY_PARTITION });
        continue;
      }
      for (const pattern of patterns) {
        if (!onTarget.some((access) => access.partitionKeys.some((key) => glob(pattern, key)))) {
          found.push({ fn: name, ...(index ? { index } : {}), leadingKey: pattern });
        }
      }
    }
  }
  return found;
}
