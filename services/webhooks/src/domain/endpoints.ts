import {
  type Assert,
  ConflictError,
  type Conforms,
  deferred,
  definedFields,
  isResumedRequest,
  newResourceUuid,
  newToken,
  now,
  type Principal,
  uuidSchema,
} from '@svc/core';
import { isNonPublicLiteralHost } from '@svc/outbound';
import { type GuardedWrite, transactWrite, versioned } from '@svc/table';
import * as z from 'zod';
import { countEndpoint, MAX_ENDPOINTS_PER_ORGANISATION, releaseEndpoint } from '../repository/endpoint-count';
import { open, seal } from '../repository/secrets';
import {
  claimUrl,
  deleteGuarded,
  type EndpointRecord,
  endpointKey,
  endpointPut,
  endpointRecordSchema,
  endpointsOf,
  findEndpoint,
  releaseUrl,
  urlHash,
} from '../repository/webhook-repository';
import { assertCanManage, changeManaged, checkScope, managedLister, managedReader } from './access';
import { MAX_DELIVERIES_PER_SECOND, rateOf } from './pacing';

/**
 * Webhook endpoints: where deliveries go. `password` is write-only; password and
 * HMAC key are stored sealed. Without an `hmac_key` the service generates one, so every delivery
 * is signed (the single response shows it). `prevent_duplicates: true` makes the URL unique in
 * the organisation (409 for a second endpoint with it), guarded by a marker item.
 */
export const endpointUrl = z
  .string()
  .trim()
  .min(1, 'This value should not be blank')
  .max(2000)
  .refine((value) => value.startsWith('https://'), 'The endpoint must start with https://')
  .refine((value) => URL.canParse(value), 'Not a valid URL')
  .refine((value) => {
    const url = URL.parse(value);
    return url !== null && url.username === '' && url.password === '';
  }, 'Put credentials in username and password, not in the URL')
  .refine((value) => URL.parse(value)?.port !== '0', 'Not a valid port')
  .refine((value) => {
    // Delivery checks every resolved address; an IP literal can be judged at once. The same
    // setting allows private targets in both places (the local runtime's default).
    const url = URL.parse(value);
    return process.env.SVC_WEBHOOK_ALLOW_PRIVATE === 'true' || url === null || !isNonPublicLiteralHost(url);
  }, 'The endpoint must not be a private, loopback, link-local or metadata address');

const secret = z.string().min(1).max(500);
/** A Basic-auth username: the header joins it to the password with a colon. */
export const basicAuthUsername = z
  .string()
  .max(200)
  .refine((value) => !value.includes(':'), 'A Basic-auth username cannot contain a colon');

const fields = {
  organisation_uuid: uuidSchema,
  account_uuid: uuidSchema.optional(),
  alias: z.string().max(200).optional(),
  endpoint: endpointUrl,
  username: basicAuthUsername.optional(),
  password: secret.nullable().optional(),
  hmac_key: secret.nullable().optional(),
  prevent_duplicates: z.boolean().optional(),
  /** Its pace (domain/pacing.ts): `null` returns it to the default. */
  max_deliveries_per_second: z
    .number()
    .int()
    .min(1)
    .max(MAX_DELIVERIES_PER_SECOND, `At most ${MAX_DELIVERIES_PER_SECOND} deliveries a second`)
    .nullable()
    .optional(),
};

export const createEndpointInput = z.object(fields).strict();
export const replaceEndpointInput = z
  .object({ ...fields, organisation_uuid: fields.organisation_uuid.optional() })
  .strict();
export const updateEndpointInput = replaceEndpointInput.partial();
export type EndpointInput = z.infer<typeof updateEndpointInput>;

const limitReached = () =>
  new ConflictError(
    `An organisation has at most ${MAX_ENDPOINTS_PER_ORGANISATION} webhook endpoints; delete one first`,
    'error.webhook_endpoint.limit_reached',
    'organisation_uuid',
  );

/** Thrown inside deleteEndpoint only: the organisation's counter does not count this endpoint. */
class Uncounted extends Error {}

const duplicate = () =>
  new ConflictError('An endpoint with this URL exists in the organisation', 'error.webhook.duplicate_url', 'endpoint');

/**
 * An endpoint as the API answers it: the record's fields but the password (it never leaves) and
 * the bookkeeping; the hmac_key, opened, is shown to its managers.
 */
export const endpointResponse = deferred(() =>
  endpointRecordSchema
    .unwrap()
    .pick({
      uuid: true,
      organisation_uuid: true,
      account_uuid: true,
      alias: true,
      endpoint: true,
      username: true,
      hmac_key: true,
    })
    .extend({
      /** Always shown: the endpoint's own pace, or the default. */
      max_deliveries_per_second: z.number().int(),
    }),
);
/**
 * An endpoint as a list shows it: every field of the single answer but the HMAC key, so a client
 * finds its own endpoint by its URL (`endpoint`) instead of registering it again. The interface
 * lists uuid, organisation_uuid, account_uuid and alias; the rest is a superset clients ignore.
 */
export const endpointListResponse = deferred(() => endpointResponse.unwrap().omit({ hmac_key: true }));

type _ListedEndpoint = Assert<Conforms<ReturnType<typeof endpointListShape>, z.output<typeof endpointListResponse>>>;
type _Endpoint = Assert<Conforms<Awaited<ReturnType<typeof endpointShape>>, z.output<typeof endpointResponse>>>;

export function endpointListShape(endpoint: EndpointRecord) {
  return {
    uuid: endpoint.uuid,
    organisation_uuid: endpoint.organisation_uuid,
    ...definedFields({ account_uuid: endpoint.account_uuid }),
    ...definedFields({ alias: endpoint.alias }),
    endpoint: endpoint.endpoint,
    ...definedFields({ username: endpoint.username }),
    max_deliveries_per_second: rateOf(endpoint),
  };
}

export async function endpointShape(endpoint: EndpointRecord) {
  return {
    ...endpointListShape(endpoint),
    ...(endpoint.hmac_key === undefined
      ? {}
      : { hmac_key: await open(endpoint.hmac_key, { endpoint: endpoint.uuid, field: 'hmac_key' }) }),
  };
}

export async function createEndpoint(principal: Promise<Principal>, input: z.infer<typeof createEndpointInput>) {
  const caller = await principal;
  assertCanManage(caller, input);
  await checkScope(input.organisation_uuid, input.account_uuid);
  const uuid = newResourceUuid('webhook_endpoint');
  // A re-run of a request that died after storing the endpoint returns that endpoint.
  const earlier = isResumedRequest() ? await findEndpoint(uuid) : undefined;
  if (earlier) return earlier;
  const at = now();
  const endpoint: EndpointRecord = {
    uuid,
    organisation_uuid: input.organisation_uuid,
    ...definedFields({ account_uuid: input.account_uuid }),
    ...definedFields({ alias: input.alias }),
    endpoint: input.endpoint,
    ...definedFields({ username: input.username }),
    ...(input.password ? { password: await seal(input.password, { endpoint: uuid, field: 'password' }) } : {}),
    hmac_key: await seal(input.hmac_key ?? newToken(32), { endpoint: uuid, field: 'hmac_key' }),
    ...(input.prevent_duplicates ? { unique_url: urlHash(input.endpoint) } : {}),
    ...definedFields({ max_deliveries_per_second: input.max_deliveries_per_second ?? undefined }),
    created: at,
    updated: at,
    version: 1,
  };
  const writes: GuardedWrite[] = [
    { item: endpointPut(endpoint) },
    // The cap, counted in the same transaction (never read-then-write): see endpoint-count.ts.
    { item: countEndpoint(endpoint.organisation_uuid), onConditionFailed: limitReached },
  ];
  if (endpoint.unique_url) writes.push({ item: claimUrl(endpoint, endpoint.unique_url), onConditionFailed: duplicate });
  await transactWrite(writes);
  return endpoint;
}

export const readEndpoint = managedReader(findEndpoint, 'Webhook endpoint not found');

export const listEndpoints = managedLister(endpointsOf);

/**
 * PUT (`mode: replace`) takes the whole object: optional fields left out are cleared, except the
 * secrets, which a client cannot read back: they stay unless sent (`null` clears them; a cleared
 * HMAC key is replaced by a new one). PATCH changes only what it sends.
 */
export async function changeEndpoint(
  principal: Promise<Principal>,
  uuid: string,
  input: EndpointInput,
  mode: 'replace' | 'update',
) {
  const refuseMove = () =>
    new ConflictError(
      'An endpoint cannot move to another organisation',
      'error.webhook.organisation',
      'organisation_uuid',
    );
  const read = (caller: Promise<Principal>) => readEndpoint(caller, uuid);
  return changeManaged(
    principal,
    read,
    { organisationUuid: input.organisation_uuid, refuseMove },
    async (read, caller) => {
      const keep = <K extends 'account_uuid' | 'alias' | 'username'>(name: K) =>
        name in input ? input[name] : mode === 'replace' ? undefined : read[name];
      const next: EndpointRecord = {
        uuid: read.uuid,
        organisation_uuid: read.organisation_uuid,
        endpoint: input.endpoint ?? read.endpoint,
        created: read.created,
        updated: now(),
        version: read.version + 1,
      };
      const accountUuid = keep('account_uuid');
      const alias = keep('alias');
      const username = keep('username');
      if (accountUuid !== undefined) next.account_uuid = accountUuid;
      if (alias !== undefined) next.alias = alias;
      if (username !== undefined) next.username = username;
      const pace =
        'max_deliveries_per_second' in input
          ? input.max_deliveries_per_second
          : mode === 'replace'
            ? undefined
            : read.max_deliveries_per_second;
      if (pace !== undefined && pace !== null) next.max_deliveries_per_second = pace;
      if (input.password === undefined && read.password !== undefined) next.password = read.password;
      if (input.password) next.password = await seal(input.password, { endpoint: read.uuid, field: 'password' });
      next.hmac_key =
        input.hmac_key === undefined
          ? read.hmac_key
          : await seal(input.hmac_key ?? newToken(32), { endpoint: read.uuid, field: 'hmac_key' });
      assertCanManage(caller, next);
      if (next.account_uuid !== read.account_uuid) await checkScope(next.organisation_uuid, next.account_uuid);

      const unique = input.prevent_duplicates ?? (mode === 'replace' ? false : read.unique_url !== undefined);
      if (unique) next.unique_url = urlHash(next.endpoint);
      const writes: GuardedWrite[] = [versioned(endpointPut(next, read.version))];
      if (read.unique_url && read.unique_url !== next.unique_url)
        writes.push({ item: releaseUrl(read, read.unique_url) });
      if (next.unique_url && next.unique_url !== read.unique_url) {
        writes.push({ item: claimUrl(next, next.unique_url), onConditionFailed: duplicate });
      }
      await transactWrite(writes);
      return next;
    },
  );
}

export async function deleteEndpoint(principal: Promise<Principal>, uuid: string): Promise<void> {
  await changeManaged(
    principal,
    (caller) => readEndpoint(caller, uuid),
    {},
    async (read) => {
      const writes: GuardedWrite[] = [versioned(deleteGuarded(endpointKey(read.uuid), read.version))];
      if (read.unique_url) writes.push({ item: releaseUrl(read, read.unique_url) });
      try {
        await transactWrite([
          ...writes,
          { item: releaseEndpoint(read.organisation_uuid), onConditionFailed: () => new Uncounted() },
        ]);
      } catch (error) {
        // An endpoint older than the counter: deleted without releasing a slot it never took.
        if (!(error instanceof Uncounted)) throw error;
        await transactWrite(writes);
      }
    },
  );
}
