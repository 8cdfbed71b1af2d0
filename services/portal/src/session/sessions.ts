import { timingSafeEqual } from 'node:crypto';
import { ForbiddenError, now, UnauthorizedError } from '@svc/core';
import type { PortalFlow, PortalLocale } from '../repository/link-repository';
import {
  deleteSession,
  PORTAL_SESSION,
  type PortalSessionRecord,
  sessionHash,
  touchSession,
} from './session-repository';

/** 30 minutes without a request end a session (contract section 12). */
export const SESSION_IDLE_SECONDS = 30 * 60;
/** However active, a session lasts 2 hours at most. */
export const SESSION_MAX_SECONDS = 2 * 3_600;
/** `last_seen` is written at most once a minute: a session's idle end is exact to the minute. */
export const SESSION_TOUCH_SECONDS = 60;

/**
 * The session cookie: HttpOnly (no script reads it), Secure, SameSite=Strict (no other site's
 * page or form sends it) and scoped to /portal. Its value is the session id (256 random bits);
 * the table keeps only its keyed hash.
 */
export const SESSION_COOKIE = 'svc_portal_session';
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** A signed-in donor, as the portal's pages and JSON API see them. */
export interface PortalSession {
  organisation_uuid: string;
  supporter_uuid: string;
  locale: PortalLocale;
  /** Sent back by every state-changing request: `X-CSRF-Token` (JSON) or `csrf_token` (forms). */
  csrf_token: string;
  flow: PortalFlow;
  subscription_uuid?: string;
  return_url?: string;
}

/** What a handler gives the session functions: the request's cookies (and, for CSRF, headers and form). */
export interface SessionRequest {
  cookies: Readonly<Record<string, string>>;
}

export function sessionCookie(id: string): string {
  return `${SESSION_COOKIE}=${id}; Path=/portal; HttpOnly; Secure; SameSite=Strict; Max-Age=${SESSION_MAX_SECONDS}`;
}

/** Removes the session cookie (signing out, a session found ended). */
export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/portal; HttpOnly; Secure; SameSite=Strict; Max-Age=0`;
}

export function sessionView(record: PortalSessionRecord): PortalSession {
  return {
    organisation_uuid: record.organisation_uuid,
    supporter_uuid: record.supporter_uuid,
    locale: record.locale,
    csrf_token: record.csrf_token,
    flow: record.flow,
    ...(record.subscription_uuid ? { subscription_uuid: record.subscription_uuid } : {}),
    ...(record.return_url ? { return_url: record.return_url } : {}),
  };
}

/** A request's session: active, ended (idle, too old: its organisation and locale still known), or none. */
export type SessionState =
  | { state: 'active'; session: PortalSession }
  | { state: 'ended'; organisation_uuid: string; locale: PortalLocale }
  | { state: 'none' };

/** Why a session is over at `at`, if it is. */
function ended(record: PortalSessionRecord, at: number): boolean {
  return at >= record.expires_at || at - record.last_seen >= SESSION_IDLE_SECONDS;
}

/**
 * The session the request's cookie names. An active one's `last_seen` moves forward (at most one
 * write a minute per session); an idle or too old one is ended, whatever is stored.
 */
export async function readPortalSession(request: SessionRequest): Promise<SessionState> {
  const id = request.cookies[SESSION_COOKIE];
  if (!id || !SESSION_ID.test(id)) return { state: 'none' };
  const hash = await sessionHash(id);
  const record = await PORTAL_SESSION.find(hash);
  if (!record) return { state: 'none' };
  const at = now();
  if (ended(record, at)) return { state: 'ended', organisation_uuid: record.organisation_uuid, locale: record.locale };
  if (at - record.last_seen >= SESSION_TOUCH_SECONDS) await touchSession(hash, at);
  return { state: 'active', session: sessionView(record) };
}

/**
 * The signed-in donor of a JSON request: 401 (`{"message"}`) without an active session (no
 * cookie, an unknown one, idle for 30 minutes, or older than 2 hours).
 */
export async function requirePortalSession(request: SessionRequest): Promise<PortalSession> {
  const found = await readPortalSession(request);
  if (found.state === 'active') return found.session;
  throw new UnauthorizedError(
    found.state === 'ended' ? 'The portal session has ended; ask for a new link' : 'No portal session',
  );
}

/**
 * Holds a state-changing request to its session's CSRF token (timing-safe): the `X-CSRF-Token`
 * header (the JSON API; every portal page carries the token in `<meta name="csrf-token">`) or
 * the form's `csrf_token` field (the pages' forms). 403 when neither matches.
 */
export function checkCsrf(
  request: { headers: Readonly<Record<string, string | undefined>>; body?: unknown },
  session: Pick<PortalSession, 'csrf_token'>,
): void {
  const header = request.headers['x-csrf-token'];
  const field =
    typeof request.body === 'object' && request.body !== null
      ? (request.body as Record<string, unknown>).csrf_token
      : undefined;
  const given = header ?? (typeof field === 'string' ? field : undefined);
  if (!given || !sameToken(given, session.csrf_token)) {
    throw new ForbiddenError('The CSRF token is missing or does not match the portal session');
  }
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Signs out: the request's session is deleted (if any). */
export async function endPortalSession(request: SessionRequest): Promise<void> {
  const id = request.cookies[SESSION_COOKIE];
  if (id && SESSION_ID.test(id)) await deleteSession(await sessionHash(id));
}
