import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { db, INDEXES, KEY, tableName } from '@svc/table';
import type { DynamoDBRecord } from 'aws-lambda';
import { shardIterator, streamRecords, streamShardIds } from '../../apps/local/src/stream-reader';

/**
 * The write heat of a burst: every write's partition keys on the table and on each index, with
 * the write units DynamoDB bills for it, from the table's stream (new and old images: exactly
 * what was written, whatever expression wrote it) joined with the calls that wrote it (which code,
 * and whether in a transaction). The write-heat check (test/write-heat.test.ts) and the telethon
 * bench (bench/telethon.ts) hold the hottest key's share of each index against 1/16.
 *
 * Units, as DynamoDB bills them:
 * - Item size: attribute names plus values (strings as UTF-8, numbers about one byte per two
 *   digits plus one, maps and lists 3 bytes plus 1 per element)
 *   (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
 * - A write of the table takes 1 unit per KB (rounded up) of the larger of the item before and
 *   after; in a transaction, twice that
 *   (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#write-operation-consumption).
 * - An index entry is the table's key, the index's key and the projected attributes, plus 100
 *   bytes; putting, deleting or updating one is a write of the index, and a key change is a delete
 *   and a put; a change to attributes the index does not project writes nothing to it
 *   (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations).
 *   We bill index writes once, also for transactions: the documentation doubles the table's
 *   transactional writes only; where it is silent we count the cheaper, so the heat seen is not
 *   inflated on the indexes.
 */
export type Space = 'table' | keyof typeof INDEXES;
export const SPACES: readonly Space[] = ['table', ...(Object.keys(INDEXES) as Array<keyof typeof INDEXES>)];

export interface WriteCall {
  pk: string;
  sk: string;
  transactional: boolean;
  /** The first frame of our code outside @svc/table that made the call. */
  site: string;
}

export interface KeyHeat {
  space: Space;
  key: string;
  units: number;
  writes: number;
  share: number;
  /** The `entity` attributes of the items written under it. */
  entities: string[];
  /** The code that wrote them. */
  sites: string[];
}

export interface SpaceHeat {
  space: Space;
  units: number;
  writes: number;
  keys: number;
  /** Units by the `entity` of the items written. */
  byEntity: Record<string, number>;
  /** Hottest first. */
  hottest: KeyHeat[];
}

type Image = Record<string, unknown>;

/**
 * Records every successful write the table client sends until `stop`: the items' keys, the
 * calling code and whether it was a transaction.
 */
export function recordWriteCalls(): { calls: WriteCall[]; reads: Map<string, number>; stop: () => void } {
  const client = db();
  const original = client.send.bind(client);
  const calls: WriteCall[] = [];
  const reads = new Map<string, number>();
  const patched = async (command: unknown, ...rest: unknown[]) => {
    const site = callSite(new Error().stack ?? '');
    // biome-ignore lint/suspicious/noExplicitAny: the document client's send is overloaded
    const result = await (original as any)(command, ...rest);
    const sent = command as { constructor: { name: string }; input: Record<string, unknown> };
    calls.push(...writesOf(sent, site));
    for (const key of readKeysOf(sent)) reads.set(key, (reads.get(key) ?? 0) + 1);
    return result;
  };
  client.send = patched as typeof client.send;
  return {
    calls,
    reads,
    stop: () => {
      client.send = original as typeof client.send;
    },
  };
}

/**
 * The partition keys a read names (point reads, batches, queries on the table or an index: the
 * query's `:pk`), for the read heat: how often each key is read, whatever the read's size.
 */
function readKeysOf(command: { constructor: { name: string }; input: Record<string, unknown> }): string[] {
  const name = command.constructor.name.replace(/Command$/, '');
  const input = command.input;
  if (name === 'Get') return [String((input.Key as Record<string, unknown>)?.[KEY.partition])];
  if (name === 'BatchGet') {
    return Object.values(input.RequestItems as Record<string, { Keys: Array<Record<string, unknown>> }>).flatMap(
      (request) => request.Keys.map((key) => String(key[KEY.partition])),
    );
  }
  if (name === 'Query') {
    const values = input.ExpressionAttributeValues as Record<string, unknown> | undefined;
    return [`${typeof input.IndexName === 'string' ? `${input.IndexName}:` : ''}${String(values?.[':pk'])}`];
  }
  return [];
}

function writesOf(
  command: { constructor: { name: string }; input: Record<string, unknown> },
  site: string,
): WriteCall[] {
  const name = command.constructor.name.replace(/Command$/, '');
  const keyOf = (body: Record<string, unknown>) => {
    const key = (body.Key ?? body.Item) as Record<string, unknown> | undefined;
    return { pk: String(key?.[KEY.partition]), sk: String(key?.[KEY.sort]) };
  };
  const input = command.input;
  if (name === 'Put' || name === 'Update' || name === 'Delete')
    return [{ ...keyOf(input), transactional: false, site }];
  if (name === 'TransactWrite') {
    return (input.TransactItems as Array<Record<string, Record<string, unknown>>>).flatMap((item) => {
      const body = item.Put ?? item.Update ?? item.Delete;
      return body ? [{ ...keyOf(body), transactional: true, site }] : [];
    });
  }
  if (name === 'BatchWrite') {
    return Object.values(input.RequestItems as Record<string, Array<Record<string, Record<string, unknown>>>>).flatMap(
      (requests) =>
        requests.map((request) => ({
          ...keyOf((request.PutRequest ?? request.DeleteRequest) as Record<string, unknown>),
          transactional: false,
          site,
        })),
    );
  }
  return [];
}

/** `services/webhooks/src/domain/delivery.ts:123 (claimFirstAttempt)`: the writer, not the table package. */
function callSite(stack: string): string {
  for (const line of stack.split('\n').slice(1)) {
    const match = /at (?:(?:async )?([^\s(]+) \()?.*?\/((?:services|packages|apps)\/[^:)]+):(\d+)/.exec(line);
    if (!match || match[2]?.startsWith('packages/table/') || match[2]?.includes('node_modules')) continue;
    return `${match[2]}:${match[3]}${match[1] ? ` (${match[1]})` : ''}`;
  }
  return 'unknown';
}

/** Every record the current table's stream holds, in order per shard. */
export async function readTableStream(): Promise<DynamoDBRecord[]> {
  const table = await db().send(new DescribeTableCommand({ TableName: tableName() }));
  const arn = table.Table?.LatestStreamArn;
  if (!arn) throw new Error('The table has no stream');
  const records: DynamoDBRecord[] = [];
  for (const shardId of await streamShardIds(arn)) {
    let iterator = await shardIterator(arn, shardId);
    while (iterator) {
      const page = await streamRecords(iterator);
      records.push(...page.records);
      if (page.records.length === 0) break;
      iterator = page.next;
    }
  }
  return records;
}

/** The stream's sequence number that every later record is above (to measure from a point on). */
export function lastSequence(records: readonly DynamoDBRecord[]): bigint {
  return records.reduce((max, r) => {
    const n = BigInt(r.dynamodb?.SequenceNumber ?? '0');
    return n > max ? n : max;
  }, 0n);
}

/** Size of one attribute value (DynamoDB JSON) as DynamoDB counts it. */
function valueSize(value: unknown): number {
  const v = value as Record<string, unknown>;
  if ('S' in v) return Buffer.byteLength(String(v.S));
  if ('N' in v) {
    const digits = String(v.N).replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
    return Math.ceil(Math.max(1, digits.length) / 2) + 1;
  }
  if ('B' in v) return Buffer.from(String(v.B), 'base64').length;
  if ('BOOL' in v || 'NULL' in v) return 1;
  if ('L' in v) return 3 + (v.L as unknown[]).reduce<number>((sum, element) => sum + 1 + valueSize(element), 0);
  if ('M' in v) return 3 + imageSize(v.M as Image) + Object.keys(v.M as Image).length;
  if ('SS' in v) return (v.SS as string[]).reduce((sum, s) => sum + Buffer.byteLength(s), 0);
  if ('NS' in v) return (v.NS as string[]).reduce((sum, n) => sum + valueSize({ N: n }), 0);
  if ('BS' in v) return (v.BS as string[]).reduce((sum, b) => sum + Buffer.from(b, 'base64').length, 0);
  return 0;
}

export function imageSize(image: Image | undefined): number {
  if (!image) return 0;
  return Object.entries(image).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueSize(value), 0);
}

const units = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
const text = (image: Image | undefined, name: string) => {
  const value = image?.[name] as { S?: string } | undefined;
  return value?.S;
};

/** An index entry's size: the table's key, the index's key, the projected attributes, 100 bytes. */
function entrySize(image: Image, index: (typeof INDEXES)[keyof typeof INDEXES]): number {
  if (index.projection === 'ALL') return imageSize(image) + 100;
  const keys = [KEY.partition, KEY.sort, index.partition, index.sort];
  return imageSize(Object.fromEntries(keys.map((name) => [name, image[name]]))) + 100;
}

interface Write {
  space: Space;
  key: string;
  units: number;
  entity: string;
  site: string;
}

/** The writes a stream record stands for: the table's, and each index's. */
function writesOfRecord(record: DynamoDBRecord, call: WriteCall | undefined): Write[] {
  const newImage = record.dynamodb?.NewImage as Image | undefined;
  const oldImage = record.dynamodb?.OldImage as Image | undefined;
  const either = (newImage ?? oldImage) as Image;
  const entity = text(either, 'entity') ?? '?';
  const site = call?.site ?? 'unknown (no recorded call: written outside the table client, or before recording)';
  const tableUnits = units(Math.max(imageSize(newImage), imageSize(oldImage))) * (call?.transactional ? 2 : 1);
  const writes: Write[] = [
    { space: 'table', key: text(either, KEY.partition) ?? '?', units: tableUnits, entity, site },
  ];
  for (const [space, index] of Object.entries(INDEXES) as Array<[Space, (typeof INDEXES)[keyof typeof INDEXES]]>) {
    const before = oldImage && text(oldImage, index.partition) !== undefined ? oldImage : undefined;
    const after = newImage && text(newImage, index.partition) !== undefined ? newImage : undefined;
    const keyOf = (image: Image) => `${text(image, index.partition)}\u0000${text(image, index.sort)}`;
    const sameKey = before && after && keyOf(before) === keyOf(after);
    if (before && (!after || !sameKey)) {
      writes.push({
        space,
        key: text(before, index.partition) as string,
        units: units(entrySize(before, index)),
        entity,
        site,
      });
    }
    if (after && (!before || !sameKey)) {
      writes.push({
        space,
        key: text(after, index.partition) as string,
        units: units(entrySize(after, index)),
        entity,
        site,
      });
    } else if (after && sameKey && JSON.stringify(entryOf(before, index)) !== JSON.stringify(entryOf(after, index))) {
      writes.push({
        space,
        key: text(after, index.partition) as string,
        units: units(entrySize(after, index)),
        entity,
        site,
      });
    }
  }
  return writes;
}

function entryOf(image: Image | undefined, index: (typeof INDEXES)[keyof typeof INDEXES]): unknown {
  if (!image) return undefined;
  if (index.projection === 'ALL') return image;
  return [KEY.partition, KEY.sort, index.partition, index.sort].map((name) => image[name]);
}

/**
 * The heat of each space (table, gsi1, gsi2, due) over the stream records after `after`: units
 * per partition key, hottest first, each with its share of that space's units, the entities
 * written under it and the code that wrote them.
 */
export function heatOf(records: readonly DynamoDBRecord[], calls: readonly WriteCall[], after = 0n): SpaceHeat[] {
  const queues = new Map<string, WriteCall[]>();
  for (const call of calls) {
    const id = `${call.pk}\u0000${call.sk}`;
    const queue = queues.get(id) ?? [];
    queue.push(call);
    queues.set(id, queue);
  }
  const byEntity = new Map<Space, Map<string, number>>();
  const perKey = new Map<
    string,
    { space: Space; key: string; units: number; writes: number; entities: Set<string>; sites: Set<string> }
  >();
  for (const record of records) {
    if (BigInt(record.dynamodb?.SequenceNumber ?? '0') <= after) continue;
    const keys = record.dynamodb?.Keys as Image | undefined;
    const id = `${text(keys, KEY.partition)}\u0000${text(keys, KEY.sort)}`;
    const call = queues.get(id)?.shift();
    for (const write of writesOfRecord(record, call)) {
      const entities = byEntity.get(write.space) ?? new Map<string, number>();
      entities.set(write.entity, (entities.get(write.entity) ?? 0) + write.units);
      byEntity.set(write.space, entities);
      const slot = `${write.space}\u0000${write.key}`;
      const heat = perKey.get(slot) ?? {
        space: write.space,
        key: write.key,
        units: 0,
        writes: 0,
        entities: new Set<string>(),
        sites: new Set<string>(),
      };
      heat.units += write.units;
      heat.writes += 1;
      heat.entities.add(write.entity);
      heat.sites.add(write.site);
      perKey.set(slot, heat);
    }
  }
  return SPACES.map((space) => {
    const keys = [...perKey.values()].filter((heat) => heat.space === space);
    const total = keys.reduce((sum, heat) => sum + heat.units, 0);
    const hottest = keys
      .sort((a, b) => b.units - a.units)
      .map((heat) => ({
        space,
        key: heat.key,
        units: heat.units,
        writes: heat.writes,
        share: total === 0 ? 0 : heat.units / total,
        entities: [...heat.entities],
        sites: [...heat.sites],
      }));
    return {
      space,
      units: total,
      writes: keys.reduce((sum, heat) => sum + heat.writes, 0),
      keys: keys.length,
      byEntity: Object.fromEntries([...(byEntity.get(space) ?? new Map())].sort((a, b) => b[1] - a[1])),
      hottest,
    };
  });
}

/** A readable account of a space's hottest keys (the check's failure message, the bench's output). */
export function describeHeat(heat: SpaceHeat, top = 5): string {
  const lines = heat.hottest
    .slice(0, top)
    .map(
      (key) =>
        `  ${(key.share * 100).toFixed(2)}% ${key.units} units in ${key.writes} writes  ${key.key}  [${key.entities.join(', ')}]\n` +
        key.sites.map((site) => `      written by ${site}`).join('\n'),
    );
  return `${heat.space}: ${heat.units} units, ${heat.writes} writes over ${heat.keys} keys\n${lines.join('\n')}`;
}
