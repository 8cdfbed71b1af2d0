import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError, definedFields, isUuid, keyedHash } from '@svc/core';
import {
  byUuid,
  db,
  defineEntity,
  INDEXES,
  isConditionFailure,
  key,
  queryAll,
  queryMerged,
  shardedPartition,
  shardPartitions,
  type TransactItem,
  tableName,
  timeKey,
  transactWrite,
} from '@svc/table';
import * as z from 'zod';
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
 * The keyed hash (the stage's hash key, purpose `supporter_email`) a supporter is found by its
 * e-mail with: trimmed and lower-cased first, so the address matches whatever its case. The
 * index keys carry this, never the address itself.
 */
export const supporterEmailHash = (email: string) => keyedHash('supporter_email', email.trim().toLowerCase());

/** The e-mail index's partition: one organisation's supporters with one address. */
const emailPartition = (organisationUuid: string, emailHash: string) =>
  key('ORG', organisationUuid, 'SUPPORTER_EMAIL', emailHash);

/** Its sort key: by creation, so the newest supporter with an address is read first. */
const emailSort = (created: number, uuid: string) => key(timeKey(created), uuid);

/**
 * A supporter as stored: the record, and the keyed hash of its e-mail that its e-mail index keys
 * are made of (computed before each write: the hash is asynchronous, the index keys are not).
 * Kept as an attribute of its own so the keys can be made again from the stored item (`pnpm ops
 * table:reindex`); never part of the record the API answers (findSupporter leaves it out).
 */
const storedSupporterSchema = supporterSchema.extend({ email_hash: z.string().optional() });
type StoredSupporter = z.infer<typeof storedSupporterSchema>;

/**
 * Supporters (donor records). A supporter belongs to an organisation, never to an account. The
 * index sort key orders an organisation's supporters by creation, so the default list order pages
 * straight from the index. `organisation_uuid` and `created` never change, so neither do the gsi1
 * keys; the e-mail index's (gsi2, sparse: only supporters with an e-mail) change with the e-mail,
 * in the same UpdateItem (updateSupporterFields).
 */
export const SUPPORTER = defineEntity<StoredSupporter, string>({
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
    {
      index: 'gsi2',
      pattern: 'supporters of an organisation with one e-mail address, newest first (the donor portal’s login)',
      shown:
        'gsi2pk = ORG#<org uuid>#SUPPORTER_EMAIL#<keyed hash of the lower-cased e-mail>, gsi2sk = <created, 12 digits>#<uuid>',
      keys: (supporter) =>
        supporter.email_hash === undefined
          ? undefined
          : {
              partition: emailPartition(supporter.organisation_uuid, supporter.email_hash),
              sort: emailSort(supporter.created, supporter.uuid),
            },
    },
  ],
  // Parsed again so a record built elsewhere (the payments domain) stores only supporter fields.
  storage: { toAttributes: (supporter) => storedSupporterSchema.parse(supporter), fromAttributes: (item) => item },
  parse: (item) => storedSupporterSchema.parse(item),
});

/**
 * The record with its e-mail's hash, as SUPPORTER writes it (no e-mail: out of the e-mail index):
 * also what a tool that writes a stored supporter's index keys again needs first.
 */
export async function withEmailHash(supporter: Supporter): Promise<StoredSupporter> {
  const { email_hash: _old, ...record } = supporter as StoredSupporter;
  const email = record.email?.trim();
  return email ? { ...record, email_hash: await supporterEmailHash(email) } : record;
}

/** Updates touch only a supporter that exists, in the organisation the caller was checked against. */
const EXISTS_IN_ORGANISATION = 'attribute_exists(pk) AND organisation_uuid = :organisation_uuid';

/** Strongly consistent, coalesced with the other reads of the same turn (the caller's grants). */
export async function findSupporter(uuid: string): Promise<Supporter | undefined> {
  // Anything but a uuid cannot name a supporter; it never reaches the table as a key.
  if (!isUuid(uuid)) return undefined;
  const found = await SUPPORTER.find(uuid.toLowerCase());
  // The record alone: the e-mail's hash is the index's, not the supporter's.
  return found ? supporterSchema.parse(found) : undefined;
}

/** The write of a new supporter, for a caller's own transaction (a payment with its supporter). */
export async function supporterWrite(supporter: Supporter): Promise<TransactItem> {
  return SUPPORTER.create(await withEmailHash(supporter)).item;
}

/** Stores a new supporter on its own (409 should its uuid be taken). */
export async function insertSupporter(supporter: Supporter): Promise<void> {
  await transactWrite([
    SUPPORTER.create(
      await withEmailHash(supporter),
      () => new ConflictError('A supporter with this uuid already exists'),
    ),
  ]);
}

/**
 * The newest supporter of an organisation with this e-mail address (any case), from the e-mail
 * index. The index is eventually consistent and its key a hash: the address is compared again.
 */
export async function findSupporterByEmail(organisationUuid: string, email: string): Promise<Supporter | undefined> {
  const wanted = email.trim().toLowerCase();
  const items = await queryAll({
    index: 'gsi2',
    partition: emailPartition(organisationUuid, await supporterEmailHash(wanted)),
    descending: true,
    limit: 5,
  });
  return items
    .map((item) => supporterSchema.parse(item))
    .find(
      (supporter) =>
        supporter.organisation_uuid === organisationUuid && supporter.email?.trim().toLowerCase() === wanted,
    );
}

/**
 * For a caller's transaction: holds only while the supporter still has exactly this e-mail (as
 * stored), so a write made for that address (a portal link redeemed) fails once it changed.
 */
export function supporterEmailUnchanged(uuid: string, email: string): TransactItem {
  return {
    ConditionCheck: {
      Key: SUPPORTER.key(uuid),
      ConditionExpression: 'attribute_exists(pk) AND #email = :email',
      ExpressionAttributeNames: { '#email': 'email' },
      ExpressionAttributeValues: { ':email': email },
    },
  };
}

/**
 * Sets and removes only the fields named, in one UpdateItem: concurrent updates of different
 * fields all land (no read-modify-write). A changed e-mail moves the supporter in the e-mail
 * index in the same update (a removed one takes it out). Undefined when the supporter is gone.
 */
export async function updateSupporterFields(
  current: Pick<Supporter, 'uuid' | 'organisation_uuid' | 'created'>,
  set: SupporterFields,
  remove: readonly SupporterField[],
): Promise<Supporter | undefined> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':organisation_uuid': current.organisation_uuid };
  // The e-mail index's keys follow the e-mail: set with a new one, removed with it.
  const email = set.email?.trim();
  const emailGone = remove.includes('email') || (set.email !== undefined && !email);
  const emailIndex = INDEXES.gsi2;
  let indexed: Array<[string, unknown]> = [];
  if (email) {
    const hash = await supporterEmailHash(email);
    indexed = [
      ['email_hash', hash],
      [emailIndex.partition, emailPartition(current.organisation_uuid, hash)],
      [emailIndex.sort, emailSort(current.created, current.uuid)],
    ];
  }
  const assignments = [...Object.entries(set), ...indexed].map(([field, value], index) => {
    names[`#s${index}`] = field;
    values[`:s${index}`] = value;
    return `#s${index} = :s${index}`;
  });
  const removed: string[] = [...remove, ...(emailGone ? ['email_hash', emailIndex.partition, emailIndex.sort] : [])];
  const removals = removed.map((field, index) => {
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
