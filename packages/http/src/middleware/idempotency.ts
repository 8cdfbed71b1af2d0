import { createHash, randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { MiddlewareObj } from '@middy/core';
import {
  ConflictError,
  definedFields,
  keyedHash,
  now,
  openText,
  type ResourceNaming,
  sealText,
  UnprocessableError,
  ValidationError,
} from '@svc/core';
import { db, defineEntity, tableName } from '@svc/table';
import * as z from 'zod';
import type { StackEvent, StackResult } from '../context';

/**
 * `Idempotency-Key` on POSTs, scoped per client.
 *
 * Its record is described by `IDEMPOTENCY_RECORD` below (docs/access-patterns.md). One
 * conditional put claims a key; the same key with another request is 422, a claim still in
 * flight is 409, a finished one replays its response with `Idempotent-Replayed: true`.
 * Records expire after 24 h (by the service clock, and by DynamoDB's TTL).
 *
 * No double execution: the record holds a random seed from which the request names what it
 * creates (`newResourceUuid`). A run that died after calling the provider leaves its claim in
 * flight; once LOCK_SECONDS have passed, the same request takes the claim over with the same
 * seed, finds the resources its first run stored and hands the provider the same idempotency
 * reference. A run that failed (an error, or a 5xx) marks its record failed instead of deleting
 * it, so the same request resumes with its seed too; another body gets 422 until the record
 * expires (the failed run may have charged). Each claim has an id: only the run that holds the
 * claim completes or fails the record.
 *
 * What is stored of the request is an HMAC of method, path, query and body under the service
 * key (`keyedHash`): a body holding a card number and CVV cannot be recovered from the table by
 * hashing guesses. The response kept for replays is sealed under the service key (`sealText`),
 * since a first response can carry a secret (an onboarding token, a webhook's HMAC key).
 *
 * Not Powertools' idempotency utility: it cannot scope keys by the authenticated client, mark
 * replays with a header, keep a seed across a takeover, or answer 409/422 in the contract's
 * shapes without wrapping it whole.
 */
export const MAX_KEY_LENGTH = 255;
const RETENTION_SECONDS = 24 * 3600;
export const LOCK_SECONDS = 60;

/**
 * A claim's record: written whole by the claim, then moved by conditional updates (completed with
 * the sealed response, failed, taken over). Records from before the seed and the claim id are
 * read too, so those fields are optional here.
 */
const idempotencyRecordSchema = z.object({
  client_id: z.string(),
  key_hash: z.string(),
  status: z.enum(['in_progress', 'completed', 'failed']),
  fingerprint: z.string(),
  resource_seed: z.string().optional(),
  claim_id: z.string().optional(),
  lock_expires_at: z.number().optional(),
  expires_at: z.number(),
  response: z.unknown().optional(),
});

export const IDEMPOTENCY_RECORD = defineEntity<z.infer<typeof idempotencyRecordSchema>, readonly [string, string]>({
  name: 'idempotency_record',
  summary: 'A claimed Idempotency-Key of a client: its request’s keyed hash, seed and sealed response (24 h, TTL).',
  prefix: 'IDEMPOTENCY',
  idShown: '<client id>#<sha256 of key>',
  sort: 'RECORD',
  id: (record) => [record.client_id, record.key_hash] as const,
  idParts: ([clientId, keyHash]) => [clientId, keyHash],
  byKey: 'record by client and key',
  storage: {
    toAttributes: ({ client_id: _, key_hash: __, ...rest }) => ({ ...rest, ttl: rest.expires_at }),
    fromAttributes: (item) => {
      // The key's hash is hex, the last part; the client id is what stands between.
      const parts = String(item.pk).split('#');
      return { ...item, client_id: parts.slice(1, -1).join('#'), key_hash: parts.at(-1) };
    },
  },
  parse: (value) => idempotencyRecordSchema.parse(value),
});

interface StoredResponse {
  statusCode: number;
  headers: Record<string, string>;
  body?: string;
}

interface IdempotencyState {
  recordKey: { pk: string; sk: string };
  fingerprint: string;
  /** This run's claim: only its holder completes or fails the record. */
  claimId: string;
  naming: ResourceNaming;
  replay?: StoredResponse;
}

const states = new WeakMap<StackEvent, IdempotencyState>();

export function replayedResponse(event: StackEvent): StackResult | undefined {
  const replay = states.get(event)?.replay;
  if (!replay) return undefined;
  return {
    statusCode: replay.statusCode,
    headers: { ...replay.headers, 'idempotent-replayed': 'true' },
    ...definedFields({ body: replay.body }),
  };
}

/** How the request names what it creates, when it carries an Idempotency-Key. */
export function resourceNaming(event: StackEvent): ResourceNaming | undefined {
  const state = states.get(event);
  return state && !state.replay ? state.naming : undefined;
}

const reused = () =>
  new UnprocessableError(
    'This Idempotency-Key was already used with a different request',
    'idempotency_key_reused',
    'Idempotency-Key',
  );

const inFlight = () =>
  new ConflictError(
    'A request with this Idempotency-Key is still being processed',
    'idempotency_key_in_flight',
    'Idempotency-Key',
  );

export function idempotency(): MiddlewareObj<StackEvent, StackResult> {
  return {
    before: async (request) => {
      const { event } = request;
      const idempotencyKey = event.headers['idempotency-key'];
      // Keys are scoped per client, so only authenticated POSTs take part (a token response is
      // never stored).
      if (event.requestContext.http.method !== 'POST' || idempotencyKey === undefined) return;
      if (event.svc.route.auth === 'none' || event.svc.route.readOnly || !event.svc.clientId) return;
      if (idempotencyKey.length === 0 || idempotencyKey.length > MAX_KEY_LENGTH) {
        throw ValidationError.field(
          'Idempotency-Key',
          'error.validation.not_valid',
          `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters`,
        );
      }
      const id = [event.svc.clientId, sha256(idempotencyKey)] as const;
      const { method } = event.requestContext.http;
      const described = `${method}\n${event.rawPath}?${event.rawQueryString ?? ''}\n${event.svc.rawBody}`;
      const fingerprint = await keyedHash('idempotency', described);
      states.set(event, await claim(id, fingerprint, () => sha256(described)));
    },
    after: async (request) => {
      const state = states.get(request.event);
      if (!state || state.replay || !request.response) return;
      const { statusCode = 200, headers = {}, body } = request.response;
      if (statusCode >= 500) {
        await markFailed(state);
        return;
      }
      const response: StoredResponse = {
        statusCode,
        headers: stringHeaders(headers),
        ...(typeof body === 'string' ? { body } : {}),
      };
      const sealed = await sealText(JSON.stringify(response), state.recordKey.pk);
      await db()
        .send(
          new UpdateCommand({
            TableName: tableName(),
            Key: state.recordKey,
            UpdateExpression: 'SET #status = :completed, #response = :response',
            ConditionExpression: 'claim_id = :claim',
            ExpressionAttributeNames: { '#status': 'status', '#response': 'response' },
            ExpressionAttributeValues: { ':completed': 'completed', ':response': sealed, ':claim': state.claimId },
          }),
        )
        .catch((error: unknown) => {
          // The claim was taken over while this run was away: its successor records the answer.
          if (!(error instanceof ConditionalCheckFailedException)) throw error;
        });
    },
    onError: async (request) => {
      const state = states.get(request.event);
      if (state && !state.replay) await markFailed(state);
    },
  };
}

/**
 * A fresh claim (no record, or an expired one) gets a new seed; otherwise the record decides:
 * replay, 422, 409, or a takeover that keeps the seed. Every claim carries its own id, and only
 * the run holding the claim may complete it or mark it failed: a run that wakes up after its
 * claim was taken over changes nothing.
 */
async function claim(
  [clientId, keyHash]: readonly [string, string],
  fingerprint: string,
  legacyFingerprint: () => string,
): Promise<IdempotencyState> {
  const recordKey = IDEMPOTENCY_RECORD.key([clientId, keyHash]);
  const at = now();
  const seed = randomUUID();
  const claimId = randomUUID();
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: IDEMPOTENCY_RECORD.item({
          client_id: clientId,
          key_hash: keyHash,
          status: 'in_progress',
          fingerprint,
          resource_seed: seed,
          claim_id: claimId,
          lock_expires_at: at + LOCK_SECONDS,
          expires_at: at + RETENTION_SECONDS,
        }),
        ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now',
        ExpressionAttributeValues: { ':now': at },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { recordKey, fingerprint, claimId, naming: { seed, resumed: false } };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException) || !error.Item) throw error;
    const existing = unmarshall(error.Item);
    if (typeof existing.resource_seed !== 'string')
      return legacyRecord(existing, recordKey, fingerprint, legacyFingerprint());
    // Also after a failure: that run may have charged, so only the same request may resume it.
    if (existing.fingerprint !== fingerprint) throw reused();
    if (existing.status === 'completed') {
      const replay = JSON.parse(await openText(String(existing.response), recordKey.pk)) as StoredResponse;
      return { recordKey, fingerprint, claimId, naming: { seed, resumed: false }, replay };
    }
    if (existing.status === 'in_progress' && Number(existing.lock_expires_at) > at) throw inFlight();
    return takeOver(recordKey, fingerprint, existing, claimId, at);
  }
}

/**
 * A record written before requests named their resources (no seed; an unkeyed fingerprint; the
 * response as a map): it replays what it finished, but one that did not finish is never resumed
 * (a resumption without its seed would name new resources): 409 until it expires.
 */
function legacyRecord(
  existing: Record<string, unknown>,
  recordKey: { pk: string; sk: string },
  fingerprint: string,
  legacyFingerprint: string,
): IdempotencyState {
  if (existing.fingerprint !== legacyFingerprint) throw reused();
  if (existing.status !== 'completed') throw inFlight();
  return {
    recordKey,
    fingerprint,
    claimId: '',
    naming: { seed: '', resumed: false },
    replay: existing.response as StoredResponse,
  };
}

/**
 * Resumes a claim whose run died (its lock lapsed) or failed, with the seed it had, under a new
 * claim id. Guarded by the state that was read, so of two retries racing for it one resumes and
 * the other gets 409.
 */
async function takeOver(
  recordKey: { pk: string; sk: string },
  fingerprint: string,
  existing: Record<string, unknown>,
  claimId: string,
  at: number,
): Promise<IdempotencyState> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: recordKey,
        UpdateExpression: 'SET #status = :inProgress, lock_expires_at = :lock, claim_id = :claim',
        ConditionExpression: '#status = :status AND lock_expires_at = :oldLock AND fingerprint = :fingerprint',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':inProgress': 'in_progress',
          ':lock': at + LOCK_SECONDS,
          ':claim': claimId,
          ':status': existing.status,
          ':oldLock': existing.lock_expires_at,
          ':fingerprint': fingerprint,
        },
      }),
    );
    return { recordKey, fingerprint, claimId, naming: { seed: String(existing.resource_seed), resumed: true } };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw inFlight();
    throw error;
  }
}

/**
 * A run that failed may have done part of its work (a provider charged before a write failed),
 * so its record is kept, with its seed, for the same request to resume at once.
 */
async function markFailed(state: IdempotencyState): Promise<void> {
  await db()
    .send(
      new UpdateCommand({
        TableName: tableName(),
        Key: state.recordKey,
        UpdateExpression: 'SET #status = :failed',
        ConditionExpression: 'claim_id = :claim AND #status = :inProgress',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':claim': state.claimId, ':inProgress': 'in_progress', ':failed': 'failed' },
      }),
    )
    .catch((error: unknown) => {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    });
}

function stringHeaders(headers: Record<string, string | number | boolean>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'x-request-id') out[name] = String(value);
  }
  return out;
}

/** The key itself is the client's label, not a secret: a plain digest keeps the key short. */
function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
