import { newToken, now } from '@svc/core';
import { findSupporter, supporterEmailUnchanged } from '@svc/supporters';
import { transactWrite } from '@svc/table';
import { settingsOf } from '../domain/settings';
import {
  LinkNotRedeemableError,
  linkTokenHash,
  PORTAL_LINK,
  type PortalLinkRecord,
  redeemLinkWrite,
} from '../repository/link-repository';
import { type PortalSessionRecord, sessionHash, sessionWrite } from './session-repository';
import { type PortalSession, SESSION_MAX_SECONDS, sessionView } from './sessions';

/** Why a link does not open the portal. */
export type LinkProblem = 'unknown' | 'used' | 'expired' | 'revoked' | 'disabled';

export type LinkLookup =
  | { ok: true; link: PortalLinkRecord }
  | { ok: false; problem: LinkProblem; link?: PortalLinkRecord };

/** A link's token as createPortalLink makes it (32 bytes, base64url): nothing else is looked up. */
const LINK_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** Concurrent redemptions that cancel each other's transactions read the link again this often. */
const MAX_ATTEMPTS = 4;

/** The link a token names, if it can still be redeemed at `at`; else why not (a read only). */
export async function lookupLink(token: string | undefined, at = now()): Promise<LinkLookup> {
  if (!token || !LINK_TOKEN.test(token)) return { ok: false, problem: 'unknown' };
  const link = await PORTAL_LINK.find(await linkTokenHash(token));
  if (!link) return { ok: false, problem: 'unknown' };
  if (link.used_at !== undefined) return { ok: false, problem: 'used', link };
  if (at >= link.expires_at) return { ok: false, problem: 'expired', link };
  return { ok: true, link };
}

class EmailChangedError extends Error {
  override name = 'EmailChangedError';
}

/** A transaction cancelled for something other than a condition we named (another one's conflict). */
function isCancelled(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'TransactionCanceledException';
}

export type Redemption =
  | { ok: true; sessionId: string; session: PortalSession }
  | { ok: false; problem: LinkProblem; link?: PortalLinkRecord };

/**
 * Redeems a link and starts its session, in one transaction: the link marked used (only if unused
 * and unexpired), the supporter checked to have still the e-mail the link was made for, the
 * session written. Of concurrent redemptions of one link exactly one starts a session; the
 * others find the link used. A portal switched off, or a supporter gone or with another e-mail,
 * redeems nothing.
 */
export async function redeemLink(token: string | undefined): Promise<Redemption> {
  for (let attempt = 1; ; attempt++) {
    const at = now();
    const found = await lookupLink(token, at);
    if (!found.ok) return found;
    const { link } = found;
    const [supporter, settings] = await Promise.all([
      findSupporter(link.supporter_uuid),
      settingsOf(link.organisation_uuid),
    ]);
    if (!settings.enabled) return { ok: false, problem: 'disabled', link };
    const email = supporter?.email;
    if (
      !supporter ||
      email === undefined ||
      supporter.organisation_uuid !== link.organisation_uuid ||
      email.trim().toLowerCase() !== link.email
    ) {
      return { ok: false, problem: 'revoked', link };
    }
    const sessionId = newToken(32);
    const record: PortalSessionRecord = {
      session_hash: await sessionHash(sessionId),
      organisation_uuid: link.organisation_uuid,
      supporter_uuid: link.supporter_uuid,
      email: link.email,
      locale: link.locale,
      flow: link.flow,
      ...(link.subscription_uuid ? { subscription_uuid: link.subscription_uuid } : {}),
      ...(link.return_url ? { return_url: link.return_url } : {}),
      csrf_token: newToken(32),
      created: at,
      last_seen: at,
      expires_at: at + SESSION_MAX_SECONDS,
    };
    try {
      await transactWrite([
        redeemLinkWrite(link.token_hash, at),
        { item: supporterEmailUnchanged(supporter.uuid, email), onConditionFailed: () => new EmailChangedError() },
        sessionWrite(record),
      ]);
      return { ok: true, sessionId, session: sessionView(record) };
    } catch (error) {
      if (error instanceof EmailChangedError) return { ok: false, problem: 'revoked', link };
      // Lost to another redemption (the link's condition, or the transactions' conflict): the
      // next round reads the link again and finds it used, or tries once more.
      const lost = error instanceof LinkNotRedeemableError || isCancelled(error);
      if (!lost || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}
