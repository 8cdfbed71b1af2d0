import { deferred, isValidIban, normaliseIban } from '@svc/core';
import * as z from 'zod';

export { formatIban, isValidIban, normaliseIban } from '@svc/core';

/** The user locales accepted by onboarding. */
export const ONBOARDING_LOCALES = ['de_CH', 'fr_CH', 'it_CH', 'en_GB'] as const;
export type OnboardingLocale = (typeof ONBOARDING_LOCALES)[number];

/** Merchant category codes onboarding accepts. `0000` is for non-charity organisations only (it may change provider pricing). */
export const MERCHANT_CATEGORY_CODES = [
  { code: '8699', label: 'Membership organisations' },
  { code: '7997', label: 'Membership clubs (sports, recreation, athletic)' },
  { code: '8398', label: 'Charitable and social service organisations' },
  { code: '8641', label: 'Civic and social associations' },
  { code: '8651', label: 'Political organisations' },
  { code: '8661', label: 'Religious organisations' },
  { code: '0000', label: 'Other (non-charity organisations only)' },
] as const;
export type MerchantCategoryCode = (typeof MERCHANT_CATEGORY_CODES)[number]['code'];

const MCC_VALUES = MERCHANT_CATEGORY_CODES.map((entry) => entry.code) as [
  MerchantCategoryCode,
  ...MerchantCategoryCode[],
];

// ------------------------------------------------------------------------------------- schemas

// The exported schemas are `deferred` (built at their first parse): of the onboarding function's
// requests only creating a process and completing one read them.

/** A trimmed text field with short English messages for a missing, blank or too long value. */
function text(label: string, min: 0 | 1, max: number) {
  const trimmed = z
    .string({ error: (issue) => (issue.input === undefined ? `${label} is required.` : `${label} must be a string.`) })
    .trim()
    .max(max, `${label} must have at most ${max} characters.`);
  return min === 1 ? trimmed.min(1, `${label} must not be blank.`) : trimmed;
}

const localeSchema = () =>
  z.enum(ONBOARDING_LOCALES, {
    error: (issue) =>
      issue.input === undefined ? 'Locale is required.' : `Locale must be one of ${ONBOARDING_LOCALES.join(', ')}.`,
  });

export const merchantCategoryCodeSchema = deferred(() =>
  z.enum(MCC_VALUES, {
    error: (issue) =>
      issue.input === undefined
        ? 'Merchant category code is required.'
        : `Merchant category code must be one of ${MCC_VALUES.join(', ')}.`,
  }),
);

const countrySchema = () =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'Country is required.' : 'Country must be a string.') })
    .trim()
    .toUpperCase()
    .regex(/^[A-Z]{2}$/, 'Country must be an ISO 3166-1 alpha-2 code such as CH.');

const emailSchema = () =>
  text('E-mail address', 1, 254)
    .toLowerCase()
    .pipe(z.email({ error: 'E-mail address is not valid.' }));

const ibanSchema = () =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'IBAN is required.' : 'IBAN must be a string.') })
    .refine(isValidIban, 'IBAN is not valid.')
    .overwrite(normaliseIban);

const addressFields = () => ({
  address_line1: text('Address line 1', 1, 200),
  address_line2: text('Address line 2', 0, 200),
  postal_code: text('Postal code', 1, 20),
  city: text('City', 1, 100),
  country: countrySchema(),
});

const billingFields = () => ({
  iban: ibanSchema(),
  bank_name: text('Bank name', 0, 200),
  account_holder: text('Account holder', 1, 200),
});

const userFields = () => ({
  email: emailSchema(),
  first_name: text('First name', 1, 100),
  last_name: text('Last name', 1, 100),
  locale: localeSchema(),
});

/**
 * A partial address (creation data may be incomplete). `address_line2` gets no default here, so
 * that merging a partial address never blanks a line 2 given earlier; the complete schema defaults it.
 */
export const onboardingAddressSchema = deferred(() => z.object(addressFields()).partial().strict());
export const billingInformationSchema = deferred(() => z.object(billingFields()).partial().strict());
export const onboardingUserSchema = deferred(() => z.object(userFields()).partial().strict());
/** A whole address (line 2 may be empty). */
const completeAddressSchema = () => {
  const fields = addressFields();
  return z.object({ ...fields, address_line2: fields.address_line2.default('') }).strict();
};

export const onboardingOrganisationSchema = deferred(() =>
  z
    .object({
      name: text('Organisation name', 1, 200),
      merchant_category_code: merchantCategoryCodeSchema,
      main_address: onboardingAddressSchema,
      // Whole or absent: the hosted page shows no billing address, so a partial one could never be completed there.
      billing_address: completeAddressSchema(),
      billing_information: billingInformationSchema,
    })
    .partial()
    .strict(),
);

const passwordSchema = () =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'Password is required.' : 'Password must be a string.') })
    .min(10, 'Password must have at least 10 characters.')
    .max(200, 'Password must have at most 200 characters.');

/** The user and organisation of a process, as given at creation (no password). */
export const onboardingDataSchema = deferred(() =>
  z.object({ user: onboardingUserSchema, organisation: onboardingOrganisationSchema }).partial().strict(),
);

/** The body of the `onboard` operation: like the creation data, and the user may set a password. */
export const onboardRequestSchema = deferred(() =>
  z
    .object({
      user: onboardingUserSchema.unwrap().extend({ password: passwordSchema().optional() }).strict(),
      organisation: onboardingOrganisationSchema,
    })
    .partial()
    .strict(),
);

/**
 * What executing the onboarding needs, checked on the merge of the creation data and the
 * `onboard` body. Unknown keys beside `user` and `organisation` (e.g. `event_subscriptions`) are
 * dropped; inside them unknown keys are refused.
 */
export const completeOnboardingSchema = deferred(() =>
  z.object({
    user: z.object({ ...userFields(), password: passwordSchema() }).strict(),
    organisation: z
      .object({
        name: text('Organisation name', 1, 200),
        merchant_category_code: merchantCategoryCodeSchema,
        main_address: completeAddressSchema(),
        billing_address: completeAddressSchema().optional(),
        billing_information: z.object({ ...billingFields(), bank_name: billingFields().bank_name.optional() }).strict(),
      })
      .strict(),
  }),
);

export type OnboardingAddress = z.output<typeof onboardingAddressSchema>;
export type BillingInformation = z.output<typeof billingInformationSchema>;
export type OnboardingUser = z.output<typeof onboardingUserSchema>;
export type OnboardingOrganisation = z.output<typeof onboardingOrganisationSchema>;
export type OnboardRequest = z.output<typeof onboardRequestSchema>;
export type CompleteOnboarding = z.output<typeof completeOnboardingSchema>;

/** The user (possibly with a password) and organisation of a process; any other keys are kept. */
export interface OnboardingData {
  user?: OnboardingUser & { password?: string };
  organisation?: OnboardingOrganisation;
}

// --------------------------------------------------------------------------------------- merge

/** Shallow merge where `undefined` in the override keeps the base value; undefined when both are. */
function mergeDefined<T extends object>(base: T | undefined, override: T | undefined): T | undefined {
  if (base === undefined && override === undefined) return undefined;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override ?? {})) {
    if (value !== undefined) merged[key] = value;
  }
  return merged as T;
}

const NESTED = ['main_address', 'billing_address', 'billing_information'] as const;

function mergeOrganisation(
  base: OnboardingOrganisation | undefined,
  override: OnboardingOrganisation | undefined,
): OnboardingOrganisation | undefined {
  const merged = mergeDefined(base, override);
  if (!merged) return undefined;
  const nested: Record<string, unknown> = {};
  for (const key of NESTED) {
    const value = mergeDefined<object>(base?.[key], override?.[key]);
    if (value !== undefined) nested[key] = value;
  }
  return { ...merged, ...nested };
}

/**
 * Merges the `onboard` body over a process's initialisation data: `user`, `organisation` and
 * the organisation's addresses and billing information are merged field by field, the override
 * winning; `undefined` in the override never erases a value. Other keys of `base` are kept as
 * they are; the inputs are not changed.
 */
export function mergeOnboardingData<T extends OnboardingData>(base: T, override: OnboardingData | undefined): T {
  const result: T = { ...base };
  const user = mergeDefined(base.user, override?.user);
  const organisation = mergeOrganisation(base.organisation, override?.organisation);
  if (user !== undefined) result.user = user;
  if (organisation !== undefined) result.organisation = organisation;
  return result;
}
