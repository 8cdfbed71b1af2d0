import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, defineEntity, isConditionFailure, type TransactItem, TTL_ATTRIBUTE, tableName } from '@svc/table';
import * as z from 'zod';

/**
 * A one-time code mailed to a supporter before the payment method can be changed (contract
 * section 12). One item per supporter: a new code replaces the one before. Only its keyed hash
 * is stored; each guess is counted by a conditional write before it is compared (so parallel
 * guesses cannot pass the bound), and a code is used once.
 */
export const codeRecordSchema = z.object({
  supporter_uuid: z.string(),
  organisation_uuid: z.string(),
  code_hash: z.string(),
  created: z.number().int(),
  expires_at: z.number().int(),
  /** Guesses counted so far (each reserved before it is compared). */
  attempts: z.number().int(),
  used_at: z.number().int().optional(),
});
export type PortalCodeRecord = z.infer<typeof codeRecordSchema>;

/** A code is gone from the table a day after it expired. */
const CODE_RETENTION_SECONDS = 86_400;

export const PORTAL_CODE = defineEntity<PortalCodeRecord, string>({
  name: 'portal_code',
  summary: 'The one-time code a supporter was mailed to change a payment method (keyed hash only).',
  prefix: 'PORTAL_CODE',
  idShown: '<supporter uuid>',
  sort: 'PORTAL_CODE',
  id: (code) => code.supporter_uuid,
  idParts: (supporterUuid) => [supporterUuid],
  byKey: 'a supporter’s current one-time code',
  storage: {
    toAttributes: (code) => ({ ...code, [TTL_ATTRIBUTE]: code.expires_at + CODE_RETENTION_SECONDS }),
    fromAttributes: ({ [TTL_ATTRIBUTE]: _ttl, ...rest }) => rest,
  },
  parse: (value) => codeRecordSchema.parse(value),
});

/**
 * The write of a new code, replacing the supporter's previous one unless that one was made less
 * than `minimumGapSeconds` ago (a mail per minute at most: the condition counts, not a read).
 */
export function newCodeWrite(code: PortalCodeRecord, minimumGapSeconds: number): TransactItem {
  return {
    Put: {
      Item: PORTAL_CODE.item(code),
      ConditionExpression: 'attribute_not_exists(pk) OR created <= :gap',
      ExpressionAttributeValues: { ':gap': code.created - minimumGapSeconds },
    },
  };
}

/**
 * Reserves one guess: attempts + 1, only while the code is unused, unexpired and under the bound.
 * Answers the code as it is after the reservation, or undefined when no guess is left.
 */
export async function reserveGuess(
  supporterUuid: string,
  at: number,
  maxAttempts: number,
): Promise<PortalCodeRecord | undefined> {
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: PORTAL_CODE.key(supporterUuid),
        UpdateExpression: 'SET attempts = attempts + :one',
        ConditionExpression: 'attempts < :max AND expires_at > :now AND attribute_not_exists(used_at)',
        ExpressionAttributeValues: { ':one': 1, ':max': maxAttempts, ':now': at },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return PORTAL_CODE.fromItem(out.Attributes ?? {});
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** Marks the code used, once: false when it was used (or replaced) meanwhile. */
export async function markCodeUsed(supporterUuid: string, codeHash: string, at: number): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: PORTAL_CODE.key(supporterUuid),
        UpdateExpression: 'SET used_at = :now',
        ConditionExpression: 'attribute_not_exists(used_at) AND code_hash = :hash',
        ExpressionAttributeValues: { ':now': at, ':hash': codeHash },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
