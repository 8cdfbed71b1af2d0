import { ConflictError } from '@svc/core';
import { getItem, getRecentItem } from './batch-get';
import { INDEXES, type IndexName, KEY } from './definition';
import type { ItemKey } from './keys';
import { type GuardedWrite, type TransactItem, versioned } from './transact';

/**
 * One description per item type: what it is, how its key is made, which index serves which access
 * pattern, how the record is stored and which attribute guards its writes. Everything else is made
 * from it: the item's keys, `item`/`fromItem`, the new and versioned writes, the IAM leading keys
 * of its partitions (infra/constructs/table-access.ts) and the access-pattern tables of
 * docs/access-patterns.md (`pnpm docs:entities`).
 *
 * Modelled on ElectroDB's entities (a schema, a key template per index, the access pattern as the
 * index's name), without taking ElectroDB itself: its key templates are strings it parses, its
 * items carry its own `__edb_*` attributes and its writes go through its own client, while ours
 * must keep the stored shape every existing item has, write through `transactWrite` (the write
 * listeners, one error per failed condition) and let records be kept as one JSON document. See
 * docs/access-patterns.md.
 */
export interface EntityDescription<Record, Id> {
  /** The item's `entity` attribute; the stream and the search projections tell items apart by it. */
  name: string;
  /** What the item is, in one line (the docs' heading). */
  summary: string;
  /** The partition key's first part: every key of this entity is `<prefix>#…`. */
  prefix: string;
  /** One item of its kind: its partition key is the prefix alone (no id parts). */
  single?: boolean;
  /** How the id is shown in the docs' key column, e.g. `<uuid>`. */
  idShown: string;
  /** The sort key of the item in its partition: one for every item, or made from the id. */
  sort: string | ((id: Id) => string);
  /** How a sort key made from the id is shown in the docs, e.g. `INVOICE#<uuid>`. */
  sortShown?: string;
  /** The parts after the prefix that name one item. */
  id: (record: Record) => Id;
  /** The key parts of an id (the prefix goes first). */
  idParts: (id: Id) => ReadonlyArray<string | number>;
  /** Its table access pattern (by key), as the docs say it. */
  byKey: string;
  /** Index keys, each with the access pattern it serves; absent keys keep the item out (sparse). */
  indexes?: ReadonlyArray<EntityIndex<Record>>;
  /** The attribute every write is guarded by (read, then written only if unchanged). */
  version?: keyof Record & string;
  /** How the record is kept: its fields as attributes (default), or as one JSON document. */
  storage?: EntityStorage<Record>;
  /** Validates a stored item (after `storage.fromAttributes`). */
  parse: (value: unknown) => Record;
}

export interface EntityIndex<Record> {
  index: IndexName;
  /** The access pattern it serves, as the docs say it. */
  pattern: string;
  /** The keys as the docs show them, e.g. `gsi1pk = ORG#<org uuid>#SUPPORTERS, gsi1sk = <created>#<uuid>`. */
  shown: string;
  /** The record's keys on the index, or undefined to leave it out. */
  keys: (record: Record) => { partition: string; sort: string } | undefined;
}

export interface EntityStorage<Record> {
  /** The stored attributes besides keys and `entity`. */
  toAttributes: (record: Record) => { [name: string]: unknown };
  /** The record's fields back from a stored item. */
  fromAttributes: (item: { [name: string]: unknown }) => unknown;
}

export interface Entity<Record, Id> {
  readonly description: EntityDescription<Record, Id>;
  /** The item's key. */
  key(id: Id): ItemKey;
  /** The record's keys on the indexes that hold it (attribute name → value). */
  indexKeys(record: Record): { [name: string]: string };
  /** The stored item: keys, index keys, `entity` and the record's attributes. */
  item(record: Record): { [name: string]: unknown };
  /** The record of a stored item (also a stream image). */
  fromItem(item: { [name: string]: unknown }): Record;
  /** Strongly consistent, coalesced with the other reads of the turn. */
  find(id: Id): Promise<Record | undefined>;
  /** As `find`, through the container's memo of hot reads (getRecentItem: read-only paths only). */
  findRecent(id: Id): Promise<Record | undefined>;
  /** A new item, never over another: a taken key is `conflict` (409 by default). */
  create(record: Record, conflict?: () => Error): GuardedWrite;
  /** The item replaced only if still at `readVersion` (StaleVersionError otherwise). */
  replace(record: Record, readVersion: number): GuardedWrite;
  /** `create` without a read version, `replace` with one: the write alone, for a transaction. */
  put(record: Record, readVersion?: number): TransactItem;
  /** IAM `dynamodb:LeadingKeys` patterns of its partitions. */
  readonly leadingKeys: readonly string[];
  /** Its access patterns: [pattern, index, key] rows for the docs. */
  readonly accessPatterns: ReadonlyArray<readonly [string, string, string]>;
}

const plainStorage = {
  toAttributes: (record: unknown) => record as { [name: string]: unknown },
  fromAttributes: (item: unknown) => item,
};

export function defineEntity<Record, Id>(description: EntityDescription<Record, Id>): Entity<Record, Id> {
  const { prefix, sort, indexes = [], storage = plainStorage } = description;
  // KEY.partition and KEY.sort are `pk` and `sk` (definition.ts).
  const key = (id: Id): ItemKey => ({
    pk: description.single ? prefix : [prefix, ...description.idParts(id)].join('#'),
    sk: typeof sort === 'string' ? sort : sort(id),
  });
  const version = description.version;
  const indexKeys = (record: Record): { [name: string]: string } =>
    Object.fromEntries(
      indexes.flatMap(({ index, keys }) => {
        const found = keys(record);
        if (!found) return [];
        return [
          [INDEXES[index].partition, found.partition],
          [INDEXES[index].sort, found.sort],
        ];
      }),
    );
  const item = (record: Record) => ({
    ...storage.toAttributes(record),
    ...key(description.id(record)),
    entity: description.name,
    ...indexKeys(record),
  });
  const fromItem = (stored: { [name: string]: unknown }) => description.parse(storage.fromAttributes(stored));
  const create = (
    record: Record,
    conflict = () => new ConflictError(`This ${description.name.replaceAll('_', ' ')} already exists`),
  ): GuardedWrite => ({
    item: { Put: { Item: item(record), ConditionExpression: `attribute_not_exists(${KEY.partition})` } },
    onConditionFailed: conflict,
  });
  const replace = (record: Record, readVersion: number): GuardedWrite => {
    if (!version) throw new Error(`The ${description.name} entity has no version attribute to guard a replace`);
    return versioned({
      Put: {
        Item: item(record),
        ConditionExpression: '#version = :read',
        ExpressionAttributeNames: { '#version': version },
        ExpressionAttributeValues: { ':read': readVersion },
      },
    });
  };
  return {
    description,
    key,
    item,
    fromItem,
    async find(id) {
      const found = await getItem(key(id));
      return found ? fromItem(found) : undefined;
    },
    async findRecent(id) {
      const found = await getRecentItem(key(id));
      return found ? fromItem(found) : undefined;
    },
    indexKeys,
    create,
    replace,
    put: (record, readVersion) => (readVersion === undefined ? create(record) : replace(record, readVersion)).item,
    leadingKeys: description.single ? [prefix] : [`${prefix}#*`],
    accessPatterns: [
      [
        description.byKey,
        'table',
        `pk = ${description.single ? prefix : `${prefix}#${description.idShown}`}, sk = ${typeof sort === 'string' ? sort : (description.sortShown ?? '…')}`,
      ],
      ...indexes.map(({ pattern, index, shown }) => [pattern, index, shown] as const),
    ],
  };
}

/**
 * Storage as one JSON document beside the version and the events of the write: for records that
 * are always written whole and read whole (payments, subscriptions, invoices). One attribute
 * instead of thirty nested ones makes a full read several times cheaper to store, send and decode.
 */
export function documentStorage<Record extends { version: number; events: unknown }>(): EntityStorage<Record> {
  return {
    toAttributes: ({ version, events, ...document }) => ({ version, events, document: JSON.stringify(document) }),
    fromAttributes: (item) => {
      if (typeof item.document !== 'string') throw new Error('A stored document item has no document');
      return { ...JSON.parse(item.document), version: item.version, events: item.events };
    },
  };
}

/** The usual id: the record's `uuid`, the key's one part after the prefix. */
export function byUuid(): {
  idShown: string;
  id: (record: { uuid: string }) => string;
  idParts: (uuid: string) => string[];
} {
  return { idShown: '<uuid>', id: (record) => record.uuid, idParts: (uuid) => [uuid] };
}

/** What the docs and the IAM grants read of any entity, whatever its record. */
export interface DescribedEntity {
  readonly description: { readonly name: string; readonly summary: string; readonly version?: string };
  readonly leadingKeys: readonly string[];
  readonly accessPatterns: ReadonlyArray<readonly [string, string, string]>;
}

/** The access-pattern table of each entity, as markdown (docs/access-patterns.md). */
export function accessPatternsMarkdown(entities: ReadonlyArray<DescribedEntity>): string {
  const sections = [...entities]
    .sort((a, b) => a.description.name.localeCompare(b.description.name))
    .map(({ description, accessPatterns, leadingKeys }) => {
      const rows = accessPatterns.map(([pattern, index, key]) => `| ${pattern} | ${index} | \`${key}\` |`);
      return [
        `## ${description.name}`,
        '',
        `${description.summary} Writes guarded by: ${description.version ? `\`${description.version}\`` : 'their conditions'}. IAM leading keys: ${leadingKeys.map((k) => `\`${k}\``).join(', ')}.`,
        '',
        '| pattern | index | key |',
        '| --- | --- | --- |',
        ...rows,
      ].join('\n');
    });
  return `${sections.join('\n\n')}\n`;
}
