/** The Content-Security-Policy of the connect page: no inline script or style anywhere. */
import type { Captcha, PageContext } from './types';

const RECAPTCHA_ORIGINS = ['https://www.google.com', 'https://www.gstatic.com'];

/** The origin of an http(s) URL, or undefined; keeps anything odd out of the header. */
function origin(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `Content-Security-Policy` header value. `partnerOrigin` (one or several URLs or origins)
 * joins `form-action`, as the form's answer redirects there. With reCAPTCHA, Google's origins are
 * allowed for scripts and frames. The context is accepted for future per-page rules.
 */
export function cspFor(
  _ctx: PageContext | undefined,
  captcha: Captcha | undefined,
  partnerOrigin: string | readonly string[] | undefined,
): string {
  const partners = (typeof partnerOrigin === 'string' ? [partnerOrigin] : (partnerOrigin ?? []))
    .map(origin)
    .filter((o): o is string => o !== undefined);
  const recaptcha = captcha?.kind === 'recaptcha';
  const directives = [
    "default-src 'none'",
    "style-src 'self'",
    ['script-src', "'self'", ...(recaptcha ? RECAPTCHA_ORIGINS : [])].join(' '),
    "img-src 'self' data:",
    ...(recaptcha ? [['frame-src', ...RECAPTCHA_ORIGINS].join(' ')] : []),
    ['form-action', "'self'", ...new Set(partners)].join(' '),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ];
  return directives.join('; ');
}
