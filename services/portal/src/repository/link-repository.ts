import { keyedHash } from '@svc/core';
import { defineEntity, type GuardedWrite, TTL_ATTRIBUTE } from '@svc/table';
import * as z from 'zod';

export const PORTAL_FLOWS = ['manage', 'payment_method', 'cancel'] as const;
export type PortalFlow = (typeof PORTAL_FLOWS)[number];
export const PORTAL_LOCALES = ['de', 'fr', 'it', 'en'] as const;
export type PortalLocale = (typeof PORTAL_LOCALES)[number];

/** A used or expired link stays this long (for "this link was used" pages), then TTL removes it. */
export const LINK_RETENTION_SECONDS = 7 * 86_400;

export const linkRecordSchema = z.object({
  /** The keyed hash of the token (the token itself is never stored). */
  token_hash: z.string(),
  organisation_uuid: z.string(),
  supporter_uuid: z.string(),
  /** The supporter's e-mail when the link was made: a changed address voids the link. */
  email: z.string(),
  flow: z.enum(PORTAL_FLOWS),
  subscription_uuid: z.string().optional(),
  return_url: z.string().optional(),
  locale: z.enum(PORTAL_LOCALES),
  created: z.number().int(),
  expires_at: z.number().int(),
  /** When its page's POST redeemed it: a link is redeemed once. */
  used_at: z.number().int().optional(),
});
export type PortalLinkRecord = z.infer<typeof linkRecordSchema>;

/**
 * A portal link, found by the keyed hash of its token. Bound to the organisation, the supporter,
 * the e-mail and the flow it was made for; valid 24 hours; redeemed once (a conditional write).
 */
export const PORTAL_LINK = defineEntity<PortalLinkRecord, string>({
  name: 'portal_link',
  summary: 'A donor’s link into the portal, by the keyed hash of its token (the token is never stored).',
  prefix: 'PORTAL_LINK',
  idShown: '<keyed hash of token>',
  sort: 'PORTAL_LINK',
  id: (link) => link.token_hash,
  idParts: (hash) => [hash],
  byKey: 'a portal link by its token',
  storage: {
    toAttributes: (link) => ({ ...link, [TTL_ATTRIBUTE]: link.expires_at + LINK_RETENTION_SECONDS }),
    fromAttributes: ({ [TTL_ATTRIBUTE]: _ttl, ...rest }) => rest,
  },
  parse: (value) => linkRecordSchema.parse(value),
});

/** The keyed hash a token is stored and found by (the stage's hash key, purpose `portal_link`). */
export const linkTokenHash = (token: string) => keyedHash('portal_link', token);

/** Why a redemption's condition failed: read the link again to tell (used, expired, gone). */
export class LinkNotRedeemableError extends Error {
  override name = 'LinkNotRedeemableError';
}

/**
 * Redeems a link, for the transaction that starts its session: only once (`used_at` absent) and
 * only before it expires, both in the write's condition, so of concurrent redemptions one wins.
 */
export function redeemLinkWrite(tokenHash: string, at: number): GuardedWrite {
  return {
    item: {
      Update: {
        Key: PORTAL_LINK.key(tokenHash),
        UpdateExpression: 'SET used_at = :at',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(used_at) AND expires_at > :at',
        ExpressionAttributeValues: { ':at': at },
      },
    },
    onConditionFailed: () => new LinkNotRedeemableError('The link was used, has expired or is gone'),
  };
}
