import { getItem, key, type TransactItem, TTL_ATTRIBUTE } from '@svc/table';
import * as z from 'zod';

/**
 * People who sign in on the hosted page (not API clients).
 *
 * | pattern                   | index | key                                                  |
 * |---------------------------|-------|------------------------------------------------------|
 * | user by uuid              | table | pk = USER#<uuid>, sk = USER                          |
 * | user by e-mail (unique)   | table | pk = USER_EMAIL#<lower-case e-mail>, sk = USER_EMAIL |
 * | sign-in ticket            | table | pk = CONNECT_TICKET#<ticket>, sk = CONNECT_TICKET    |
 *
 * The e-mail item is claimed with a conditional put in the transaction that creates the user,
 * so two onboardings with one address give one user and one 409. Passwords are held only as
 * scrypt hashes. A sign-in ticket carries a signed-in user from the hosted page's sign-in step
 * to its connect step (15 minutes, one process), so the password is never sent twice.
 */
export const userRecordSchema = z.object({
  uuid: z.string(),
  email: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  locale: z.string(),
  password_hash: z.string(),
  organisation_uuids: z.array(z.string()),
  created: z.number().int(),
});
export type UserRecord = z.infer<typeof userRecordSchema>;

export const TICKET_LIFETIME_SECONDS = 15 * 60;

const userKey = (uuid: string) => ({ pk: key('USER', uuid), sk: 'USER' });
const emailKey = (email: string) => ({ pk: key('USER_EMAIL', email.trim().toLowerCase()), sk: 'USER_EMAIL' });
const ticketKey = (ticket: string) => ({ pk: key('CONNECT_TICKET', ticket), sk: 'CONNECT_TICKET' });

export function newUserWrites(user: UserRecord): TransactItem[] {
  return [
    {
      Put: {
        Item: { ...userKey(user.uuid), entity: 'user', ...user },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        Item: { ...emailKey(user.email), entity: 'user_email', user_uuid: user.uuid },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
}

export async function findUser(uuid: string): Promise<UserRecord | undefined> {
  const item = await getItem(userKey(uuid));
  return item ? userRecordSchema.parse(item) : undefined;
}

export async function findUserByEmail(email: string): Promise<UserRecord | undefined> {
  const pointer = await getItem(emailKey(email));
  return typeof pointer?.user_uuid === 'string' ? findUser(pointer.user_uuid) : undefined;
}

export async function emailExists(email: string): Promise<boolean> {
  return (await getItem(emailKey(email))) !== undefined;
}

export function ticketWrite(ticket: string, userUuid: string, processUuid: string, expiresAt: number): TransactItem {
  return {
    Put: {
      Item: {
        ...ticketKey(ticket),
        entity: 'connect_ticket',
        user_uuid: userUuid,
        process_uuid: processUuid,
        expires_at: expiresAt,
        [TTL_ATTRIBUTE]: expiresAt,
      },
    },
  };
}

export async function findTicket(
  ticket: string,
): Promise<{ user_uuid: string; process_uuid: string; expires_at: number } | undefined> {
  const item = await getItem(ticketKey(ticket));
  const parsed = z
    .object({ user_uuid: z.string(), process_uuid: z.string(), expires_at: z.number() })
    .safeParse(item ?? {});
  return parsed.success ? parsed.data : undefined;
}
