/** The document shell shared by every page: head, partner header, language switcher, footer. */
import { assetPath } from './assets';
import { html, type SafeHtml, safeHref, safePath } from './html';
import { htmlLang, LOCALE_NAMES, PAGE_LOCALES, type PageLocale, t } from './messages';
import type { PartnerView } from './types';

export interface LayoutInput {
  locale: PageLocale;
  /** The step's title; also used for `<title>` (with the partner name and an error prefix). */
  title: string;
  hasErrors?: boolean;
  partner?: PartnerView;
  /** GET path of the page without `locale`; the language switcher is shown when set. */
  selfPath?: string;
  /** Footer link back to the partner (default: shown when the partner is known). */
  footer?: boolean;
  /** The partner's intro and description under the logo (default: shown). */
  intro?: boolean;
  /** Extra `<head>` markup: trusted, code-built markup only. */
  head?: SafeHtml;
  main: SafeHtml;
}

/** The logo as a `data:` URL: the SVG is never put into the document itself. */
export function logoDataUrl(svg: string): string {
  return `data:image/svg+xml;base64,${Buffer.from(svg, 'utf8').toString('base64')}`;
}

/** The same page in another locale. */
export function languageHref(selfPath: string, locale: PageLocale): string {
  const path = safePath(selfPath, '/connect');
  return `${path}${path.includes('?') ? '&' : '?'}locale=${encodeURIComponent(locale)}`;
}

function languageSwitcher(locale: PageLocale, selfPath: string): SafeHtml {
  const items = PAGE_LOCALES.map((l) => {
    const lang = htmlLang(l);
    return html`<li><a href="${languageHref(selfPath, l)}" hreflang="${lang}" lang="${lang}"${
      l === locale ? html` aria-current="true"` : ''
    }>${LOCALE_NAMES[l]}</a></li>`;
  });
  return html`<nav class="languages" aria-label="${t(locale, 'language_switcher')}"><ul>${items}</ul></nav>`;
}

function header(locale: PageLocale, partner: PartnerView | undefined, selfPath: string | undefined, intro: boolean) {
  if (!partner && selfPath === undefined) return html``;
  const texts =
    partner && intro
      ? html`
<p class="partner-intro">${t(locale, 'intro', { partner: partner.name })}</p>${
          partner.description ? html`\n<p class="partner-description">${partner.description}</p>` : ''
        }`
      : '';
  const partnerBlock = partner
    ? html`<div class="partner">
<img class="partner-logo" src="${logoDataUrl(partner.logoSvg)}" alt="${partner.name}" width="130" height="48">${texts}
</div>`
    : '';
  return html`<header class="site-header">
${partnerBlock}
${selfPath === undefined ? '' : html`${languageSwitcher(locale, selfPath)}\n`}</header>`;
}

/** "Return to <label>" as a link to the partner's return URL (only an http(s) URL is linked). */
export function returnLink(locale: PageLocale, partner: PartnerView, className?: string): SafeHtml {
  const href = safeHref(partner.returnUrl);
  if (!href) return html``;
  return html`<a${className ? html` class="${className}"` : ''} href="${href}">${t(locale, 'return_to', {
    label: partner.returnLabel,
  })}</a>`;
}

export function renderDocument(input: LayoutInput): string {
  const { locale, partner } = input;
  const pageTitle = partner ? t(locale, 'doc_title', { step: input.title, partner: partner.name }) : input.title;
  const fullTitle = input.hasErrors ? t(locale, 'doc_title_error', { title: pageTitle }) : pageTitle;
  const footer =
    partner && input.footer !== false ? html`<footer class="site-footer">${returnLink(locale, partner)}</footer>` : '';
  return html`<!doctype html>
<html lang="${htmlLang(locale)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${fullTitle}</title>
<link rel="stylesheet" href="${assetPath('connect.css')}">
<script src="${assetPath('connect.js')}" defer></script>
${input.head ? html`${input.head}\n` : ''}</head>
<body>
<a class="skip-link" href="#main">${t(locale, 'skip_link')}</a>
<div class="page">
${header(locale, partner, input.selfPath, input.intro !== false)}
<main id="main" tabindex="-1">
${input.main}
</main>
${footer ? html`${footer}\n` : ''}</div>
</body>
</html>
`.value;
}
