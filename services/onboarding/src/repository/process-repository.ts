import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { deferred, derivedToken, keyedHash, sameHash } from '@svc/core';
import { EVENTS_ATTRIBUTE, type StoredEvent } from '@svc/events';
import {
  byUuid,
  db,
  defineEntity,
  getItem,
  isConditionFailure,
  type TransactItem,
  TTL_ATTRIBUTE,
  tableName,
} from '@svc/table';
import * as z from 'zod';

/**
 * Onboarding processes and their tokens (`PROCESS` and `PROCESS_TOKEN` below;
 * docs/access-patterns.md).
 *
 * The token item only points at the process; both are written in one transaction, so a token
 * always finds its process (two strongly consistent reads, no index lag on the hosted page).
 * Both expire by TTL a retention period after the process does.
 *
 * The token is a credential, so the table never holds it: it is derived from the process's uuid
 * under the service key (`derivedToken`), given again on every read of the process by its
 * partner, and found through its keyed hash (`keyedHash`); the process it points at is then
 * checked against the token in constant time. Someone who reads the table learns no token.
 */
export const PROCESS_STATUSES = ['pending', 'succeeded', 'failed'] as const;

const sealedWebhook = z.object({
  event_name: z.string(),
  endpoint: z.string(),
  username: z.string().optional(),
  password: z.string().optional(),
  hmac_key: z.string().optional(),
});

export const processRecordSchema = deferred(() =>
  z.object({
    uuid: z.string(),
    partner_client_id: z.string(),
    /** Where the partner's onboarding events go (its own organisation), when it has one. */
    partner_organisation_uuid: z.string().optional(),
    onboarding_configuration_uuid: z.string(),
    partner_integration_uuid: z.string(),
    status: z.enum(PROCESS_STATUSES),
    /** Never stored (see above); a process written before tokens were derived still holds its own. */
    token: z.string(),
    expires_at: z.number().int(),
    created: z.number().int(),
    updated: z.number().int(),
    external_id: z.string().optional(),
    initialisation_data: z.object({
      user: z.record(z.string(), z.unknown()).optional(),
      organisation: z.record(z.string(), z.unknown()).optional(),
      event_subscriptions: z.array(sealedWebhook).optional(),
    }),
    results: z
      .object({
        organisation: z.object({ uuid: z.string() }),
        accounts: z.record(z.string(), z.object({ uuid: z.string() })),
        user: z.object({ uuid: z.string() }),
      })
      .optional(),
    failure_reason: z.string().optional(),
    /** Refused credentials and known-address refusals so far, and guesses in flight (execution.ts guardedGuess). */
    failed_attempts: z.number().int().optional(),
    event_sequence: z.number().int(),
  }),
);
export type ProcessRecord = z.infer<typeof processRecordSchema>;

/** Kept this long after expiry (or execution) for the partner's reads, then removed by TTL. */
export const PROCESS_RETENTION_SECONDS = 90 * 86_400;

type StoredProcess = Omit<ProcessRecord, 'token'>;
const storedProcessSchema = deferred(() => processRecordSchema.unwrap().omit({ token: true }));

/** A process as stored: without its token (derived again on every read), removed by TTL. */
export const PROCESS = defineEntity<StoredProcess, string>({
  name: 'onboarding_process',
  summary: 'A partner’s onboarding of an organisation, until executed or expired (then kept 90 days, TTL).',
  prefix: 'ONBOARDING',
  ...byUuid(),
  sort: 'ONBOARDING',
  byKey: 'process by uuid',
  storage: {
    toAttributes: (process) => ({
      ...process,
      [TTL_ATTRIBUTE]: Math.max(process.expires_at, process.updated) + PROCESS_RETENTION_SECONDS,
    }),
    fromAttributes: (item) => item,
  },
  parse: (item) => storedProcessSchema.parse(item),
});

const tokenPointerSchema = z.object({ token_hash: z.string(), process_uuid: z.string() });

/** The pointer from a token's keyed hash to its process (the table never holds the token). */
export const PROCESS_TOKEN = defineEntity<z.infer<typeof tokenPointerSchema> & { expires_at: number }, string>({
  name: 'onboarding_token',
  summary: 'The keyed hash of a process’s token, pointing to the process (the token itself is never stored).',
  prefix: 'ONBOARDING_TOKEN',
  idShown: '<keyed hash of token>',
  sort: 'ONBOARDING_TOKEN',
  id: (pointer) => pointer.token_hash,
  idParts: (hash) => [hash],
  byKey: 'process by token',
  storage: {
    toAttributes: ({ process_uuid, expires_at }) => ({
      process_uuid,
      [TTL_ATTRIBUTE]: expires_at + PROCESS_RETENTION_SECONDS,
    }),
    fromAttributes: (item) => ({
      ...item,
      token_hash: String(item.pk).slice('ONBOARDING_TOKEN#'.length),
      expires_at: Number(item[TTL_ATTRIBUTE]) - PROCESS_RETENTION_SECONDS,
    }),
  },
  parse: (value) => tokenPointerSchema.extend({ expires_at: z.number() }).parse(value),
});

const processKey = (uuid: string) => PROCESS.key(uuid);
const tokenHash = (token: string) => keyedHash('onboarding_token', token);

/** The token of a process: derived from its uuid under the service key. */
export function processToken(uuid: string): Promise<string> {
  return derivedToken('onboarding_process', uuid);
}

function processItem(process: ProcessRecord, events: StoredEvent[]) {
  const { token: _token, ...stored } = process;
  return { ...PROCESS.item(stored), [EVENTS_ATTRIBUTE]: events };
}

export async function newProcessWrites(process: ProcessRecord, events: StoredEvent[]): Promise<TransactItem[]> {
  return [
    { Put: { Item: processItem(process, events), ConditionExpression: 'attribute_not_exists(pk)' } },
    {
      Put: {
        Item: PROCESS_TOKEN.item({
          token_hash: await tokenHash(process.token),
          process_uuid: process.uuid,
          expires_at: process.expires_at,
        }),
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
}

/**
 * The process after execution (or failure), guarded by it still being pending: of two
 * executions racing, exactly one lands.
 */
export function executedProcessWrite(process: ProcessRecord, events: StoredEvent[]): TransactItem {
  return {
    Put: {
      Item: processItem(process, events),
      ConditionExpression: '#status = :pending',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':pending': 'pending' },
    },
  };
}

/**
 * Reserves one guess on a pending process BEFORE any secret is checked: the count goes up only
 * while it is below `max` (one conditional UpdateItem, so of guesses racing at most `max` pass,
 * however many there are). The new count, or undefined when the process has no guess left or is
 * no longer pending. A guess that turns out right gives its reservation back (releaseAttempt).
 */
export async function reserveAttempt(uuid: string, max: number): Promise<number | undefined> {
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: processKey(uuid),
        UpdateExpression: 'ADD failed_attempts :one',
        ConditionExpression: '#status = :pending AND (attribute_not_exists(failed_attempts) OR failed_attempts < :max)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':one': 1, ':pending': 'pending', ':max': max },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const count = out.Attributes?.failed_attempts;
    return typeof count === 'number' ? count : undefined;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** Gives a reservation back (the guess was right, or not a guess); nothing once the process ended. */
export async function releaseAttempt(uuid: string): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: processKey(uuid),
        UpdateExpression: 'ADD failed_attempts :minus',
        ConditionExpression: '#status = :pending AND failed_attempts > :zero',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':minus': -1, ':pending': 'pending', ':zero': 0 },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

export async function findProcess(uuid: string): Promise<ProcessRecord | undefined> {
  const stored = await PROCESS.find(uuid);
  return stored ? { ...stored, token: await processToken(uuid) } : undefined;
}

export async function findProcessByToken(token: string): Promise<ProcessRecord | undefined> {
  // A process created before tokens were derived has its pointer under the token itself.
  const pointer = (await getItem(PROCESS_TOKEN.key(await tokenHash(token)))) ?? (await getItem(legacyTokenKey(token)));
  const uuid = typeof pointer?.process_uuid === 'string' ? pointer.process_uuid : undefined;
  const process = uuid ? await findProcess(uuid) : undefined;
  return process && sameHash(process.token, token) ? process : undefined;
}

const legacyTokenKey = (token: string) => PROCESS_TOKEN.key(token);
