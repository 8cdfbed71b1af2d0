import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, type Entity, INDEXES, isConditionFailure, KEY, tableName } from '@svc/table';

/**
 * `pnpm ops table:reindex`: writes the index keys the entities' descriptions give each stored
 * item, where the item lacks them or holds others. An index added to an entity (a supporter's
 * subscriptions, supporters by e-mail) covers items written after the change at once; this
 * brings the items stored before it in, without touching anything else of the item: one
 * UpdateItem per item that needs it, guarded by the version read (a writer in between wins and
 * its own write carries the keys), and `events` untouched, so nothing is announced again.
 * Safe to repeat: a second run finds nothing to write.
 */
export interface ReindexSummary {
  scanned: number;
  updated: number;
  /** Items changed by a writer while they were read (that write set their keys). */
  skipped: number;
}

const INDEX_ATTRIBUTES = Object.values(INDEXES).flatMap((index) => [index.partition, index.sort]);

/**
 * An entity to reindex, and how a stored record is completed before its keys are computed (the
 * supporter's e-mail hash, which items stored before the e-mail index lack: the hash is written
 * with the keys).
 */
export interface Reindexed {
  // biome-ignore lint/suspicious/noExplicitAny: entities of any record type, read through their own parse
  entity: Entity<any, any>;
  // biome-ignore lint/suspicious/noExplicitAny: as above
  prepare?: (record: any) => Promise<any>;
}

export async function reindexEntities(
  // biome-ignore lint/suspicious/noExplicitAny: as above
  entities: ReadonlyArray<Entity<any, any> | Reindexed>,
  onPage: (summary: ReindexSummary) => void = () => {},
): Promise<ReindexSummary> {
  const bySort = new Map(
    entities.map((given) => {
      const reindexed = 'entity' in given ? given : { entity: given };
      return [reindexed.entity.description.sort as string, reindexed];
    }),
  );
  const sorts = [...bySort.keys()];
  const summary: ReindexSummary = { scanned: 0, updated: 0, skipped: 0 };
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await db().send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: `#sk IN (${sorts.map((_, i) => `:s${i}`).join(', ')})`,
        ExpressionAttributeNames: { '#sk': KEY.sort },
        ExpressionAttributeValues: Object.fromEntries(sorts.map((sort, i) => [`:s${i}`, sort])),
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      const reindexed = bySort.get(String(item[KEY.sort]));
      const prefix = reindexed?.entity.description.prefix;
      if (!reindexed || !String(item[KEY.partition]).startsWith(`${prefix}#`)) continue;
      summary.scanned += 1;
      const outcome = await reindexItem(reindexed, item);
      if (outcome === 'updated') summary.updated += 1;
      if (outcome === 'skipped') summary.skipped += 1;
    }
    onPage(summary);
    start = page.LastEvaluatedKey as Record<string, AttributeValue> | undefined;
  } while (start);
  return summary;
}

async function reindexItem(
  { entity, prepare }: Reindexed,
  item: Record<string, unknown>,
): Promise<'updated' | 'skipped' | 'current'> {
  const record = entity.fromItem(item);
  const completed = prepare ? await prepare(record) : record;
  // What the completion added to the record (the e-mail hash) is written beside the keys.
  const added = Object.entries(completed as Record<string, unknown>).filter(
    ([name, value]) => typeof value === 'string' && item[name] !== value && !(name in (record as object)),
  );
  const wanted = { ...Object.fromEntries(added), ...entity.indexKeys(completed) };
  const set = Object.entries(wanted).filter(([name, value]) => item[name] !== value);
  const remove = INDEX_ATTRIBUTES.filter((name) => name in item && !(name in wanted));
  if (set.length === 0 && remove.length === 0) return 'current';
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const clauses: string[] = [];
  if (set.length > 0) {
    clauses.push(
      `SET ${set
        .map(([name, value], i) => {
          names[`#a${i}`] = name;
          values[`:a${i}`] = value;
          return `#a${i} = :a${i}`;
        })
        .join(', ')}`,
    );
  }
  if (remove.length > 0) {
    clauses.push(
      `REMOVE ${remove
        .map((name, i) => {
          names[`#r${i}`] = name;
          return `#r${i}`;
        })
        .join(', ')}`,
    );
  }
  const version = entity.description.version;
  const guard =
    version && item[version] !== undefined
      ? (() => {
          names['#version'] = version;
          values[':version'] = item[version];
          return '#version = :version';
        })()
      : `attribute_exists(${KEY.partition})`;
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: { [KEY.partition]: item[KEY.partition], [KEY.sort]: item[KEY.sort] },
        UpdateExpression: clauses.join(' '),
        ConditionExpression: guard,
        ExpressionAttributeNames: names,
        ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
      }),
    );
    return 'updated';
  } catch (error) {
    if (isConditionFailure(error)) return 'skipped';
    throw error;
  }
}
