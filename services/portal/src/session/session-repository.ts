import { keyedHash } from '@svc/core';
import { defineEntity, type GuardedWrite, TTL_ATTRIBUTE, transactWrite } from '@svc/table';
import * as z from 'zod';
import { PORTAL_FLOWS, PORTAL_LOCALES } from '../repository/link-repository';

/** An ended session stays this long past its end (its "session ended" page knows the organisation). */
export const SESSION_RETENTION_SECONDS = 86_400;

export const sessionRecordSchema = z.object({
  /** The keyed hash of the session id (the id itself is only in the donor's cookie). */
  session_hash: z.string(),
  organisation_uuid: z.string(),
  supporter_uuid: z.string(),
  /** The e-mail the redeemed link was bound to (lower-cased). */
  email: z.string(),
  locale: z.enum(PORTAL_LOCALES),
  flow: z.enum(PORTAL_FLOWS),
  subscription_uuid: z.string().optional(),
  return_url: z.string().optional(),
  /** Sent back by the session's forms and JSON calls (double submit against cross-site requests). */
  csrf_token: z.string(),
  created: z.number().int(),
  /** Moved forward at most once a minute (sessions.ts SESSION_TOUCH_SECONDS). */
  last_seen: z.number().int(),
  /** `created` + the longest a session lasts, however active. */
  expires_at: z.number().int(),
});
export type PortalSessionRecord = z.infer<typeof sessionRecordSchema>;

/**
 * A donor's portal session, by the keyed hash of its id: started when a link is redeemed, ended
 * by 30 idle minutes, 2 hours, or signing out (deleted). TTL removes it a day after its end.
 */
export const PORTAL_SESSION = defineEntity<PortalSessionRecord, string>({
  name: 'portal_session',
  summary: 'A donor’s session in the portal, by the keyed hash of its id (the id is only in the cookie).',
  prefix: 'PORTAL_SESSION',
  idShown: '<keyed hash of session id>',
  sort: 'PORTAL_SESSION',
  id: (session) => session.session_hash,
  idParts: (hash) => [hash],
  byKey: 'a portal session by its cookie',
  storage: {
    toAttributes: (session) => ({ ...session, [TTL_ATTRIBUTE]: session.expires_at + SESSION_RETENTION_SECONDS }),
    fromAttributes: ({ [TTL_ATTRIBUTE]: _ttl, ...rest }) => rest,
  },
  parse: (value) => sessionRecordSchema.parse(value),
});

/** The keyed hash a session id is stored and found by (purpose `portal_session`). */
export const sessionHash = (id: string) => keyedHash('portal_session', id);

/** A new session, never over another (a 256-bit id does not repeat). */
export function sessionWrite(session: PortalSessionRecord): GuardedWrite {
  return PORTAL_SESSION.create(session);
}

/**
 * Moves `last_seen` to `at`: only forward, and only while the session exists (a request racing
 * a sign-out never brings it back). False when nothing was written.
 */
export async function touchSession(hash: string, at: number): Promise<boolean> {
  const refused = new Error('not touched');
  try {
    await transactWrite([
      {
        item: {
          Update: {
            Key: PORTAL_SESSION.key(hash),
            UpdateExpression: 'SET last_seen = :at',
            ConditionExpression: 'attribute_exists(pk) AND last_seen < :at',
            ExpressionAttributeValues: { ':at': at },
          },
        },
        onConditionFailed: () => refused,
      },
    ]);
    return true;
  } catch (error) {
    if (error === refused) return false;
    throw error;
  }
}

/** Signing out: the session is gone at once. */
export async function deleteSession(hash: string): Promise<void> {
  await transactWrite([{ item: { Delete: { Key: PORTAL_SESSION.key(hash) } } }]);
}
