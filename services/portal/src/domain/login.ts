import { logger, now } from '@svc/core';
import { addressKey } from '@svc/http';
import { findSupporterByEmail } from '@svc/supporters';
import * as z from 'zod';
import { countLoginRequest, type LoginLimit } from '../repository/login-limit-repository';
import { brandOf } from './brand';
import { issueLink } from './links';

/**
 * The login limits (contract section 12: at least 5 requests per e-mail per 15 minutes and 20
 * per address per minute, then 429), in clock-aligned windows of the service clock. The address
 * is the caller's as the per-address limits key it (@svc/http addressKey: an IPv6 address by its
 * /64), so one host cannot step around its limit by walking its interface identifier.
 */
export const LOGIN_LIMITS: Readonly<Record<'email' | 'address', LoginLimit>> = {
  email: { max: 5, windowSeconds: 15 * 60 },
  address: { max: 20, windowSeconds: 60 },
};

export const loginInput = z.strictObject({
  organisation_uuid: z.uuid(),
  email: z.email().max(254),
});
export type LoginInput = z.infer<typeof loginInput>;

/**
 * `POST /portal/login`: mails a fresh `manage` link to the newest supporter of the organisation
 * with this e-mail, if there is one and the portal is on. The caller learns nothing either way:
 * the counts come first and are the same for every request, both ways read the same items (the
 * e-mail index, the settings, the organisation), the mail is queued (never sent inline), and a
 * failure after the counts is logged, not answered. Past a limit: 429 (TooManyRequestsError),
 * with nothing else done.
 */
export async function requestLoginLink(input: LoginInput, callerAddress: string, baseUrl: string): Promise<void> {
  const at = now();
  const email = input.email.trim().toLowerCase();
  const organisationUuid = input.organisation_uuid.toLowerCase();
  // The address first: a caller over its own limit spends nothing of the e-mail's.
  await countLoginRequest('address', addressKey(callerAddress), LOGIN_LIMITS.address, at);
  await countLoginRequest('email', email, LOGIN_LIMITS.email, at);
  try {
    const [supporter, brand] = await Promise.all([
      findSupporterByEmail(organisationUuid, email),
      brandOf(organisationUuid),
    ]);
    if (!supporter || !brand?.settings.enabled) return;
    await issueLink(supporter, brand, { flow: 'manage' }, baseUrl, true);
  } catch (error) {
    logger.error('A portal login link could not be made or mailed', { error: error as Error });
  }
}
