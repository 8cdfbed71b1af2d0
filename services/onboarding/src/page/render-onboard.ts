/** Step 2a of the connect flow, new user: review and complete the onboarding data. */
import { errorSummary, hasErrors, type InputOptions, inputField, postForm, selectField } from './fields';
import { html, type SafeHtml } from './html';
import { renderDocument } from './layout';
import { htmlLang, LOCALE_NAMES, type MessageKey, PAGE_LOCALES, t } from './messages';
import {
  type FieldErrors,
  ONBOARD_FIELDS,
  type OnboardField,
  type OnboardFormValues,
  PASSWORD_MIN_LENGTH,
  type PageContext,
} from './types';

/** The onboarding form (POST /connect/onboard), prefilled from the process data. */
export function renderOnboardStep(
  ctx: PageContext,
  input: { values: OnboardFormValues; errors?: FieldErrors; mccOptions: { code: string; label: string }[] },
): string {
  const { locale } = ctx;
  const { values, errors } = input;
  const min = PASSWORD_MIN_LENGTH;
  const title = t(locale, 'onboard_title');

  /** A text input for a data field; required unless `required: false` is given. */
  const text = (
    name: OnboardField,
    label: MessageKey,
    autocomplete: string,
    more: Partial<InputOptions> = {},
  ): SafeHtml =>
    inputField(locale, errors, {
      name,
      label: t(locale, label),
      value: values[name],
      required: true,
      autocomplete,
      ...more,
    });
  const group = (legend: MessageKey, ...content: SafeHtml[]): SafeHtml =>
    html`<fieldset>\n<legend>${t(locale, legend)}</legend>\n${content.map((c) => html`${c}\n`)}</fieldset>\n`;
  const toggle = { 'data-show-label': t(locale, 'password_show'), 'data-hide-label': t(locale, 'password_hide') };

  const user = group(
    'section_user',
    text('user_email', 'email_label', 'email', { type: 'email', readonly: true }),
    text('user_first_name', 'first_name_label', 'given-name'),
    text('user_last_name', 'last_name_label', 'family-name'),
    selectField(locale, errors, {
      name: 'user_locale',
      label: t(locale, 'user_locale_label'),
      options: PAGE_LOCALES.map((l) => ({ value: l, label: LOCALE_NAMES[l], lang: htmlLang(l) })),
      value: values.user_locale || locale,
      required: true,
      autocomplete: 'off',
    }),
    text('password', 'password_label', 'new-password', {
      type: 'password',
      hint: t(locale, 'password_hint', { min }),
      passwordToggle: true,
      attributes: { minlength: min, ...toggle },
    }),
    text('password_confirmation', 'password_confirmation_label', 'new-password', {
      type: 'password',
      live: true,
      attributes: {
        minlength: min,
        'data-match': 'password',
        'data-match-message': t(locale, 'error_passwords_differ'),
      },
    }),
  );
  const organisation = group(
    'section_organisation',
    text('organisation_name', 'organisation_name_label', 'organization'),
    selectField(locale, errors, {
      name: 'merchant_category_code',
      label: t(locale, 'mcc_label'),
      options: input.mccOptions.map((o) => ({ value: o.code, label: o.label })),
      value: values.merchant_category_code,
      placeholder: t(locale, 'mcc_choose'),
      required: true,
      autocomplete: 'off',
    }),
  );
  const uppercase = { autocapitalize: 'characters', spellcheck: 'false' };
  const address = group(
    'section_address',
    text('main_address_line1', 'address_line1_label', 'address-line1'),
    text('main_address_line2', 'address_line2_label', 'address-line2', { required: false }),
    text('main_postal_code', 'postal_code_label', 'postal-code', { className: 'width-postal' }),
    text('main_city', 'city_label', 'address-level2'),
    text('main_country', 'country_label', 'country', {
      value: values.main_country || 'CH',
      hint: t(locale, 'country_hint'),
      className: 'width-country',
      attributes: { minlength: 2, maxlength: 2, pattern: '[A-Za-z]{2}', ...uppercase },
    }),
  );
  const bank = group(
    'section_bank',
    text('iban', 'iban_label', 'off', {
      hint: t(locale, 'iban_hint'),
      className: 'width-iban',
      attributes: { 'data-iban': true, maxlength: 42, ...uppercase },
    }),
    text('bank_name', 'bank_name_label', 'off', { required: false }),
    text('account_holder', 'account_holder_label', 'off'),
  );

  const main = html`${errorSummary(
    locale,
    errors,
    ONBOARD_FIELDS.map((name) => ({ name })),
  )}
<h1>${title}</h1>
<p class="lead">${t(locale, 'onboard_lead', { partner: ctx.partner.name })}</p>
${postForm(ctx, '/connect/onboard', html`${user}${organisation}${address}${bank}`, t(locale, 'onboard_submit'))}`;
  return renderDocument({
    locale,
    title,
    hasErrors: hasErrors(errors),
    partner: ctx.partner,
    selfPath: ctx.selfPath,
    main,
  });
}
