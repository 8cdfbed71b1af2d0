/** Form building blocks: labelled fields with hint and error, hidden fields, error summary. */
import { type AttributeValue, attrs, html, type SafeHtml } from './html';
import { type PageLocale, t } from './messages';
import type { FieldErrors, PageContext } from './types';

interface FieldBase {
  name: string;
  /** Defaults to the name. */
  id?: string;
  label: string;
  required?: boolean;
  /** An autofill token, or `off`. */
  autocomplete: string;
  hint?: string;
  attributes?: Readonly<Record<string, AttributeValue>>;
}

export interface InputOptions extends FieldBase {
  type?: 'text' | 'email' | 'password';
  value?: string;
  readonly?: boolean;
  className?: string;
  /** Wraps the input for the show/hide password button added by the script. */
  passwordToggle?: boolean;
  /** An initially empty live region (`<id>-live`) the script fills. */
  live?: boolean;
}

export interface SelectOptions extends FieldBase {
  options: readonly { value: string; label: string; lang?: string }[];
  value?: string;
  /** A first, empty option ("Please choose") selected when no option matches the value. */
  placeholder?: string;
}

export function hasErrors(errors: FieldErrors | undefined): boolean {
  return Object.values(errors ?? {}).some((message) => message);
}

function describedBy(...ids: (string | undefined)[]): string | undefined {
  const list = ids.filter((id): id is string => id !== undefined);
  return list.length > 0 ? list.join(' ') : undefined;
}

function fieldFrame(
  locale: PageLocale,
  field: FieldBase,
  error: string | undefined,
  control: (ids: { id: string; describedBy: string | undefined }) => SafeHtml,
  after?: SafeHtml,
): SafeHtml {
  const id = field.id ?? field.name;
  const hintId = field.hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const liveId = after ? `${id}-live` : undefined;
  const optional = field.required ? '' : html` <span class="optional">(${t(locale, 'optional')})</span>`;
  const parts = [
    html`<label for="${id}">${field.label}${optional}</label>`,
    field.hint ? html`<p class="hint" id="${hintId}">${field.hint}</p>` : undefined,
    error ? html`<p class="field-error" id="${errorId}">${error}</p>` : undefined,
    control({ id, describedBy: describedBy(hintId, errorId, liveId) }),
    after,
  ].filter((part) => part !== undefined);
  return html`<div class="field${error ? ' has-error' : ''}">\n${parts.map((part) => html`${part}\n`)}</div>`;
}

export function inputField(locale: PageLocale, errors: FieldErrors | undefined, o: InputOptions): SafeHtml {
  const error = errors?.[o.name] || undefined;
  const live = o.live ? html`<p class="live" id="${o.id ?? o.name}-live" aria-live="polite"></p>` : undefined;
  return fieldFrame(
    locale,
    o,
    error,
    ({ id, describedBy }) => {
      const input = html`<input${attrs({
        type: o.type ?? 'text',
        id,
        name: o.name,
        // Passwords are never sent back to the browser.
        value: o.type === 'password' ? undefined : o.value,
        class: o.className,
        required: o.required,
        readonly: o.readonly,
        autocomplete: o.autocomplete,
        'aria-invalid': error ? 'true' : undefined,
        'aria-describedby': describedBy,
        ...o.attributes,
      })}>`;
      return o.passwordToggle ? html`<div class="password-field">${input}</div>` : input;
    },
    live,
  );
}

export function selectField(locale: PageLocale, errors: FieldErrors | undefined, o: SelectOptions): SafeHtml {
  const error = errors?.[o.name] || undefined;
  const matched = o.options.some((option) => option.value === o.value);
  const placeholder =
    o.placeholder === undefined
      ? ''
      : html`<option value=""${matched ? '' : html` selected`}>${o.placeholder}</option>`;
  const options = o.options.map(
    (option) =>
      html`<option${attrs({ value: option.value, lang: option.lang, selected: option.value === o.value })}>${
        option.label
      }</option>`,
  );
  return fieldFrame(
    locale,
    o,
    error,
    ({ id, describedBy }) =>
      html`<select${attrs({
        id,
        name: o.name,
        required: o.required,
        autocomplete: o.autocomplete,
        'aria-invalid': error ? 'true' : undefined,
        'aria-describedby': describedBy,
        ...o.attributes,
      })}>${placeholder}${options}</select>`,
  );
}

/** token, redirect_url (when set), csrf and locale: on every form. */
export function hiddenFields(ctx: PageContext): SafeHtml {
  const hidden = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`;
  return html`${hidden('token', ctx.token)}${
    ctx.redirectParam === undefined ? '' : hidden('redirect_url', ctx.redirectParam)
  }${hidden('csrf', ctx.csrf)}${hidden('locale', ctx.locale)}`;
}

/**
 * The error summary at the top of `<main>`: one item per error, in form order, linking to the
 * field; errors of fields not on the page are listed without a link.
 */
export function errorSummary(
  locale: PageLocale,
  errors: FieldErrors | undefined,
  fields: readonly { name: string; id?: string }[],
): SafeHtml {
  if (!hasErrors(errors)) return html``;
  const entries = Object.entries(errors ?? {}).filter((entry): entry is [string, string] => Boolean(entry[1]));
  const linked = fields.flatMap((field) => {
    const message = errors?.[field.name];
    return message ? [html`<li><a href="#${field.id ?? field.name}">${message}</a></li>`] : [];
  });
  const known = new Set(fields.map((field) => field.name));
  const unlinked = entries.filter(([name]) => !known.has(name)).map(([, message]) => html`<li>${message}</li>`);
  return html`<div class="error-summary" id="error-summary" role="alert" tabindex="-1" aria-labelledby="error-summary-title">
<h2 id="error-summary-title">${t(locale, 'error_summary_heading')}</h2>
<ul>${linked}${unlinked}</ul>
</div>`;
}

/** A POST form with the hidden fields and one submit button. */
export function postForm(ctx: PageContext, action: string, content: SafeHtml, submitLabel: string): SafeHtml {
  return html`<form method="post" action="${action}" accept-charset="utf-8">
${hiddenFields(ctx)}
${content}
<div class="actions"><button type="submit" class="button" data-busy-label="${t(ctx.locale, 'busy')}">${submitLabel}</button></div>
</form>`;
}
