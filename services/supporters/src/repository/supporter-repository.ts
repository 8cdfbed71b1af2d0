import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError, definedFields, isUuid } from '@svc/core';
import {
  byUuid,
  db,
  defineEntity,
  isConditionFailure,
  key,
  queryMerged,
  shardedPartition,
  shardPartitions,
  type TransactItem,
  tableName,
  transactWrite,
} from '@svc/table';
import { type Supporter, type SupporterField, type SupporterFields, supporterSchema } from '../domain/supporter';

/**
 * Shards of an organisation's supporter list. 5,000 new supporters a second of one write unit
 * each on gsi1 is five partitions' worth; 32 leaves each shard at about 160 a second, and keeps
 * the hottest well under 1/16 of an organisation's writes (the write-heat check).
 */
export const SUPPORTER_SHARDS = 32;

/** The unsharded key: supporters stored before the shards were introduced are still under it. */
const organisationPartition = (organisationUuid: string) => key('ORG', organisationUuid, 'SUPPORTERS');

/**
 * Supporters (donor records). A supporter belongs to an organisation, never to an account. The
 * index sort key orders an organisation's supporters by creation, so the default list order pages
 * straight from the index. `organisation_uuid` and `created` never change, so neither do the index
 * keys.
 */
export const SUPPORTER = defineEntity<Supporter, string>({
  name: 'supporter',
  summary: 'A donor record of an organisation.',
  prefix: 'SUPPORTER',
  ...byUuid(),
  sort: 'SUPPORTER',
  byKey: 'supporter by uuid',
  indexes: [
    {
      index: 'gsi1',
      pattern: 'supporters of an organisation, by creation',
      shown: `gsi1pk = ORG#<org uuid>#SUPPORTERS#<shard 0-${SUPPORTER_SHARDS - 1}>, gsi1sk = <created, 12 digits>#<uuid>`,
      keys: (supporter) => ({
        partition: shardedPartition(
          organisationPartition(supporter.organisation_uuid),
          supporter.uuid,
          SUPPORTER_SHARDS,
        ),
        sort: key(String(supporter.created).padStart(12, '0'), supporter.uuid),
      }),
    },
  ],
  // Parsed again so a record built elsewhere (the payments domain) stores only supporter fields.
  storage: { toAttributes: (supporter) => supporterSchema.parse(supporter), fromAttributes: (item) => item },
  parse: (item) => supporterSchema.parse(item),
});

/** Updates touch only a supporter that exists, in the organisation the caller was checked against. */
const EXISTS_IN_ORGANISATION = 'attribute_exists(pk) AND organisation_uuid = :organisation_uuid';

/** Strongly consistent, coalesced with the other reads of the same turn (the caller's grants). */
export async function findSupporter(uuid: string): Promise<Supporter | undefined> {
  // Anything but a uuid cannot name a supporter; it never reaches the table as a key.
  if (!isUuid(uuid)) return undefined;
  return SUPPORTER.find(uuid.toLowerCase());
}

/** The write of a new supporter, for a caller's own transaction (a payment with its supporter). */
export function supporterWrite(supporter: Supporter): TransactItem {
  return SUPPORTER.create(supporter).item;
}

/** Stores a new supporter on its own (409 should its uuid be taken). */
export async function insertSupporter(supporter: Supporter): Promise<void> {
  await transactWrite([
    SUPPORTER.create(supporter, () => new ConflictError('A supporter with this uuid already exists')),
  ]);
}

/**
 * Sets and removes only the fields named, in one UpdateItem: concurrent updates of different
 * fields all land (no read-modify-write). Undefined when the supporter is gone.
 */
export async function updateSupporterFields(
  current: Pick<Supporter, 'uuid' | 'organisation_uuid'>,
  set: SupporterFields,
  remove: readonly SupporterField[],
): Promise<Supporter | undefined> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':organisation_uuid': current.organisation_uuid };
  const assignments = Object.entries(set).map(([field, value], index) => {
    names[`#s${index}`] = field;
    values[`:s${index}`] = value;
    return `#s${index} = :s${index}`;
  });
  const removals = remove.map((field, index) => {
    names[`#r${index}`] = field;
    return `#r${index}`;
  });
  const clauses = [
    ...(assignments.length > 0 ? [`SET ${assignments.join(', ')}`] : []),
    ...(removals.length > 0 ? [`REMOVE ${removals.join(', ')}`] : []),
  ];
  if (clauses.length === 0) return findSupporter(current.uuid);
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: SUPPORTER.key(current.uuid),
        UpdateExpression: clauses.join(' '),
        ConditionExpression: EXISTS_IN_ORGANISATION,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return supporterSchema.parse(out.Attributes);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

export interface OrganisationPage {
  /** Read at most this many (all when absent). */
  limit?: number;
  newestFirst: boolean;
}

/** An organisation's supporters in creation order (then uuid), from the index. */
export async function listSupportersOfOrganisation(
  organisationUuid: string,
  { limit, newestFirst }: OrganisationPage,
): Promise<Supporter[]> {
  const items = await queryMerged({
    index: 'gsi1',
    partitions: shardPartitions(organisationPartition(organisationUuid), SUPPORTER_SHARDS, { legacy: true }),
    descending: newestFirst,
    ...definedFields({ limit }),
  });
  const supporters = items.map((item) => supporterSchema.parse(item));
  return supporters;
}
