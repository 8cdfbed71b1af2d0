import { randomBytes } from 'node:crypto';
import { ConflictError, now, type Principal, ValidationError } from '@svc/core';
import { getSupporter } from '@svc/supporters';
import { transactWrite } from '@svc/table';
import * as z from 'zod';
import {
  linkTokenHash,
  PORTAL_FLOWS,
  PORTAL_LINK,
  PORTAL_LOCALES,
  type PortalLinkRecord,
  type PortalLocale,
} from '../repository/link-repository';
import { httpsUrl, settingsOf } from './settings';

/** A link is valid 24 hours from when it is made (contract section 12). */
export const LINK_LIFETIME_SECONDS = 24 * 3_600;

/** 256 random bits, base64url: far past the 128 bits a token must have, and URL-safe. */
const TOKEN_BYTES = 32;

export const portalLinkInput = z.strictObject({
  flow: z.enum(PORTAL_FLOWS),
  subscription_uuid: z.uuid().optional(),
  return_url: httpsUrl.optional(),
  locale: z.enum(PORTAL_LOCALES).optional(),
  send_email: z.boolean().optional(),
});
export type PortalLinkInput = z.infer<typeof portalLinkInput>;

/** The donor's language: the one asked for, else the supporter's, else English. */
export function portalLocale(asked: PortalLocale | undefined, supporterLocale: unknown): PortalLocale {
  if (asked) return asked;
  const language = typeof supporterLocale === 'string' ? supporterLocale.slice(0, 2).toLowerCase() : '';
  return (PORTAL_LOCALES as readonly string[]).includes(language) ? (language as PortalLocale) : 'en';
}

/**
 * Makes a link for a supporter: the caller needs a grant on the supporter's organisation, the
 * organisation's portal must be on, and the supporter must have an e-mail (the link and every
 * code the portal sends are bound to it). The token is returned once, in the URL; only its keyed
 * hash is kept.
 */
export async function createPortalLink(
  principal: Promise<Principal>,
  supporterUuid: string,
  input: PortalLinkInput,
  baseUrl: string,
): Promise<{ url: string; expires_at: number; link: PortalLinkRecord }> {
  if (input.send_email) {
    // Until the mail component is wired in (issue 47, point 4), a link is never silently unsent.
    throw ValidationError.field('send_email', 'error.portal.mail_unavailable', 'Links cannot be e-mailed yet');
  }
  const supporter = await getSupporter(principal, supporterUuid);
  const settings = await settingsOf(supporter.organisation_uuid);
  if (!settings.enabled) {
    throw new ConflictError('The organisation’s donor portal is not enabled', 'error.portal.disabled', 'enabled');
  }
  const email = typeof supporter.email === 'string' ? supporter.email.trim().toLowerCase() : '';
  if (!email) {
    throw ValidationError.field(
      'supporter_uuid',
      'error.portal.no_email',
      'The supporter has no e-mail address: portal links and codes go to it',
    );
  }
  const created = now();
  const { token, link } = await newPortalLink({
    organisation_uuid: supporter.organisation_uuid,
    supporter_uuid: supporter.uuid,
    email,
    flow: input.flow,
    ...(input.subscription_uuid ? { subscription_uuid: input.subscription_uuid } : {}),
    ...((input.return_url ?? settings.return_url) ? { return_url: input.return_url ?? settings.return_url ?? '' } : {}),
    locale: portalLocale(input.locale, supporter.locale),
    created,
    expires_at: created + LINK_LIFETIME_SECONDS,
  });
  await transactWrite([PORTAL_LINK.create(link)]);
  return { url: portalUrl(baseUrl, token), expires_at: link.expires_at, link };
}

/**
 * A new link's token and its record, not yet written: the token goes into the URL only, the
 * record keeps its keyed hash. The caller has checked the supporter, its e-mail and the settings
 * (createPortalLink above; a charge reminder, reminders.ts).
 */
export async function newPortalLink(
  fields: Omit<PortalLinkRecord, 'token_hash'>,
): Promise<{ token: string; link: PortalLinkRecord }> {
  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  return { token, link: { token_hash: await linkTokenHash(token), ...fields } };
}

/** The address of a link: the portal's page, which redeems the token only on its button's POST. */
export const portalUrl = (baseUrl: string, token: string) => `${baseUrl}/portal?token=${token}`;
