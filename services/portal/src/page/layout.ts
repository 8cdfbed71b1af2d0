import { createHash } from 'node:crypto';
import type { HttpResult } from '@svc/http';
import { PORTAL_LOCALES, type PortalLocale } from '../repository/link-repository';
import { html, raw, type SafeHtml } from './html';
import { HTML_LANG, LOCALE_NAMES, t } from './messages';
import { portalStyle } from './style';

/** How the organisation shows in its portal (settings.brand, its own name where the brand has none). */
export interface PortalBrand {
  name: string;
  /** `#rrggbb`. */
  color: string;
}

export interface PortalPageInput {
  locale: PortalLocale;
  brand: PortalBrand;
  /** The page's heading, also its `<title>` (with the organisation's name). */
  title: string;
  main: SafeHtml;
  /** The title says "Error:" first (a form sent back with errors, a refusal). */
  hasErrors?: boolean;
  /** The page's own GET path without `locale`: the language switcher links to it in each locale. */
  selfPath?: string;
  /** The session's CSRF token, once a session exists: every such page carries it. */
  csrfToken?: string;
  /** Where the donor goes back to the organisation (an https URL: the session's return_url). */
  returnUrl?: string;
}

/** A rendered page and the Content-Security-Policy that lets exactly its own style apply. */
export interface RenderedPage {
  html: string;
  contentSecurityPolicy: string;
}

/** The same page in another language. */
export function languageHref(selfPath: string, locale: PortalLocale): string {
  return `${selfPath}${selfPath.includes('?') ? '&' : '?'}locale=${locale}`;
}

function languageSwitcher(locale: PortalLocale, selfPath: string): SafeHtml {
  const items = PORTAL_LOCALES.map(
    (l) =>
      html`<li><a href="${languageHref(selfPath, l)}" hreflang="${HTML_LANG[l]}" lang="${HTML_LANG[l]}"${
        l === locale ? html` aria-current="true"` : ''
      }>${LOCALE_NAMES[l]}</a></li>`,
  );
  return html`<nav class="languages" aria-label="${t(locale, 'language_switcher')}"><ul>${items}</ul></nav>`;
}

function httpsUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The document every portal page shares: the organisation's name on its colour, the language
 * switcher, the page's main content, and a way back to the organisation. Server-rendered, no
 * script; the subscription pages render their content into it the same way.
 */
export function renderPortalPage(input: PortalPageInput): RenderedPage {
  const { locale, brand } = input;
  const style = portalStyle(brand.color);
  const pageTitle = t(locale, 'doc_title', { page: input.title, organisation: brand.name });
  const back = httpsUrl(input.returnUrl);
  const document = html`<!doctype html>
<html lang="${HTML_LANG[locale]}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
${input.csrfToken ? html`<meta name="csrf-token" content="${input.csrfToken}">\n` : ''}<title>${
    input.hasErrors ? t(locale, 'doc_title_error', { title: pageTitle }) : pageTitle
  }</title>
<style>${raw(style)}</style>
</head>
<body>
<a class="skip-link" href="#main">${t(locale, 'skip_link')}</a>
<header class="brand"><div class="brand-inner">
<p class="brand-name">${brand.name}</p>
${input.selfPath === undefined ? '' : languageSwitcher(locale, input.selfPath)}
</div></header>
<div class="page">
<main id="main" tabindex="-1">
${input.main}
</main>
${back ? html`<footer><a href="${back}">${t(locale, 'return_to', { organisation: brand.name })}</a></footer>\n` : ''}</div>
</body>
</html>
`;
  const digest = createHash('sha256').update(style, 'utf8').digest('base64');
  return {
    html: document.value,
    contentSecurityPolicy: [
      "default-src 'none'",
      `style-src 'sha256-${digest}'`,
      "img-src 'self'",
      "form-action 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join('; '),
  };
}

/**
 * A page as the answer: never cached (it can carry a token or a session's data), its own
 * policy; the HTTP stack adds the security headers every page has (@svc/http page-headers.ts:
 * frame-ancestors 'none', X-Frame-Options DENY, nosniff, no referrer).
 */
export function pageResult(
  status: number,
  page: RenderedPage,
  extra: { cookies?: readonly string[]; headers?: Record<string, string> } = {},
): HttpResult {
  return {
    status,
    html: page.html,
    headers: {
      'cache-control': 'no-store',
      'content-security-policy': page.contentSecurityPolicy,
      ...(extra.headers ?? {}),
    },
    ...(extra.cookies && extra.cookies.length > 0 ? { cookies: [...extra.cookies] } : {}),
  };
}
