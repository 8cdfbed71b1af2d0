import { decoyHash, ForbiddenError, newToken, now, TooManyRequestsError, verifySecret } from '@svc/core';
import { transactWrite } from '@svc/table';
import {
  emailExists,
  findTicket,
  findUser,
  findUserByEmail,
  releasePasswordCheck,
  reservePasswordCheck,
  TICKET_LIFETIME_SECONDS,
  ticketWrite,
  type UserRecord,
} from '../repository/user-repository';
import { verifyCaptcha } from './captcha';

const wrongCredentials = () => new ForbiddenError('The e-mail address or the password is wrong');

/**
 * The e-mail existence check (contract: 204 exists, 404 not): only behind a captcha, so the
 * list of users cannot be harvested by script.
 */
export async function userExists(email: string, captchaToken: string): Promise<boolean> {
  if (!(await verifyCaptcha(captchaToken))) throw new ForbiddenError('The captcha was not solved');
  return emailExists(email);
}

/**
 * A user's password is checked at most PASSWORD_LOCKOUT.failures times wrongly per e-mail address
 * and clock-aligned window of PASSWORD_LOCKOUT.windowSeconds (service clock), whatever process or
 * page the checks come through; past it, every check of that address is refused with 429 until
 * the window ends, unverified, the right password too. Unknown addresses count the same, so
 * the refusal tells nothing about whether the address has a user. docs/API.md states the numbers.
 */
export const PASSWORD_LOCKOUT = { failures: 10, windowSeconds: 15 * 60 } as const;

/**
 * A user's credentials, checked in constant time: an unknown address costs the same scrypt
 * work as a wrong password, and both are the same 403. The check is reserved on the address
 * first (a conditional write) and given back when the password is right.
 */
export async function authenticateUser(email: string, password: string): Promise<UserRecord> {
  const { failures, windowSeconds } = PASSWORD_LOCKOUT;
  const at = now();
  const window = Math.floor(at / windowSeconds);
  const windowEnd = (window + 1) * windowSeconds;
  if (!(await reservePasswordCheck(email, window, failures, windowEnd + windowSeconds))) {
    throw new TooManyRequestsError(
      'Too many wrong passwords for this e-mail address; try again later',
      Math.max(1, windowEnd - at),
    );
  }
  const user = await findUserByEmail(email);
  const matches = await verifySecret(password, user?.password_hash ?? (await decoyHash()));
  if (!user || !matches) throw wrongCredentials();
  await releasePasswordCheck(email, window);
  return user;
}

/** After a sign-in on the hosted page: a short-lived ticket for this process's connect step. */
export async function issueTicket(user: UserRecord, processUuid: string): Promise<string> {
  const ticket = newToken(32);
  await transactWrite([{ item: ticketWrite(ticket, user.uuid, processUuid, now() + TICKET_LIFETIME_SECONDS) }]);
  return ticket;
}

/** The user a ticket was issued to, if it is for this process and has not expired. */
export async function redeemTicket(ticket: string, processUuid: string): Promise<UserRecord | undefined> {
  const found = ticket.length <= 100 ? await findTicket(ticket) : undefined;
  if (!found || found.process_uuid !== processUuid || now() >= found.expires_at) return undefined;
  return findUser(found.user_uuid);
}
