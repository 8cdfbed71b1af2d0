import type { ErrorDetail } from '@svc/core';
import { now } from '@svc/core';
import { findClient, type PartnerProfile } from '@svc/identity';
import { redirectTarget } from '../domain/redirect';
import { formatIban } from '../domain/rules';
import { findProcessByToken, type ProcessRecord } from '../repository/process-repository';
import { resolveLocale, t } from './messages';
import type { OnboardField, OnboardFormValues, PageContext, PageLocale, PartnerView } from './types';
import { PASSWORD_MIN_LENGTH } from './types';

/**
 * What every step of the hosted page needs: the process behind the token, its partner, the
 * page's locale and the partner as the page shows it. A token that finds nothing, or a process
 * that can no longer run, is a problem page, never an error dump.
 */
export type Problem = 'unknown' | 'expired' | 'used';

export interface Loaded {
  record: ProcessRecord;
  partner: PartnerProfile;
  locale: PageLocale;
  view: PartnerView;
  redirectParam: string | undefined;
}

export type Lookup =
  | { ok: true; loaded: Loaded }
  | { ok: false; problem: Problem; locale: PageLocale; view?: PartnerView };

const LANGUAGE: Record<PageLocale, 'de' | 'fr' | 'it' | 'en'> = { de_CH: 'de', fr_CH: 'fr', it_CH: 'it', en_GB: 'en' };

export function partnerView(
  partner: PartnerProfile,
  locale: PageLocale,
  redirectParam: string | undefined,
): PartnerView {
  return {
    name: partner.name,
    description: partner.descriptions[LANGUAGE[locale]],
    logoSvg: partner.logos.horizontal,
    returnLabel: partner.return_label,
    returnUrl: redirectTarget(redirectParam, partner.base_url),
  };
}

export async function lookup(
  token: string | undefined,
  requestedLocale: string | undefined,
  acceptLanguage: string | undefined,
  redirectParam: string | undefined,
): Promise<Lookup> {
  const record = token && token.length <= 200 ? await findProcessByToken(token) : undefined;
  const userLocale =
    typeof record?.initialisation_data.user?.locale === 'string' ? record.initialisation_data.user.locale : undefined;
  const locale = resolveLocale(requestedLocale ?? userLocale, acceptLanguage);
  if (!record) return { ok: false, problem: 'unknown', locale };
  const partner = (await findClient(record.partner_client_id))?.partner;
  if (!partner) return { ok: false, problem: 'unknown', locale };
  const view = partnerView(partner, locale, redirectParam);
  if (record.status !== 'pending') return { ok: false, problem: 'used', locale, view };
  if (now() >= record.expires_at) return { ok: false, problem: 'expired', locale, view };
  return { ok: true, loaded: { record, partner, locale, view, redirectParam } };
}

/** The first step's address, carrying the token, the redirect and (for the switcher) nothing else. */
export function startPath(token: string, redirectParam: string | undefined): string {
  const query = new URLSearchParams({ token, ...(redirectParam ? { redirect_url: redirectParam } : {}) });
  return `/connect?${query.toString()}`;
}

export function pageContext(loaded: Loaded, csrf: string): PageContext {
  return {
    locale: loaded.locale,
    partner: loaded.view,
    token: loaded.record.token,
    ...(loaded.redirectParam ? { redirectParam: loaded.redirectParam } : {}),
    csrf,
    selfPath: startPath(loaded.record.token, loaded.redirectParam),
  };
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
const objectAt = (value: unknown, key: string) =>
  value && typeof value === 'object'
    ? ((value as Record<string, unknown>)[key] as Record<string, unknown> | undefined)
    : undefined;

/** The onboarding form prefilled from the process's initialisation data. */
export function prefill(record: ProcessRecord, email: string, locale: PageLocale): OnboardFormValues {
  const user = record.initialisation_data.user ?? {};
  const organisation = record.initialisation_data.organisation ?? {};
  const address = objectAt(organisation, 'main_address') ?? {};
  const bank = objectAt(organisation, 'billing_information') ?? {};
  const iban = text(bank.iban);
  const values: OnboardFormValues = {
    user_email: email,
    user_first_name: text(user.first_name),
    user_last_name: text(user.last_name),
    user_locale: text(user.locale) ?? locale,
    organisation_name: text(organisation.name),
    merchant_category_code: text(organisation.merchant_category_code),
    main_address_line1: text(address.address_line1),
    main_address_line2: text(address.address_line2),
    main_postal_code: text(address.postal_code),
    main_city: text(address.city),
    main_country: text(address.country) ?? 'CH',
    iban: iban ? formatIban(iban) : undefined,
    bank_name: text(bank.bank_name),
    account_holder: text(bank.account_holder),
  };
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as OnboardFormValues;
}

/** The `onboard` body from the form: empty required fields stay empty, so they are reported. */
export function onboardBody(form: Readonly<Record<string, string>>) {
  const value = (name: OnboardField) => form[name] ?? '';
  return {
    user: {
      email: value('user_email'),
      first_name: value('user_first_name'),
      last_name: value('user_last_name'),
      locale: value('user_locale'),
      password: form.password ?? '',
    },
    organisation: {
      name: value('organisation_name'),
      merchant_category_code: value('merchant_category_code'),
      main_address: {
        address_line1: value('main_address_line1'),
        address_line2: value('main_address_line2'),
        postal_code: value('main_postal_code'),
        city: value('main_city'),
        country: value('main_country'),
      },
      billing_information: {
        iban: value('iban'),
        ...(value('bank_name') === '' ? {} : { bank_name: value('bank_name') }),
        account_holder: value('account_holder'),
      },
    },
  };
}

const FIELD_OF: Record<string, OnboardField> = {
  'user.email': 'user_email',
  'user.first_name': 'user_first_name',
  'user.last_name': 'user_last_name',
  'user.locale': 'user_locale',
  'user.password': 'password',
  'organisation.name': 'organisation_name',
  'organisation.merchant_category_code': 'merchant_category_code',
  'organisation.main_address.address_line1': 'main_address_line1',
  'organisation.main_address.address_line2': 'main_address_line2',
  'organisation.main_address.postal_code': 'main_postal_code',
  'organisation.main_address.city': 'main_city',
  'organisation.main_address.country': 'main_country',
  'organisation.billing_information.iban': 'iban',
  'organisation.billing_information.bank_name': 'bank_name',
  'organisation.billing_information.account_holder': 'account_holder',
};

/** The domain's validation details as the form's localised field errors. */
export function fieldErrors(details: readonly ErrorDetail[], locale: PageLocale): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const detail of details) {
    const field = FIELD_OF[detail.property] ?? 'form';
    if (errors[field]) continue;
    errors[field] = messageFor(field, detail.code, locale);
  }
  return errors;
}

function messageFor(field: string, code: string, locale: PageLocale): string {
  if (code === 'error.validation.not_blank') {
    return field === 'merchant_category_code' || field === 'user_locale'
      ? t(locale, 'error_choose')
      : t(locale, 'error_required');
  }
  switch (field) {
    case 'user_email':
      return t(locale, 'error_email');
    case 'iban':
      return t(locale, 'error_iban');
    case 'main_country':
      return t(locale, 'error_country');
    case 'password':
      return t(locale, 'error_password_short', { min: PASSWORD_MIN_LENGTH });
    case 'merchant_category_code':
    case 'user_locale':
      return t(locale, 'error_choose');
    default:
      return t(locale, 'error_required');
  }
}
