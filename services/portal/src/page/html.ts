import { escapeHtml } from '@svc/mail';

/**
 * The portal pages' one way to build markup: a tagged template that escapes every interpolated
 * value unless it is markup this module made (`SafeHtml`). Attribute values are always quoted
 * with `"` in the templates, so escaping `& < > " '` makes any text safe in element content and
 * in attribute values. The escaping is the mail package's (the same five characters).
 */
const SAFE = Symbol('SafeHtml');

export interface SafeHtml {
  readonly [SAFE]: true;
  readonly value: string;
}

export type HtmlValue = SafeHtml | string | number | false | null | undefined | readonly HtmlValue[];

function isSafe(value: unknown): value is SafeHtml {
  return typeof value === 'object' && value !== null && (value as { [SAFE]?: unknown })[SAFE] === true;
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (isSafe(value)) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(value as string | number);
}

/** `html\`<p>${text}</p>\``: `text` escaped; nested `html` results stay markup. */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return { [SAFE]: true, value: out };
}

/** Markup built by code from trusted parts only (the style sheet): never data from a request. */
export function raw(markup: string): SafeHtml {
  return { [SAFE]: true, value: markup };
}
