import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { deferred, type Grant } from '@svc/core';
import { db, defineEntity, getItem, isConditionFailure, key, queryAll, type TransactItem, tableName } from '@svc/table';
import * as z from 'zod';
import { PARTNER_LOGO_SIZES, partnerLogoProblems } from '../domain/partner-profile';

/**
 * API clients (customers, operators, partners), described by `CLIENT` below
 * (docs/access-patterns.md). Its writes are updates of named attributes (credentials by the
 * operator tool and the seed, grants by onboarding under an attribute-limited IAM grant), never a
 * whole item.
 *
 * Only the scrypt hash of the secret is stored. Grants live on the client item and are read
 * on every request, so changes apply at once to tokens already issued.
 */
const grantSchema = z.object({ organisation_uuid: z.string(), account_uuid: z.string().optional() });

const logo = (size: { width: number; height: number }) =>
  z.string().superRefine((svg, context) => {
    for (const problem of partnerLogoProblems(svg, size)) context.addIssue({ code: 'custom', message: problem });
  });
const description = () => z.string().trim().min(1).max(150);
const httpsUrl = () => z.url({ protocol: /^https$/, hostname: z.regexes.domain });

/**
 * A partner's registration data: both logos (SVG, horizontal 130x48 and
 * square 75x75), the return label, descriptions of at most 150 characters per language, the
 * base URL that dynamic redirects are checked against, and whether users may disconnect on
 * their own (if not, a support URL; the seed checks that rule).
 */
export const partnerProfileSchema = deferred(() =>
  z.object({
    name: z.string().trim().min(1).max(200),
    onboarding_configuration_uuid: z.string(),
    base_url: httpsUrl(),
    return_label: z.string().trim().min(1).max(100),
    allow_self_disconnect: z.boolean(),
    support_url: httpsUrl().optional(),
    logos: z.object({ horizontal: logo(PARTNER_LOGO_SIZES.horizontal), square: logo(PARTNER_LOGO_SIZES.square) }),
    descriptions: z.object({ de: description(), fr: description(), it: description(), en: description() }),
    /**
     * The partner's own organisation, where it subscribes to onboarding events;
     * the seed gives the partner a grant on it.
     */
    organisation_uuid: z.string().optional(),
  }),
);
export type PartnerProfile = z.infer<typeof partnerProfileSchema>;

const clientItemSchema = z.object({
  client_id: z.string(),
  secret_hash: z.string(),
  role: z.enum(['customer', 'operator']),
  kind: z.enum(['client', 'partner']),
  grants: z.array(grantSchema),
  created: z.number(),
  partner: partnerProfileSchema.optional(),
});
export type ClientRecord = z.infer<typeof clientItemSchema>;

export const CLIENT = defineEntity<ClientRecord, string>({
  name: 'client',
  summary: 'An API client: the scrypt hash of its secret, its role, grants and (a partner) its profile.',
  prefix: 'CLIENT',
  idShown: '<client id>',
  sort: 'CLIENT',
  id: (client) => client.client_id,
  idParts: (clientId) => [clientId],
  byKey: 'client by id (token, each call)',
  indexes: [
    {
      index: 'gsi1',
      pattern: 'partner by onboarding configuration',
      shown: 'gsi1pk = ONBOARDING_CONFIG#<uuid>, gsi1sk = CLIENT#<client id>',
      keys: (client) =>
        client.partner
          ? {
              partition: key('ONBOARDING_CONFIG', client.partner.onboarding_configuration_uuid),
              sort: key('CLIENT', client.client_id),
            }
          : undefined,
    },
  ],
  parse: (item) => clientItemSchema.parse(item),
});

const clientKey = (clientId: string) => CLIENT.key(clientId);

/**
 * The client of a token, for every authenticated request: through the container's memo of hot
 * reads (getRecentItem in @svc/table; off unless SVC_HOT_READ_SECONDS is set), so a peak's one
 * form client is no hot read key. A grant removed takes effect here within that time.
 */
export function findCallingClient(clientId: string): Promise<ClientRecord | undefined> {
  return CLIENT.findRecent(clientId);
}

export function findClient(clientId: string): Promise<ClientRecord | undefined> {
  return CLIENT.find(clientId);
}

/**
 * Creates a client or updates its credentials, role and partner data in place (seed and
 * operator tool: same id = same record). Grants are left alone here: they change only through
 * `updateGrants`, so a re-seed never overwrites a grant that onboarding added meanwhile.
 */
export async function saveClientCredentials(client: Omit<ClientRecord, 'grants'>): Promise<void> {
  const names: Record<string, string> = {
    '#entity': 'entity',
    '#client_id': 'client_id',
    '#secret_hash': 'secret_hash',
    '#role': 'role',
    '#kind': 'kind',
    '#created': 'created',
    '#grants': 'grants',
    '#version': 'grants_version',
    '#partner': 'partner',
    '#gsi1pk': 'gsi1pk',
    '#gsi1sk': 'gsi1sk',
  };
  const values: Record<string, unknown> = {
    ':entity': 'client',
    ':client_id': client.client_id,
    ':secret_hash': client.secret_hash,
    ':role': client.role,
    ':kind': client.kind,
    ':created': client.created,
    ':empty': [],
    ':zero': 0,
  };
  const set = [
    '#entity = :entity',
    '#client_id = :client_id',
    '#secret_hash = :secret_hash',
    '#role = :role',
    '#kind = :kind',
    '#created = if_not_exists(#created, :created)',
    '#grants = if_not_exists(#grants, :empty)',
    '#version = if_not_exists(#version, :zero)',
  ];
  let update: string;
  if (client.partner) {
    values[':partner'] = client.partner;
    const partnerKeys = CLIENT.indexKeys({ ...client, grants: [] });
    values[':gsi1pk'] = partnerKeys.gsi1pk;
    values[':gsi1sk'] = partnerKeys.gsi1sk;
    set.push('#partner = :partner', '#gsi1pk = :gsi1pk', '#gsi1sk = :gsi1sk');
    update = `SET ${set.join(', ')}`;
  } else {
    update = `SET ${set.join(', ')} REMOVE #partner, #gsi1pk, #gsi1sk`;
  }
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: clientKey(client.client_id),
      UpdateExpression: update,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    }),
  );
}

/** The partner registered with this onboarding configuration (the index is eventually consistent). */
export async function findPartnerByConfiguration(configurationUuid: string): Promise<ClientRecord | undefined> {
  const [item] = await queryAll({ index: 'gsi1', partition: key('ONBOARDING_CONFIG', configurationUuid), limit: 1 });
  return item ? CLIENT.fromItem(item) : undefined;
}

/**
 * A change of a client's grants as one write of a caller's transaction, guarded by the grants
 * version it was computed from: the caller retries on a condition failure (another writer got
 * there first), so grant changes never overwrite each other and land atomically with whatever
 * else the caller writes (onboarding, disconnect).
 */
export async function grantsChangeWrite(
  clientId: string,
  change: (grants: Grant[]) => Grant[],
): Promise<{ item: TransactItem; grants: Grant[] }> {
  const item = await getItem(clientKey(clientId));
  if (!item) throw new Error(`No client ${clientId}`);
  const current = clientItemSchema.parse(item);
  const version = typeof item.grants_version === 'number' ? item.grants_version : 0;
  const grants = change(current.grants);
  return {
    grants,
    item: {
      Update: {
        Key: clientKey(clientId),
        UpdateExpression: 'SET grants = :grants, grants_version = :next',
        ConditionExpression:
          'attribute_exists(pk) AND (grants_version = :version OR (attribute_not_exists(grants_version) AND :version = :zero))',
        ExpressionAttributeValues: { ':grants': grants, ':next': version + 1, ':version': version, ':zero': 0 },
      },
    },
  };
}

/**
 * Changes a client's grants atomically: optimistic on `grants_version`, retried when another
 * writer got there first, so concurrent grant changes never overwrite each other.
 */
export async function updateGrants(clientId: string, change: (grants: Grant[]) => Grant[]): Promise<Grant[]> {
  for (let attempt = 0; attempt < 40; attempt++) {
    // Jittered back-off between tries spreads out writers that collided.
    if (attempt > 0) await new Promise((r) => setTimeout(r, Math.random() * Math.min(200, 10 * 2 ** attempt)));
    const item = await getItem(clientKey(clientId));
    if (!item) throw new Error(`No client ${clientId}`);
    const current = clientItemSchema.parse(item);
    const version = typeof item.grants_version === 'number' ? item.grants_version : 0;
    const next = change(current.grants);
    try {
      await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: clientKey(clientId),
          UpdateExpression: 'SET grants = :grants, grants_version = :next',
          ConditionExpression:
            'attribute_exists(pk) AND (grants_version = :version OR (attribute_not_exists(grants_version) AND :version = :zero))',
          ExpressionAttributeValues: { ':grants': next, ':next': version + 1, ':version': version, ':zero': 0 },
        }),
      );
      return next;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
  throw new Error(`Grants of ${clientId} kept changing under us`);
}
