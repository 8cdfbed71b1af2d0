import { timingSafeEqual } from 'node:crypto';
import { newToken } from '@svc/core';

/**
 * CSRF protection of the portal's forms before a session exists (the link page's "Continue"): a
 * double-submit token. The page sets (or keeps) a random value in an HttpOnly, Secure,
 * SameSite=Strict cookie scoped to /portal and puts the same value in the form's hidden `csrf`
 * field; the POST is taken only when both are there and equal. Another site can neither read the
 * cookie nor make the browser send it, so it cannot forge a matching pair (and so cannot sign a
 * donor in with a link of its own). Once a session exists, its own token takes over (sessions.ts
 * checkCsrf).
 */
export const FORM_CSRF_COOKIE = 'svc_portal_csrf';
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** As long as the link it serves: a page left open for a day still works. */
const MAX_AGE_SECONDS = 86_400;

export interface FormCsrf {
  value: string;
  /** The Set-Cookie value when the cookie is new. */
  setCookie?: string;
}

export function formCsrf(cookies: Readonly<Record<string, string>>): FormCsrf {
  const current = cookies[FORM_CSRF_COOKIE];
  if (current && TOKEN_PATTERN.test(current)) return { value: current };
  const value = newToken(32);
  return {
    value,
    setCookie: `${FORM_CSRF_COOKIE}=${value}; Path=/portal; HttpOnly; Secure; SameSite=Strict; Max-Age=${MAX_AGE_SECONDS}`,
  };
}

export function formCsrfValid(cookies: Readonly<Record<string, string>>, submitted: string | undefined): boolean {
  const expected = cookies[FORM_CSRF_COOKIE];
  if (!expected || !submitted || !TOKEN_PATTERN.test(expected)) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}
