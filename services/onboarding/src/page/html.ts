/**
 * A minimal, safe HTML template: every interpolated value is escaped unless it is already
 * `SafeHtml` (the result of `html` or `raw`). Templates always quote attribute values with `"`, so
 * escaping the five HTML specials plus the backtick makes any text safe in element content and in
 * quoted attribute values. URLs in `href`/`src` additionally go through `safeHref`.
 */

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escapes `& < > " ' \`` for use in element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

const SAFE = Symbol('SafeHtml');

/** Markup that is already safe; only `html` and `raw` create it. */
export interface SafeHtml {
  readonly [SAFE]: true;
  readonly value: string;
  toString(): string;
}

function safe(value: string): SafeHtml {
  return { [SAFE]: true, value, toString: () => value };
}

export function isSafeHtml(value: unknown): value is SafeHtml {
  return typeof value === 'object' && value !== null && (value as { [SAFE]?: unknown })[SAFE] === true;
}

/** Marks trusted markup as safe. Never pass data that came from a request or a partner. */
export function raw(markup: string): SafeHtml {
  return safe(markup);
}

/** What a template accepts: `null`, `undefined` and `false` render nothing, arrays are joined. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false || value === true) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  if (isSafeHtml(value)) return value.value;
  return escapeHtml(String(value));
}

/** Tagged template: `html\`<p>${text}</p>\`` escapes `text`; nested `html` results stay markup. */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) {
    out += render(values[i]) + (strings[i + 1] ?? '');
  }
  return safe(out);
}

export type AttributeValue = string | number | boolean | null | undefined;

const ATTRIBUTE_NAME = /^[a-z][a-z0-9-]*$/;

/**
 * Renders attributes: `true` as a bare attribute, `false`/`null`/`undefined` omitted, others
 * quoted and escaped. Event handler and `style` attributes are refused: the page's
 * Content-Security-Policy forbids inline script and style.
 */
export function attrs(values: Readonly<Record<string, AttributeValue>>): SafeHtml {
  let out = '';
  for (const [name, value] of Object.entries(values)) {
    if (!ATTRIBUTE_NAME.test(name) || name.startsWith('on') || name === 'style') {
      throw new Error(`Attribute not allowed: ${name}`);
    }
    if (value === undefined || value === null || value === false) continue;
    out += value === true ? ` ${name}` : ` ${name}="${escapeHtml(String(value))}"`;
  }
  return safe(out);
}

/** An absolute http(s) URL as given, or undefined (no `javascript:`, `data:` or relative URLs). */
export function safeHref(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

/** A same-origin path (`/…`, not `//…` or `/\…`), or the fallback. */
export function safePath(path: string | undefined, fallback: string): string {
  if (path === undefined || !/^\/(?![/\\])/.test(path)) return fallback;
  for (const char of path) {
    const code = char.charCodeAt(0);
    if (code <= 0x20 || code === 0x7f || char === '\\') return fallback;
  }
  return path;
}
