import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { currentFunction } from '@svc/core';

/**
 * Records every AWS SDK call made inside a deployed function's scope (see `asFunction` in
 * @svc/core: the local runtime sets it around each handler) while the test suite runs: the
 * function, the command and the resources it names. `pnpm test` then holds each call against that
 * function's role in the synthesised template (test/iam/conformance.ts).
 *
 * Resources are recorded by the environment variable that named them (the table in
 * `SVC_TABLE_NAME`, a queue in `SVC_DELIVERY_QUEUE_URL`, …): the template sets the same variables
 * to the deployed resources, which is how a call here is matched with a resource there.
 */
const CALLS_ROOT = resolve(import.meta.dirname, '../../.test-results/aws-calls');
const LATEST = join(CALLS_ROOT, 'latest');
const ONE_HOUR_MS = 3_600_000;

/**
 * A directory for this run's calls (the global setup's; its test processes find it in
 * TEST_AWS_CALLS_DIR), named in `latest` for the check. Runs older than an hour are removed;
 * a run going on beside this one keeps its own.
 */
export function startRecording(): string {
  mkdirSync(CALLS_ROOT, { recursive: true });
  for (const entry of readdirSync(CALLS_ROOT)) {
    const path = join(CALLS_ROOT, entry);
    if (entry !== 'latest' && Date.now() - statSync(path).mtimeMs > ONE_HOUR_MS) {
      rmSync(path, { recursive: true, force: true });
    }
  }
  const dir = join(CALLS_ROOT, `run-${Date.now()}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(LATEST, dir);
  process.env.TEST_AWS_CALLS_DIR = dir;
  return dir;
}

/** The latest run's directory. */
export function latestRun(): string | undefined {
  try {
    return readFileSync(LATEST, 'utf8').trim();
  } catch {
    return undefined;
  }
}

export interface RecordedCall {
  fn: string;
  service: string;
  command: string;
  /** Resources the call names: the variable that held each name, and the key or index within it. */
  resources: Array<{
    variable: string;
    index?: string;
    objectKey?: string;
    partitionKeys?: string[];
    /** A transaction's part: the action IAM checks for it (`PutItem`, `ConditionCheckItem`). */
    action?: string;
    /** The top-level attributes a write names (key, update, condition), for `dynamodb:Attributes`. */
    attributes?: string[];
  }>;
  /** For a transaction or a batch: the actions it makes on each item. */
  itemActions?: string[];
  /** Parameters that change which IAM action the call needs (an object's `VersionId`). */
  parameters?: string[];
  /** Condition keys the request sets (`kms:EncryptionContext:purpose`, `dynamodb:ReturnValues`). */
  context?: Record<string, string>;
}

type Input = Record<string, unknown>;

/**
 * The `SVC_*` variable whose value is this name (or URL or ARN), if any. Only those variables'
 * values are read: each read of `process.env` asks the C library, and reading all of them
 * (`Object.entries`) on every recorded call was a tenth of a DynamoDB-bound file's CPU time.
 */
function variableHolding(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  for (const name of Object.keys(process.env)) {
    if (name.startsWith('SVC_') && process.env[name] === value) return name;
  }
  return undefined;
}

const partitionKeyOf = (key: unknown) =>
  key && typeof key === 'object' && typeof (key as Input).pk === 'string' ? [(key as Input).pk as string] : [];

/**
 * The partition key value a Query names: the value of its key condition's first equality
 * (`#pk = :pk AND …`, as @svc/table writes them), which IAM matches against dynamodb:LeadingKeys.
 */
function queriedPartitionKey(input: Input): string[] {
  const match = /^\s*\(?\s*#?\w+\s*=\s*(:\w+)/.exec(String(input.KeyConditionExpression));
  const values = input.ExpressionAttributeValues as Record<string, unknown> | undefined;
  const value = match?.[1] ? values?.[match[1]] : undefined;
  return typeof value === 'string' ? [value] : [];
}

/** Words of an expression that are not attribute names. */
const EXPRESSION_WORDS = new Set([
  'SET',
  'REMOVE',
  'ADD',
  'DELETE',
  'AND',
  'OR',
  'NOT',
  'BETWEEN',
  'IN',
  'attribute_exists',
  'attribute_not_exists',
  'attribute_type',
  'begins_with',
  'contains',
  'size',
  'if_not_exists',
  'list_append',
]);

/**
 * The top-level attributes an item write names: its key's, and those of its update and condition
 * expressions (`#name` resolved; `a.b[0]` is `a`), which is what `dynamodb:Attributes` is matched
 * against. A Put names every attribute of its item.
 */
function attributesNamed(body: Input): string[] {
  const names = body.ExpressionAttributeNames as Record<string, string> | undefined;
  const found = new Set<string>(Object.keys((body.Key ?? body.Item ?? {}) as Input));
  for (const expression of [body.UpdateExpression, body.ConditionExpression]) {
    if (typeof expression !== 'string') continue;
    const withoutValues = expression.replace(/:\w+/g, ' ');
    for (const match of withoutValues.matchAll(/(#?[A-Za-z_][\w]*)((?:\.[#\w]+|\[\d+\])*)/g)) {
      const word = match[1] ?? '';
      if (EXPRESSION_WORDS.has(word)) continue;
      found.add(word.startsWith('#') ? (names?.[word] ?? word) : word);
    }
  }
  return [...found].sort();
}

function describe(input: Input): Pick<RecordedCall, 'resources' | 'itemActions' | 'parameters' | 'context'> {
  const resources: RecordedCall['resources'] = [];
  const add = (name: unknown, extra: Omit<RecordedCall['resources'][number], 'variable'> = {}) => {
    const variable = variableHolding(name) ?? `literal:${String(name)}`;
    resources.push({ variable, ...extra });
  };
  // SES (API v2) SendEmail: IAM checks the identity the From address is sent from.
  if (typeof input.FromEmailAddress === 'string') add(input.FromEmailAddress);
  if ('TableName' in input) {
    add(input.TableName, {
      ...(typeof input.IndexName === 'string' ? { index: input.IndexName } : {}),
      partitionKeys: input.KeyConditionExpression
        ? queriedPartitionKey(input)
        : partitionKeyOf(input.Key ?? input.Item),
      ...(input.UpdateExpression || input.Item ? { attributes: attributesNamed(input) } : {}),
    });
  }
  if ('QueueUrl' in input) add(input.QueueUrl);
  if ('Bucket' in input) add(input.Bucket, typeof input.Key === 'string' ? { objectKey: input.Key } : {});
  const parameters = typeof input.VersionId === 'string' ? ['VersionId'] : [];
  if ('SecretId' in input) add(input.SecretId);
  if ('KeyId' in input) add(input.KeyId);
  let itemActions: string[] | undefined;
  if (Array.isArray(input.TransactItems)) {
    itemActions = [];
    for (const item of input.TransactItems as Input[]) {
      for (const [kind, body] of Object.entries(item)) {
        const action = {
          Put: 'PutItem',
          Update: 'UpdateItem',
          Delete: 'DeleteItem',
          ConditionCheck: 'ConditionCheckItem',
          Get: 'GetItem',
        }[kind];
        if (!action) continue;
        itemActions.push(action);
        const b = body as Input;
        add(b.TableName, {
          partitionKeys: partitionKeyOf(b.Key ?? b.Item),
          action,
          ...(kind === 'Update' || kind === 'Put' ? { attributes: attributesNamed(b) } : {}),
        });
      }
    }
  }
  if (input.RequestItems && typeof input.RequestItems === 'object') {
    for (const [table, requests] of Object.entries(input.RequestItems as Input)) {
      const keys = Array.isArray(requests)
        ? (requests as Input[]).flatMap((r) =>
            partitionKeyOf((r.PutRequest as Input | undefined)?.Item ?? (r.DeleteRequest as Input | undefined)?.Key),
          )
        : (((requests as Input).Keys as unknown[] | undefined)?.flatMap(partitionKeyOf) ?? []);
      add(table, { partitionKeys: keys });
    }
  }
  const context: Record<string, string> = {};
  if (input.EncryptionContext && typeof input.EncryptionContext === 'object') {
    for (const [name, value] of Object.entries(input.EncryptionContext as Record<string, string>)) {
      context[`kms:EncryptionContext:${name}`] = value;
    }
  }
  if (typeof input.ReturnValues === 'string') context['dynamodb:ReturnValues'] = input.ReturnValues;
  return {
    resources,
    ...(itemActions ? { itemActions } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(Object.keys(context).length > 0 ? { context } : {}),
  };
}

type Send = ((...args: unknown[]) => unknown) & { original?: Send };

/**
 * Wraps the SDK's one `send` (every client's) to record calls made in a function's scope. Each
 * test file loads its own copy of our modules, so each wraps the SDK's original `send` afresh
 * with its own `currentFunction`.
 */
export function installRecorder(): void {
  const dir = process.env.TEST_AWS_CALLS_DIR;
  if (!dir) return;
  const file = join(dir, `${process.pid}.jsonl`);
  const here = createRequire(import.meta.url);
  // Every copy of @smithy/core the clients use: the SESv2 client (through @svc/mail) is of a
  // newer release than DynamoDB's and has its own Client class.
  const anchors = [
    here.resolve('@aws-sdk/client-dynamodb'),
    createRequire(here.resolve('@svc/mail')).resolve('@aws-sdk/client-sesv2'),
  ];
  const classes = new Set(
    anchors.map(
      (anchor) => (createRequire(anchor)('@smithy/core/client') as { Client: { prototype: { send: Send } } }).Client,
    ),
  );
  for (const Client of classes) wrapSend(Client, file);
}

function wrapSend(Client: { prototype: { send: Send } }, file: string): void {
  const send = Client.prototype.send.original ?? Client.prototype.send;
  const recorded: Send = function recorded(this: { config?: { serviceId?: string } }, ...args: unknown[]) {
    const fn = currentFunction();
    const command = args[0] as { constructor: { name: string }; input?: Input } | undefined;
    if (fn && command) {
      const call: RecordedCall = {
        fn,
        service: this.config?.serviceId ?? 'unknown',
        command: command.constructor.name.replace(/Command$/, ''),
        ...describe(command.input ?? {}),
      };
      try {
        appendFileSync(file, `${JSON.stringify(call)}\n`);
      } catch {
        // The record is the test's, never the call's: a lost line must not fail a request.
      }
    }
    return send.apply(this, args);
  };
  recorded.original = send;
  Client.prototype.send = recorded;
}
