import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
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
 * People who sign in on the hosted page (not API clients): `USER`, `USER_EMAIL` and
 * `CONNECT_TICKET` below (docs/access-patterns.md).
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

export const USER = defineEntity<UserRecord, string>({
  name: 'user',
  summary: 'A person who signs in on the hosted onboarding page (a scrypt hash, never the password).',
  prefix: 'USER',
  ...byUuid(),
  sort: 'USER',
  byKey: 'user by uuid',
  parse: (item) => userRecordSchema.parse(item),
});

const userEmailSchema = z.object({ email: z.string(), user_uuid: z.string() });

/** The unique e-mail address of a user: claimed in the transaction that creates the user. */
export const USER_EMAIL = defineEntity<z.infer<typeof userEmailSchema>, string>({
  name: 'user_email',
  summary: 'A user’s e-mail address, unique: claimed with the user, pointing to it.',
  prefix: 'USER_EMAIL',
  idShown: '<lower-case e-mail>',
  sort: 'USER_EMAIL',
  id: (pointer) => pointer.email,
  idParts: (email) => [email.trim().toLowerCase()],
  byKey: 'user by e-mail (unique)',
  storage: {
    toAttributes: ({ user_uuid }) => ({ user_uuid }),
    fromAttributes: (item) => ({ ...item, email: String(item.pk).slice('USER_EMAIL#'.length) }),
  },
  parse: (value) => userEmailSchema.parse(value),
});

const ticketSchema = z.object({
  ticket: z.string(),
  user_uuid: z.string(),
  process_uuid: z.string(),
  expires_at: z.number(),
});

/** A sign-in ticket: the hosted page's signed-in user, from its sign-in step to its connect step. */
export const CONNECT_TICKET = defineEntity<z.infer<typeof ticketSchema>, string>({
  name: 'connect_ticket',
  summary: 'A signed-in user carried from the hosted page’s sign-in step to its connect step (15 minutes, TTL).',
  prefix: 'CONNECT_TICKET',
  idShown: '<ticket>',
  sort: 'CONNECT_TICKET',
  id: (ticket) => ticket.ticket,
  idParts: (ticket) => [ticket],
  byKey: 'sign-in ticket',
  storage: {
    toAttributes: ({ ticket: _, ...rest }) => ({ ...rest, [TTL_ATTRIBUTE]: rest.expires_at }),
    fromAttributes: (item) => ({ ...item, ticket: String(item.pk).slice('CONNECT_TICKET#'.length) }),
  },
  parse: (value) => ticketSchema.parse(value),
});

export function newUserWrites(user: UserRecord): TransactItem[] {
  return [
    {
      Put: {
        Item: USER.item(user),
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        Item: USER_EMAIL.item({ email: user.email, user_uuid: user.uuid }),
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
}

export function findUser(uuid: string): Promise<UserRecord | undefined> {
  return USER.find(uuid);
}

export async function findUserByEmail(email: string): Promise<UserRecord | undefined> {
  const pointer = await USER_EMAIL.find(email);
  return pointer ? findUser(pointer.user_uuid) : undefined;
}

export async function emailExists(email: string): Promise<boolean> {
  return (await getItem(USER_EMAIL.key(email))) !== undefined;
}

export function ticketWrite(ticket: string, userUuid: string, processUuid: string, expiresAt: number): TransactItem {
  return {
    Put: {
      Item: CONNECT_TICKET.item({ ticket, user_uuid: userUuid, process_uuid: processUuid, expires_at: expiresAt }),
    },
  };
}

export async function findTicket(
  ticket: string,
): Promise<{ user_uuid: string; process_uuid: string; expires_at: number } | undefined> {
  const found = await CONNECT_TICKET.find(ticket);
  if (!found) return undefined;
  const { user_uuid, process_uuid, expires_at } = found;
  return { user_uuid, process_uuid, expires_at };
}

interface PasswordGuesses {
  email: string;
  window: number;
  failures: number;
}

/**
 * Failed password checks of one e-mail address in one fixed window (users.ts PASSWORD_LOCKOUT),
 * across every process and page: one item per address and window, gone by TTL after it.
 */
export const PASSWORD_GUESSES = defineEntity<PasswordGuesses, readonly [string, number]>({
  name: 'password_guesses',
  summary:
    'Password checks of one e-mail address in one 15-minute window, reserved before each check (the per-user lockout; TTL after the window).',
  prefix: 'PASSWORD_GUESSES',
  idShown: '<lower-case e-mail>#<window>',
  sort: 'PASSWORD_GUESSES',
  id: (guesses) => [guesses.email, guesses.window] as const,
  idParts: ([email, window]) => [email.trim().toLowerCase(), String(window)],
  byKey: 'the failed password checks of an address in a window (lockout)',
  storage: {
    toAttributes: ({ failures }) => ({ failures }),
    fromAttributes: (item) => {
      const parts = String(item.pk).split('#');
      return { email: parts.slice(1, -1).join('#'), window: Number(parts.at(-1)), failures: item.failures };
    },
  },
  parse: (value) => z.object({ email: z.string(), window: z.number().int(), failures: z.number().int() }).parse(value),
});

const guessesKey = (email: string, window: number) => PASSWORD_GUESSES.key([email, window]);

/**
 * Reserves one password check of an address BEFORE it is made: counted only while the window
 * has fewer than `max` (one conditional UpdateItem, so racing checks cannot pass the bound).
 * False when the address has none left in this window.
 */
export async function reservePasswordCheck(
  email: string,
  window: number,
  max: number,
  expiresAt: number,
): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: guessesKey(email, window),
        UpdateExpression: 'ADD failures :one SET #ttl = if_not_exists(#ttl, :ttl)',
        ConditionExpression: 'attribute_not_exists(failures) OR failures < :max',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':one': 1, ':max': max, ':ttl': expiresAt },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Gives a reservation back: the password was right. */
export async function releasePasswordCheck(email: string, window: number): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: guessesKey(email, window),
        UpdateExpression: 'ADD failures :minus',
        ConditionExpression: 'failures > :zero',
        ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
