import {
  type AttributeValue,
  BatchWriteItemCommand,
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  RestoreTableToPointInTimeCommand,
  ScanCommand,
  type TableDescription,
  TagResourceCommand,
  UpdateContinuousBackupsCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { TTL_ATTRIBUTE, tableName } from '@svc/table';
import { ADOPTED_TABLES_FILE, recordAdoptedTable } from './adopted-table';

/**
 * Disaster recovery of the table (docs/operations.md, "Restoring the table"):
 *
 * `table:restore` starts DynamoDB's point-in-time restore of a stage's table into a new table.
 * DynamoDB restores the items and the global secondary indexes, and not the stream, the TTL
 * setting, point-in-time recovery, tags, alarms or IAM policies ("You must manually set up the
 * following on the restored table: auto scaling policies, IAM policies, Amazon CloudWatch metrics
 * and alarms, tags, stream settings, Time to Live (TTL) settings, point-in-time recovery
 * settings", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/PointInTimeRecovery_Howitworks.html).
 * DynamoDB Local has no point-in-time backups, so locally the restore is stood in for by a copy
 * into a new table made the way a restore makes it: the same keys and indexes, no stream, no TTL.
 *
 * `table:adopt` prepares a restored table to be the stage's: stream (new and old images: the
 * event pipeline and the search projector read it), TTL on `ttl`, and on a deployed stage
 * point-in-time recovery, (prod) deletion protection and the stack's tags; then records the table
 * as the stage's in infra/config/adopted-tables.json, which every later synth reads, so a plain
 * deploy keeps the stage on it (apps/ops/src/adopted-table.ts). The
 * KMS key that seals webhook credentials and the hash-key secret are kept with every stage that
 * keeps data (infra/test/retention.test.ts), so the restored items are read as before.
 */
export interface RecoveryOptions {
  stage?: string | undefined;
  /** The restored (or to be restored) table's name. */
  table?: string | undefined;
  /** The point in time: ISO 8601; absent, the latest restorable time. */
  to?: string | undefined;
}

const client = () => new DynamoDBClient({});

/**
 * The tags the service stack puts on everything it makes (infra/stacks/service-stack.ts,
 * `Tags.of(this)`); a table the stack references but does not make gets them from `table:adopt`
 * (a restore brings no tags: "You must manually set up ... Tags", AWS, above).
 */
export const STACK_TAGS = (stage: string) => [
  { Key: 'service', Value: 'svc-fundraising' },
  { Key: 'stage', Value: stage },
];

/** What `table:adopt` calls and writes to, replaceable in tests (no AWS, no repo file). */
export interface AdoptDependencies {
  dynamo?: Pick<DynamoDBClient, 'send'>;
  /** infra/config/adopted-tables.json unless given. */
  adoptedTablesFile?: string;
  now?: () => Date;
}

export async function restoreTable(options: RecoveryOptions, out: (line: string) => void): Promise<string> {
  const source = tableName();
  const target = options.table ?? `${source}-restored-${new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '')}`;
  if (target === source) throw new Error('--table must name a new table, not the stage’s own');
  const at = options.to === undefined ? undefined : new Date(options.to);
  if (at && Number.isNaN(at.getTime())) throw new Error(`--to is an ISO 8601 time, got ${options.to}`);
  const dynamo = client();
  if (!options.stage || options.stage === 'local') {
    const copied = await copyAsRestored(dynamo, source, target);
    out(`Copied ${copied} items of ${source} into ${target} (locally a copy stands in for a point-in-time restore).`);
  } else {
    await dynamo.send(
      new RestoreTableToPointInTimeCommand({
        SourceTableName: source,
        TargetTableName: target,
        ...(at ? { RestoreDateTime: at } : { UseLatestRestorableTime: true }),
      }),
    );
    out(`Restoring ${source} ${at ? `as of ${at.toISOString()}` : 'as of the latest restorable time'} into ${target}.`);
    out('A restore takes from minutes to hours; `table:adopt` waits for it.');
  }
  out(`Next: pnpm ops table:adopt${options.stage ? ` --stage ${options.stage}` : ''} --table ${target}`);
  return target;
}

export async function adoptTable(
  options: RecoveryOptions,
  out: (line: string) => void,
  pause: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  dependencies: AdoptDependencies = {},
): Promise<{ tableName: string; streamArn: string }> {
  const name = options.table;
  if (!name) throw new Error('table:adopt needs --table <the restored table>');
  const deployed = options.stage !== undefined && options.stage !== 'local';
  const dynamo = (dependencies.dynamo ?? client()) as DynamoDBClient;
  let table = await until(dynamo, name, pause, (t) => t.TableStatus === 'ACTIVE', 'active');
  if (!table.StreamSpecification?.StreamEnabled) {
    await dynamo.send(
      new UpdateTableCommand({
        TableName: name,
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
      }),
    );
    out(`${name}: stream enabled (new and old images).`);
  } else if (table.StreamSpecification.StreamViewType !== 'NEW_AND_OLD_IMAGES') {
    throw new Error(
      `${name} has a ${table.StreamSpecification.StreamViewType} stream; the service reads NEW_AND_OLD_IMAGES`,
    );
  }
  const ttl = await dynamo.send(new DescribeTimeToLiveCommand({ TableName: name }));
  if (ttl.TimeToLiveDescription?.TimeToLiveStatus !== 'ENABLED') {
    await dynamo.send(
      new UpdateTimeToLiveCommand({
        TableName: name,
        TimeToLiveSpecification: { Enabled: true, AttributeName: TTL_ATTRIBUTE },
      }),
    );
    out(`${name}: TTL on \`${TTL_ATTRIBUTE}\`.`);
  }
  if (deployed) {
    await dynamo.send(
      new UpdateContinuousBackupsCommand({
        TableName: name,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      }),
    );
    out(`${name}: point-in-time recovery on.`);
    if (options.stage === 'prod') {
      await until(dynamo, name, pause, (t) => t.TableStatus === 'ACTIVE', 'active');
      await dynamo.send(new UpdateTableCommand({ TableName: name, DeletionProtectionEnabled: true }));
      out(`${name}: deletion protection on.`);
    }
  }
  table = await until(dynamo, name, pause, (t) => t.TableStatus === 'ACTIVE' && !!t.LatestStreamArn, 'streaming');
  const streamArn = table.LatestStreamArn ?? '';
  if (deployed) {
    const stage = options.stage ?? '';
    if (table.TableArn) {
      await dynamo.send(new TagResourceCommand({ ResourceArn: table.TableArn, Tags: STACK_TAGS(stage) }));
      out(
        `${name}: tagged ${STACK_TAGS(stage)
          .map((tag) => `${tag.Key}=${tag.Value}`)
          .join(', ')}.`,
      );
    }
    const file = dependencies.adoptedTablesFile ?? ADOPTED_TABLES_FILE;
    recordAdoptedTable(
      stage,
      { tableName: name, streamArn, adoptedAt: (dependencies.now?.() ?? new Date()).toISOString() },
      file,
    );
    out(`Recorded as ${stage}'s table in ${file}: every deploy from now on keeps the stage on it.`);
    out('Commit that file, then deploy the stage as always (captcha key, alarm recipients), no table options:');
    out(`  pnpm run deploy -c stage=${stage}`);
    out(`Then fill the search engine from it: pnpm ops search:rebuild --stage ${stage} --restart`);
  } else {
    out('Start the local service on it:');
    out(`  SVC_TABLE_NAME=${name} pnpm start`);
    out(
      `Then fill the search engine from it (stop it first): SVC_TABLE_NAME=${name} pnpm ops search:rebuild --restart`,
    );
  }
  return { tableName: name, streamArn };
}

/** Describes the table until `ready` holds (a restore or an update in progress), at most an hour. */
async function until(
  dynamo: DynamoDBClient,
  name: string,
  pause: (ms: number) => Promise<void>,
  ready: (table: TableDescription) => boolean,
  what: string,
): Promise<TableDescription> {
  for (let attempt = 0; attempt < 360; attempt += 1) {
    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: name }));
    if (Table && ready(Table)) return Table;
    await pause(10_000);
  }
  throw new Error(`${name} is not ${what} after an hour`);
}

/** A new table as a restore makes it (keys and indexes, no stream, no TTL), with every item of `source`. */
async function copyAsRestored(dynamo: DynamoDBClient, source: string, target: string): Promise<number> {
  const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: source }));
  if (!Table?.KeySchema || !Table.AttributeDefinitions) throw new Error(`No table ${source}`);
  await dynamo.send(
    new CreateTableCommand({
      TableName: target,
      KeySchema: Table.KeySchema,
      AttributeDefinitions: Table.AttributeDefinitions,
      BillingMode: 'PAY_PER_REQUEST',
      ...(Table.GlobalSecondaryIndexes?.length
        ? {
            GlobalSecondaryIndexes: Table.GlobalSecondaryIndexes.map((index) => ({
              IndexName: index.IndexName,
              KeySchema: index.KeySchema,
              Projection: index.Projection,
            })),
          }
        : {}),
    }),
  );
  let copied = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamo.send(new ScanCommand({ TableName: source, ExclusiveStartKey: start }));
    const items = page.Items ?? [];
    for (let at = 0; at < items.length; at += 25) {
      let requests: WriteRequest[] = items.slice(at, at + 25).map((Item) => ({ PutRequest: { Item } }));
      while (requests.length > 0) {
        const written = await dynamo.send(new BatchWriteItemCommand({ RequestItems: { [target]: requests } }));
        requests = written.UnprocessedItems?.[target] ?? [];
      }
    }
    copied += items.length;
    start = page.LastEvaluatedKey;
  } while (start);
  return copied;
}
