/**
 * The one security header set of every HTML page the API answers (the hosted onboarding page,
 * the simulated 3-D Secure / TWINT pages, the providers' return pages, /docs): none may be
 * framed by another site (clickjacking: `frame-ancestors 'none'`, and `X-Frame-Options: DENY`
 * for browsers that predate CSP level 2), none is sniffed as another type, and none leaks its
 * address (a page's URL may carry a token) to where it links.
 */
export const PAGE_SECURITY_HEADERS = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

/** A page without a policy of its own: nothing to frame it, no plugins, no base rewrite. */
const DEFAULT_POLICY = "frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

/**
 * A page's own `Content-Security-Policy` is kept, directive for directive, except that its
 * `frame-ancestors` (if any) becomes `'none'`; a page without one gets DEFAULT_POLICY.
 */
export function pagePolicy(own: string | undefined): string {
  if (!own?.trim()) return DEFAULT_POLICY;
  const directives = own
    .split(';')
    .map((d) => d.trim())
    .filter((d) => d !== '' && !/^frame-ancestors(\s|$)/i.test(d));
  return [...directives, "frame-ancestors 'none'"].join('; ');
}

/** The headers of an HTML answer: the page's own, with the security set over them. */
export function withPageSecurity(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  let policy: string | undefined;
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === 'content-security-policy') policy = value;
    else if (!(lower in PAGE_SECURITY_HEADERS)) out[name] = value;
  }
  return { ...out, ...PAGE_SECURITY_HEADERS, 'content-security-policy': pagePolicy(policy) };
}
