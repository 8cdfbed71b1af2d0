/**
 * The dynamic redirect after an onboarding.
 *
 * Reading of rule 5 ("same host as the base URL registered for the partner; a base URL beginning
 * with www needs a target beginning with www; a base URL that is a subdomain needs a target that
 * is a subdomain"): the target's host must be exactly the base URL's host, and its port exactly
 * the base URL's port. Hosts are compared in the form the WHATWG URL parser gives them (lower
 * case, IDN as punycode, IPv4 in dotted decimal) and the default port 443 counts as no port. The
 * www and subdomain sentences are read as consequences of "same host", never as permissions:
 *
 * - base `www.partner.org`: only `www.partner.org` (not `partner.org`, not `shop.partner.org`);
 * - base `crm.partner.org` (three or more labels, not starting with `www.`): only that same
 *   subdomain (not `partner.org`, not `other.partner.org`, not `a.crm.partner.org`);
 * - base `partner.org` (an apex, two labels): only `partner.org` (not `www.partner.org`).
 *
 * Classifying the base host (www, subdomain, apex) only chooses the message of a refusal: without
 * a public-suffix list `partner.co.uk` counts as a subdomain, which changes nothing since the host
 * must be equal anyway. A trailing dot makes a different host (`partner.org.` is refused for the
 * base `partner.org`). Beyond the parser, the raw target is refused when it has userinfo, a
 * backslash, whitespace or control characters, a percent sign in the host part, or does not
 * begin with `https://` itself, so that no other URL parser could read a different host in it.
 */

export type RedirectValidation = { ok: true; url: string } | { ok: false; reason: string };

/** Longest decoded target accepted; a Location header far beyond this is not portable. */
export const MAX_REDIRECT_URL_LENGTH = 4096;

const STANDARD = /^[A-Za-z0-9+/]*={0,2}$/;
const URL_SAFE = /^[A-Za-z0-9_-]*={0,2}$/;

/**
 * Rule 3: the `redirect_url` parameter as base64 of the target URL, standard or URL-safe alphabet,
 * padding optional. A space is read as `+`, which form decoding of a query string turns into a
 * space. Returns undefined for anything that is not canonical base64 of non-empty UTF-8 text.
 */
export function decodeRedirectParam(param: string | undefined): string | undefined {
  if (typeof param !== 'string' || param.length === 0) return undefined;
  if (param.length > Math.ceil((MAX_REDIRECT_URL_LENGTH * 4) / 3) + 4) return undefined;
  const encoded = param.replaceAll(' ', '+');
  if (!STANDARD.test(encoded) && !URL_SAFE.test(encoded)) return undefined;
  const unpadded = encoded.replace(/=+$/, '');
  if (unpadded.length % 4 === 1) return undefined;
  if (unpadded.length !== encoded.length && encoded.length % 4 !== 0) return undefined;
  const standard = unpadded.replaceAll('-', '+').replaceAll('_', '/');
  const bytes = Buffer.from(standard, 'base64');
  // Canonical only: re-encoding must give the input back (no stray bits in the last character).
  if (bytes.toString('base64').replace(/=+$/, '') !== standard) return undefined;
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    return text.length > 0 ? text : undefined;
  } catch {
    return undefined;
  }
}

function parse(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

type HostKind = 'www' | 'subdomain' | 'apex' | 'address';

function hostKind(hostname: string): HostKind {
  const name = hostname.replace(/\.$/, '');
  if (name.startsWith('[') || /^\d+(\.\d+){3}$/.test(name)) return 'address';
  if (name.startsWith('www.')) return 'www';
  return name.split('.').length >= 3 ? 'subdomain' : 'apex';
}

function hostMismatch(base: URL): string {
  switch (hostKind(base.hostname)) {
    case 'www':
      return `The redirect URL must have the host ${base.hostname}, which begins with www like the base URL.`;
    case 'subdomain':
      return `The redirect URL must have the host ${base.hostname}, the same subdomain as the base URL.`;
    default:
      return `The redirect URL must have the host ${base.hostname}, the host of the base URL.`;
  }
}

/** Rules 4 and 5: an https URL on exactly the partner's registered host and port. */
export function validateRedirect(target: string, partnerBaseUrl: string): RedirectValidation {
  if (typeof target !== 'string' || target.length === 0) return { ok: false, reason: 'The redirect URL is empty.' };
  if (target.length > MAX_REDIRECT_URL_LENGTH) {
    return { ok: false, reason: `The redirect URL is longer than ${MAX_REDIRECT_URL_LENGTH} characters.` };
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused here.
  if (/[\u0000-\u0020\u007f-\u009f\u2028\u2029\\]/.test(target)) {
    return { ok: false, reason: 'The redirect URL contains whitespace, control characters or backslashes.' };
  }
  if (!/^https:\/\//i.test(target)) {
    return { ok: false, reason: 'The redirect URL must begin with https://.' };
  }
  const authority = target.slice('https://'.length).split(/[/?#]/, 1)[0] ?? '';
  if (authority.includes('@'))
    return { ok: false, reason: 'The redirect URL must not contain a user name or password.' };
  if (authority.includes('%'))
    return { ok: false, reason: 'The host of the redirect URL must not be percent-encoded.' };
  const url = parse(target);
  if (!url) return { ok: false, reason: 'The redirect URL is not a valid URL.' };
  if (url.protocol !== 'https:') return { ok: false, reason: 'The redirect URL must use https.' };
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'The redirect URL must not contain a user name or password.' };
  }
  const base = parse(partnerBaseUrl);
  if (!base || (base.protocol !== 'https:' && base.protocol !== 'http:') || base.hostname === '') {
    return { ok: false, reason: 'The partner has no valid base URL.' };
  }
  if (url.hostname !== base.hostname) return { ok: false, reason: hostMismatch(base) };
  if (url.port !== base.port) {
    return { ok: false, reason: `The redirect URL must use the port of the base URL (${base.port || 'the default'}).` };
  }
  return { ok: true, url: url.href };
}

/**
 * Rule 6: where to send the user after the connection: the decoded `redirect_url` when it passes
 * validation, otherwise the partner's registered base URL.
 */
export function redirectTarget(param: string | undefined, partnerBaseUrl: string): string {
  const decoded = decodeRedirectParam(param);
  if (decoded === undefined) return partnerBaseUrl;
  const validation = validateRedirect(decoded, partnerBaseUrl);
  return validation.ok ? validation.url : partnerBaseUrl;
}
