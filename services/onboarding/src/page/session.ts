import { timingSafeEqual } from 'node:crypto';
import { newToken } from '@svc/core';

/**
 * CSRF protection of the hosted page's forms: a double-submit token. Every page sets (or keeps)
 * a random value in an HttpOnly, SameSite=Strict cookie scoped to `/connect` and carries the same
 * value in each form's hidden `csrf` field; a POST is accepted only when both are present and
 * equal. Another site can neither read the cookie nor make the browser send it, so it cannot
 * forge a matching pair.
 */
export const CSRF_COOKIE = 'svc_connect_csrf';
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{32,64}$/;

export interface CsrfState {
  value: string;
  /** The Set-Cookie value when the cookie is new. */
  setCookie?: string;
}

export function csrfState(cookies: Readonly<Record<string, string>>, secure: boolean): CsrfState {
  const current = cookies[CSRF_COOKIE];
  if (current && TOKEN_PATTERN.test(current)) return { value: current };
  const value = newToken(32);
  const attributes = ['Path=/connect', 'HttpOnly', 'SameSite=Strict', 'Max-Age=86400', ...(secure ? ['Secure'] : [])];
  return { value, setCookie: [`${CSRF_COOKIE}=${value}`, ...attributes].join('; ') };
}

export function csrfValid(cookies: Readonly<Record<string, string>>, submitted: string | undefined): boolean {
  const expected = cookies[CSRF_COOKIE];
  if (!expected || !submitted || !TOKEN_PATTERN.test(expected)) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}
