import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { MiddlewareObj } from '@middy/core';
import { ConflictError, now, UnprocessableError, ValidationError } from '@svc/core';
import { db, key, tableName } from '@svc/table';
import type { StackEvent, StackResult } from '../context';

/**
 * `Idempotency-Key` on POSTs (contract section 3), scoped per client.
 *
 * Access pattern: record `pk = IDEMPOTENCY#<client id>#<sha256 of key>`, `sk = RECORD`, by key.
 * One conditional put claims a key; the same key with another request is 422, a claim still in
 * flight is 409, a finished one replays its response with `Idempotent-Replayed: true`.
 * A claim whose Lambda died is taken over after LOCK_SECONDS; records expire after 24 h (by the
 * service clock, and by DynamoDB's TTL).
 *
 * Not Powertools' idempotency utility: it cannot scope keys by the authenticated client, mark
 * replays with a header, or answer 409/422 in the contract's shapes without wrapping it whole.
 */
export const MAX_KEY_LENGTH = 255;
const RETENTION_SECONDS = 24 * 3600;
const LOCK_SECONDS = 60;

interface StoredResponse {
  statusCode: number;
  headers: Record<string, string>;
  body?: string;
}

interface IdempotencyState {
  recordKey: { pk: string; sk: string };
  fingerprint: string;
  replay?: StoredResponse;
}

const states = new WeakMap<StackEvent, IdempotencyState>();

export function replayedResponse(event: StackEvent): StackResult | undefined {
  const replay = states.get(event)?.replay;
  if (!replay) return undefined;
  return {
    statusCode: replay.statusCode,
    headers: { ...replay.headers, 'idempotent-replayed': 'true' },
    ...(replay.body === undefined ? {} : { body: replay.body }),
  };
}

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
      const recordKey = { pk: key('IDEMPOTENCY', event.svc.clientId, sha256(idempotencyKey)), sk: 'RECORD' };
      const { method } = event.requestContext.http;
      const fingerprint = sha256(`${method}\n${event.rawPath}?${event.rawQueryString ?? ''}\n${event.svc.rawBody}`);
      const state: IdempotencyState = { recordKey, fingerprint };
      const at = now();
      try {
        await db().send(
          new PutCommand({
            TableName: tableName(),
            Item: {
              ...recordKey,
              entity: 'idempotency_record',
              status: 'in_progress',
              fingerprint,
              lock_expires_at: at + LOCK_SECONDS,
              expires_at: at + RETENTION_SECONDS,
              ttl: at + RETENTION_SECONDS,
            },
            ConditionExpression:
              'attribute_not_exists(pk) OR expires_at <= :now OR (#status = :inProgress AND lock_expires_at <= :now AND fingerprint = :fingerprint)',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':now': at, ':inProgress': 'in_progress', ':fingerprint': fingerprint },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        states.set(event, state);
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException) || !error.Item) throw error;
        const existing = unmarshall(error.Item);
        if (existing.fingerprint !== fingerprint) {
          throw new UnprocessableError(
            'This Idempotency-Key was already used with a different request',
            'idempotency_key_reused',
            'Idempotency-Key',
          );
        }
        if (existing.status !== 'completed') {
          throw new ConflictError(
            'A request with this Idempotency-Key is still being processed',
            'idempotency_key_in_flight',
            'Idempotency-Key',
          );
        }
        state.replay = existing.response as StoredResponse;
        states.set(event, state);
      }
    },
    after: async (request) => {
      const state = states.get(request.event);
      if (!state || state.replay || !request.response) return;
      const { statusCode = 200, headers = {}, body } = request.response;
      if (statusCode >= 500) {
        await release(state);
        return;
      }
      const response: StoredResponse = {
        statusCode,
        headers: stringHeaders(headers),
        ...(typeof body === 'string' ? { body } : {}),
      };
      await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: state.recordKey,
          UpdateExpression: 'SET #status = :completed, #response = :response',
          ConditionExpression: 'fingerprint = :fingerprint',
          ExpressionAttributeNames: { '#status': 'status', '#response': 'response' },
          ExpressionAttributeValues: {
            ':completed': 'completed',
            ':response': response,
            ':fingerprint': state.fingerprint,
          },
        }),
      );
    },
    onError: async (request) => {
      const state = states.get(request.event);
      // A failed request changed nothing, so its key is released for a retry.
      if (state && !state.replay) await release(state);
    },
  };
}

async function release(state: IdempotencyState): Promise<void> {
  await db()
    .send(
      new DeleteCommand({
        TableName: tableName(),
        Key: state.recordKey,
        ConditionExpression: 'fingerprint = :fingerprint AND #status = :inProgress',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':fingerprint': state.fingerprint, ':inProgress': 'in_progress' },
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

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
