import { randomBytes } from 'node:crypto';
import { ConflictError, logger, now, type Principal, ValidationError } from '@svc/core';
import { enqueueMail, mailOutboxWrite, type QueueMailInput } from '@svc/mail';
import { getSupporter, type Supporter } from '@svc/supporters';
import { transactWrite } from '@svc/table';
import * as z from 'zod';
import { contrastRatio, TEXT_CONTRAST, WHITE } from '../page/contrast';
import {
  linkTokenHash,
  PORTAL_FLOWS,
  PORTAL_LINK,
  PORTAL_LOCALES,
  type PortalLinkRecord,
  type PortalLocale,
} from '../repository/link-repository';
import { type Brand, brandOf } from './brand';
import { httpsUrl, type PortalSettings } from './settings';

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

/** The supporter's e-mail as stored, trimmed ('' without one). */
const emailOf = (supporter: Supporter) => (typeof supporter.email === 'string' ? supporter.email.trim() : '');

/** The mail that carries a link: one per link (its id is the link's), in the link's locale. */
function linkMail(link: PortalLinkRecord, to: string, url: string, brand: Brand): QueueMailInput<'portal_link'> {
  return {
    id: `portal_link:${link.token_hash}`,
    to,
    locale: link.locale,
    template: 'portal_link',
    data: {
      organisation_name: brand.name,
      url,
      expires_at: link.expires_at,
      // The mail's button has white text: the brand colour only where white is readable on it.
      ...(contrastRatio(brand.color, WHITE) >= TEXT_CONTRAST ? { brand_color: brand.color } : {}),
    },
  };
}

export interface IssuedLink {
  url: string;
  expires_at: number;
  link: PortalLinkRecord;
}

/**
 * Makes a link for a supporter whose organisation's portal is on and who has an e-mail; with
 * `mail`, the link and its mail's outbox item are written in one transaction (a link is mailed
 * exactly when it exists), then the mail is queued. The token is in the URL only; only its keyed
 * hash is kept.
 */
export async function issueLink(
  supporter: Supporter,
  brand: Brand & { settings: PortalSettings },
  input: Omit<PortalLinkInput, 'send_email'>,
  baseUrl: string,
  mail: boolean,
): Promise<IssuedLink> {
  const email = emailOf(supporter);
  const created = now();
  const returnUrl = input.return_url ?? brand.settings.return_url ?? undefined;
  const { token, link } = await newPortalLink({
    organisation_uuid: supporter.organisation_uuid,
    supporter_uuid: supporter.uuid,
    email: email.toLowerCase(),
    flow: input.flow,
    ...(input.subscription_uuid ? { subscription_uuid: input.subscription_uuid } : {}),
    ...(returnUrl ? { return_url: returnUrl } : {}),
    locale: portalLocale(input.locale, supporter.locale),
    created,
    expires_at: created + LINK_LIFETIME_SECONDS,
  });
  const url = portalUrl(baseUrl, token);
  if (!mail) {
    await transactWrite([PORTAL_LINK.create(link)]);
    return { url, expires_at: link.expires_at, link };
  }
  const message = linkMail(link, email, url, brand);
  await transactWrite([PORTAL_LINK.create(link), { item: mailOutboxWrite(message, created) }]);
  try {
    await enqueueMail(message.id);
  } catch (error) {
    // Written with its link: the mail sweeper sends it (at most 15 minutes late).
    logger.warn('A portal link mail was written but not queued; the sweeper sends it', { error: error as Error });
  }
  return { url, expires_at: link.expires_at, link };
}

/**
 * `POST /supporters/{uuid}/portal-links`: the caller needs a grant on the supporter's
 * organisation, the organisation's portal must be on, and the supporter must have an e-mail (the
 * link and every code the portal sends are bound to it). `send_email` also mails the link.
 */
export async function createPortalLink(
  principal: Promise<Principal>,
  supporterUuid: string,
  input: PortalLinkInput,
  baseUrl: string,
): Promise<IssuedLink> {
  const supporter = await getSupporter(principal, supporterUuid);
  const brand = await brandOf(supporter.organisation_uuid);
  if (!brand?.settings.enabled) {
    throw new ConflictError('The organisation’s donor portal is not enabled', 'error.portal.disabled', 'enabled');
  }
  if (!emailOf(supporter)) {
    throw ValidationError.field(
      'supporter_uuid',
      'error.portal.no_email',
      'The supporter has no e-mail address: portal links and codes go to it',
    );
  }
  const { send_email: sendEmail, ...link } = input;
  try {
    return await issueLink(supporter, brand, link, baseUrl, sendEmail === true);
  } catch (error) {
    if (error instanceof ValidationError && error.details.some((detail) => detail.property === 'to')) {
      throw ValidationError.field(
        'send_email',
        'error.portal.email_not_sendable',
        'The supporter’s e-mail address cannot be sent to; make the link without send_email',
      );
    }
    throw error;
  }
}

/**
 * A new link's token and its record, not yet written: the token goes into the URL only, the
 * record keeps its keyed hash. The caller has checked the supporter, its e-mail and the settings
 * (issueLink above; a charge reminder, reminders.ts).
 */
export async function newPortalLink(
  fields: Omit<PortalLinkRecord, 'token_hash'>,
): Promise<{ token: string; link: PortalLinkRecord }> {
  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  return { token, link: { token_hash: await linkTokenHash(token), ...fields } };
}

/** The address of a link: the portal's page, which redeems the token only on its button's POST. */
export const portalUrl = (baseUrl: string, token: string) => `${baseUrl}/portal?token=${token}`;
