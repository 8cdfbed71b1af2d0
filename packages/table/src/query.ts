import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { definedFields } from '@svc/core';
import { db } from './client';
import { INDEXES, type IndexName, KEY, tableName } from './definition';

/** One partition of the table or of an index, optionally narrowed by a sort-key prefix. */
export interface PartitionQuery {
  index?: IndexName;
  partition: string;
  sortBeginsWith?: string;
  /** Only items whose sort key is at least this (ignored with sortBeginsWith). */
  sortFrom?: string;
  /** Only items whose sort key is below this (ignored with sortBeginsWith; sortFrom ignored with it). */
  sortBefore?: string;
  /** Strongly consistent (table only; indexes are eventually consistent). */
  consistent?: boolean;
  descending?: boolean;
  /** Read at most this many items. */
  limit?: number;
  /** At most this many items per call (a page), when less than what is left of `limit`. */
  pageLimit?: number;
}

/** The partition's items page by page (1 MB each at most), so callers can stream them. */
export async function* queryPages(query: PartitionQuery): AsyncGenerator<Record<string, unknown>[]> {
  const keys = query.index ? INDEXES[query.index] : { partition: KEY.partition, sort: KEY.sort };
  let cursor: Record<string, unknown> | undefined;
  let read = 0;
  do {
    const remaining = query.limit === undefined ? undefined : query.limit - read;
    if (remaining !== undefined && remaining <= 0) return;
    const pageLimit = query.pageLimit === undefined ? remaining : Math.min(query.pageLimit, remaining ?? Infinity);
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        ...(query.index ? { IndexName: INDEXES[query.index].name } : {}),
        ...keyCondition(query, keys),
        ...(query.consistent ? { ConsistentRead: true } : {}),
        ...(query.descending ? { ScanIndexForward: false } : {}),
        ...definedFields({ Limit: pageLimit }),
        ExclusiveStartKey: cursor,
      }),
    );
    const items = out.Items ?? [];
    read += items.length;
    yield items;
    cursor = out.LastEvaluatedKey;
  } while (cursor);
}

export async function queryAll(query: PartitionQuery): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const page of queryPages(query)) items.push(...page);
  return items;
}

function keyCondition(query: PartitionQuery, keys: { partition: string; sort: string }) {
  const names = { '#pk': keys.partition, '#sk': keys.sort };
  if (query.sortBeginsWith !== undefined) {
    return {
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :sort)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':pk': query.partition, ':sort': query.sortBeginsWith },
    };
  }
  if (query.sortBefore !== undefined) {
    return {
      KeyConditionExpression: '#pk = :pk AND #sk < :before',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':pk': query.partition, ':before': query.sortBefore },
    };
  }
  if (query.sortFrom !== undefined) {
    return {
      KeyConditionExpression: '#pk = :pk AND #sk >= :sort',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':pk': query.partition, ':sort': query.sortFrom },
    };
  }
  return {
    KeyConditionExpression: '#pk = :pk',
    ExpressionAttributeNames: { '#pk': keys.partition },
    ExpressionAttributeValues: { ':pk': query.partition },
  };
}
