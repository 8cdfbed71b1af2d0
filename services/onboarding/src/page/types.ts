import type { PageLocale } from './messages';

export type { PageLocale };

/** The partner as shown on the page; texts already in the page's language. */
export interface PartnerView {
  name: string;
  description: string;
  /** The horizontal 130x48 logo, SVG source. Shown only as a `data:` image, never inlined. */
  logoSvg: string;
  /** For "Return to <label>". */
  returnLabel: string;
  returnUrl: string;
}

export interface PageContext {
  locale: PageLocale;
  partner: PartnerView;
  /** The process token, carried in a hidden field `token`. */
  token: string;
  /** The raw `redirect_url` query value, carried in a hidden field `redirect_url` when set. */
  redirectParam?: string;
  /** Carried in a hidden field `csrf` on every form. */
  csrf: string;
  /** Path + query of the current GET page without `locale`, used to build language links, e.g. `/connect?token=…` */
  selfPath: string;
}

/** Form field name → already-localised message. */
export type FieldErrors = Partial<Record<string, string>>;

/** What the e-mail step shows: the simulated captcha (local), none (a stage with it off), or reCAPTCHA. */
export type Captcha =
  | { kind: 'test'; token: string }
  | { kind: 'off'; token: string }
  | { kind: 'recaptcha'; siteKey: string };

/** The data fields of the onboarding form, in form order. */
export const ONBOARD_FIELDS = [
  'user_email',
  'user_first_name',
  'user_last_name',
  'user_locale',
  'password',
  'password_confirmation',
  'organisation_name',
  'merchant_category_code',
  'main_address_line1',
  'main_address_line2',
  'main_postal_code',
  'main_city',
  'main_country',
  'iban',
  'bank_name',
  'account_holder',
] as const;

export type OnboardField = (typeof ONBOARD_FIELDS)[number];

/** Prefill of the onboarding form. Password values are never rendered back. */
export type OnboardFormValues = Partial<Record<OnboardField, string>>;

/** The minimum password length of the onboarding form (hint, `minlength`). */
export const PASSWORD_MIN_LENGTH = 10;
