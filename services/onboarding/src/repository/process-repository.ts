import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { deferred, derivedToken, keyedHash, sameHash } from '@svc/core';
import { EVENTS_ATTRIBUTE, type StoredEvent } from '@svc/events';
import { db, getItem, isConditionFailure, key, type TransactItem, TTL_ATTRIBUTE, tableName } from '@svc/table';
import * as z from 'zod';

/**
 * Onboarding processes and their tokens.
 *
 * | pattern                    | index | key                                                   |
 * |----------------------------|-------|-------------------------------------------------------|
 * | process by uuid            | table | pk = ONBOARDING#<uuid>, sk = ONBOARDING               |
 * | process by token           | table | pk = ONBOARDING_TOKEN#<keyed hash of token>, sk = ONBOARDING_TOKEN |
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
    /** Refused credentials and known-address refusals so far (execution.ts MAX_FAILED_ATTEMPTS). */
    failed_attempts: z.number().int().optional(),
    event_sequence: z.number().int(),
  }),
);
export type ProcessRecord = z.infer<typeof processRecordSchema>;

/** Kept this long after expiry (or execution) for the partner's reads, then removed by TTL. */
export const PROCESS_RETENTION_SECONDS = 90 * 86_400;

const processKey = (uuid: string) => ({ pk: key('ONBOARDING', uuid), sk: 'ONBOARDING' });
const tokenKey = async (token: string) => ({
  pk: key('ONBOARDING_TOKEN', await keyedHash('onboarding_token', token)),
  sk: 'ONBOARDING_TOKEN',
});

/** The token of a process: derived from its uuid under the service key. */
export function processToken(uuid: string): Promise<string> {
  return derivedToken('onboarding_process', uuid);
}

function processItem(process: ProcessRecord, events: StoredEvent[]) {
  const { token: _token, ...stored } = process;
  return {
    ...processKey(process.uuid),
    entity: 'onboarding_process',
    ...stored,
    [EVENTS_ATTRIBUTE]: events,
    [TTL_ATTRIBUTE]: Math.max(process.expires_at, process.updated) + PROCESS_RETENTION_SECONDS,
  };
}

export async function newProcessWrites(process: ProcessRecord, events: StoredEvent[]): Promise<TransactItem[]> {
  return [
    { Put: { Item: processItem(process, events), ConditionExpression: 'attribute_not_exists(pk)' } },
    {
      Put: {
        Item: {
          ...(await tokenKey(process.token)),
          entity: 'onboarding_token',
          process_uuid: process.uuid,
          [TTL_ATTRIBUTE]: process.expires_at + PROCESS_RETENTION_SECONDS,
        },
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

/** Counts a refused attempt on a pending process; the new count, or undefined when it is no longer pending. */
export async function countFailedAttempt(uuid: string): Promise<number | undefined> {
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: processKey(uuid),
        UpdateExpression: 'ADD failed_attempts :one',
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':one': 1, ':pending': 'pending' },
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

export async function findProcess(uuid: string): Promise<ProcessRecord | undefined> {
  const item = await getItem(processKey(uuid));
  if (!item) return undefined;
  return processRecordSchema.parse({ token: await processToken(uuid), ...item });
}

export async function findProcessByToken(token: string): Promise<ProcessRecord | undefined> {
  // A process created before tokens were derived has its pointer under the token itself.
  const pointer = (await getItem(await tokenKey(token))) ?? (await getItem(legacyTokenKey(token)));
  const uuid = typeof pointer?.process_uuid === 'string' ? pointer.process_uuid : undefined;
  const process = uuid ? await findProcess(uuid) : undefined;
  return process && sameHash(process.token, token) ? process : undefined;
}

const legacyTokenKey = (token: string) => ({ pk: key('ONBOARDING_TOKEN', token), sk: 'ONBOARDING_TOKEN' });
