import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  billingInformationSchema,
  completeOnboardingSchema,
  formatIban,
  isValidIban,
  MERCHANT_CATEGORY_CODES,
  merchantCategoryCodeSchema,
  mergeOnboardingData,
  normaliseIban,
  ONBOARDING_LOCALES,
  onboardingAddressSchema,
  onboardingDataSchema,
  onboardingOrganisationSchema,
  onboardingUserSchema,
  onboardRequestSchema,
} from './rules';

const messages = (result: { success: boolean; error?: { issues: { message: string }[] } }) =>
  result.error?.issues.map((issue) => issue.message) ?? [];

/** Check digits computed independently with BigInt, for generated IBANs. */
function withCheckDigits(country: string, bban: string): string {
  const digits = `${bban}${country}00`.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  const check = 98n - (BigInt(digits) % 97n);
  return `${country}${String(check).padStart(2, '0')}${bban}`;
}

describe('locales and merchant category codes', () => {
  it('lists the four locales of rule 8 and the seven codes of rule 9, each with a label', () => {
    expect([...ONBOARDING_LOCALES].sort()).toEqual(['de_CH', 'en_GB', 'fr_CH', 'it_CH']);
    expect(MERCHANT_CATEGORY_CODES.map((entry) => entry.code)).toEqual([
      '8699',
      '7997',
      '8398',
      '8641',
      '8651',
      '8661',
      '0000',
    ]);
    expect(MERCHANT_CATEGORY_CODES.find((entry) => entry.code === '8398')?.label).toBe(
      'Charitable and social service organisations',
    );
    for (const entry of MERCHANT_CATEGORY_CODES) expect(entry.label.length).toBeGreaterThan(3);
  });

  it('accepts every listed code and refuses others, naming the accepted ones', () => {
    for (const { code } of MERCHANT_CATEGORY_CODES) expect(merchantCategoryCodeSchema.parse(code)).toBe(code);
    const refused = merchantCategoryCodeSchema.safeParse('5999');
    expect(messages(refused)).toEqual([
      'Merchant category code must be one of 8699, 7997, 8398, 8641, 8651, 8661, 0000.',
    ]);
    expect(merchantCategoryCodeSchema.safeParse(8398).success).toBe(false);
  });
});

describe('IBAN', () => {
  const valid = [
    'CH9300762011623852957',
    'LI21088100002324013AA',
    'DE89370400440532013000',
    'GB29NWBK60161331926819',
    'FR1420041010050500013M02606',
    'NL91ABNA0417164300',
    'BE68539007547034',
    'AT611904300234573201',
    'NO9386011117947',
    'MT84MALT011000012345MTLCAST001S',
    'IT60X0542811101000000123456',
    'ES9121000418450200051332',
  ];

  it.each(valid)('accepts the valid IBAN %s', (iban) => {
    expect(isValidIban(iban)).toBe(true);
  });

  it('accepts spaces and lower case, and normalises and formats them', () => {
    expect(isValidIban('ch93 0076 2011 6238 5295 7')).toBe(true);
    expect(normaliseIban(' ch93 0076\t2011 6238 5295 7 ')).toBe('CH9300762011623852957');
    expect(formatIban('ch9300762011623852957')).toBe('CH93 0076 2011 6238 5295 7');
    expect(formatIban('DE89 3704 0044 0532 0130 00')).toBe('DE89 3704 0044 0532 0130 00');
  });

  it.each([
    ['a wrong check digit', 'CH9400762011623852957'],
    ['a changed account digit', 'CH9300762011623852958'],
    ['two swapped digits', 'CH9300762011623825957'],
    ['a Swiss IBAN one character short', 'CH930076201162385295'],
    ['a Swiss IBAN one character long', 'CH93007620116238529570'],
    ['a German IBAN of Swiss length', 'DE8937040044053201300'],
    ['an unknown country', 'ZZ9300762011623852957'],
    ['digits as country code', '129300762011623852957'],
    ['letters as check digits', 'CHAB00762011623852957'],
    ['punctuation', 'CH93-0076-2011-6238-5295-7'],
    ['an empty string', ''],
    ['only a country code', 'CH'],
  ])('refuses %s', (_case, iban) => {
    expect(isValidIban(iban)).toBe(false);
  });

  it('refuses the check digits 00, 01 and 99 even when MOD 97 would pass', () => {
    // 99 ≡ 2 (mod 97): swapping a valid "02" for "99" keeps the remainder, yet ISO 13616 forbids it.
    let n = 0;
    while (withCheckDigits('CH', String(n).padStart(17, '0')).slice(2, 4) !== '02') n += 1;
    const bban = String(n).padStart(17, '0');
    expect(isValidIban(`CH02${bban}`)).toBe(true);
    expect(isValidIban(`CH99${bban}`)).toBe(false);
    expect(isValidIban(`CH00${bban}`)).toBe(false);
    expect(isValidIban(`CH01${bban}`)).toBe(false);
  });

  it('accepts generated IBANs with correct check digits and refuses any single changed digit', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^\d{5}[0-9A-Z]{12}$/),
        fc.nat(),
        fc.integer({ min: 1, max: 9 }),
        (bban, at, delta) => {
          const iban = withCheckDigits('CH', bban);
          expect(isValidIban(iban)).toBe(true);
          const digitPositions = [...iban].flatMap((c, i) => (i >= 2 && /\d/.test(c) ? [i] : []));
          const position = digitPositions[at % digitPositions.length] ?? 2;
          const changed = String((Number(iban[position]) + delta) % 10);
          expect(isValidIban(iban.slice(0, position) + changed + iban.slice(position + 1))).toBe(false);
        },
      ),
    );
  });

  it('knows the IBAN length of every SEPA country, Switzerland and Liechtenstein included', () => {
    // Lengths from the ISO 13616 registry, e.g. CH21: Switzerland, 21 characters.
    const sepa = [
      'AD24 AL28 AT20 BE16 BG22 CH21 CY28 CZ24 DE22 DK18 EE20 ES24 FI18 FR27',
      'GB22 GI23 GR27 HR21 HU28 IE22 IS26 IT27 LI21 LT20 LU20 LV21 MC27 MD24',
      'ME22 MK19 MT31 NL18 NO15 PL28 PT25 RO24 SE24 SI19 SK24 SM27 VA22',
    ]
      .join(' ')
      .split(' ')
      .map((entry) => [entry.slice(0, 2), Number(entry.slice(2))] as const);
    for (const [country, length] of sepa) {
      const iban = withCheckDigits(country, '1'.repeat(length - 4));
      expect([country, isValidIban(iban)]).toEqual([country, true]);
      expect(isValidIban(withCheckDigits(country, '1'.repeat(length - 3)))).toBe(false);
      expect(isValidIban(withCheckDigits(country, '1'.repeat(length - 5)))).toBe(false);
    }
  });

  it('does not throw on values that are not strings', () => {
    expect(isValidIban(undefined as unknown as string)).toBe(false);
  });
});

describe('partial creation schemas', () => {
  it('accepts a process created with every field missing', () => {
    expect(onboardingDataSchema.parse({})).toEqual({});
    expect(onboardingOrganisationSchema.parse({ main_address: {} })).toEqual({ main_address: {} });
    expect(onboardingUserSchema.parse({})).toEqual({});
  });

  it('trims and lower-cases e-mail addresses and refuses invalid or overlong ones', () => {
    expect(onboardingUserSchema.parse({ email: '  Anna.Muster@Example.CH ' })).toEqual({
      email: 'anna.muster@example.ch',
    });
    expect(messages(onboardingUserSchema.safeParse({ email: 'not an address' }))).toEqual([
      'E-mail address is not valid.',
    ]);
    const long = `${'a'.repeat(64)}@${'b'.repeat(185)}.ch`;
    expect(long.length).toBe(253);
    expect(onboardingUserSchema.safeParse({ email: long }).success).toBe(true);
    expect(onboardingUserSchema.safeParse({ email: `a${long}` }).success).toBe(true);
    expect(messages(onboardingUserSchema.safeParse({ email: `aa${long}` }))).toContain(
      'E-mail address must have at most 254 characters.',
    );
  });

  it('refuses an unknown locale with a message listing the accepted ones', () => {
    expect(messages(onboardingUserSchema.safeParse({ locale: 'de_DE' }))).toEqual([
      'Locale must be one of de_CH, fr_CH, it_CH, en_GB.',
    ]);
    expect(onboardingUserSchema.parse({ locale: 'it_CH' })).toEqual({ locale: 'it_CH' });
  });

  it('refuses blank and overlong names and unknown fields', () => {
    expect(messages(onboardingUserSchema.safeParse({ first_name: '   ' }))).toEqual(['First name must not be blank.']);
    expect(messages(onboardingUserSchema.safeParse({ last_name: 'x'.repeat(101) }))).toEqual([
      'Last name must have at most 100 characters.',
    ]);
    expect(onboardingUserSchema.safeParse({ password: 'secret-password' }).success).toBe(false);
    expect(onboardingOrganisationSchema.safeParse({ name: 'x'.repeat(200) }).success).toBe(true);
    expect(onboardingOrganisationSchema.safeParse({ name: 'x'.repeat(201) }).success).toBe(false);
    expect(onboardingOrganisationSchema.safeParse({ website: 'https://x.ch' }).success).toBe(false);
  });

  it('upper-cases two-letter countries and refuses other country values', () => {
    expect(onboardingAddressSchema.parse({ country: 'ch' })).toEqual({ country: 'CH' });
    for (const country of ['CHE', 'C', '12', 'Schweiz', ''])
      expect(messages(onboardingAddressSchema.safeParse({ country }))).toEqual([
        'Country must be an ISO 3166-1 alpha-2 code such as CH.',
      ]);
  });

  it('checks address field lengths and refuses unknown address fields', () => {
    expect(onboardingAddressSchema.safeParse({ address_line2: '' }).success).toBe(true);
    expect(onboardingAddressSchema.safeParse({ address_line1: '' }).success).toBe(false);
    expect(onboardingAddressSchema.safeParse({ postal_code: '1'.repeat(21) }).success).toBe(false);
    expect(onboardingAddressSchema.safeParse({ city: 'c'.repeat(101) }).success).toBe(false);
    expect(onboardingAddressSchema.safeParse({ country_code: 'CH' }).success).toBe(false);
  });

  it('normalises a valid IBAN and refuses an invalid one', () => {
    expect(billingInformationSchema.parse({ iban: 'ch93 0076 2011 6238 5295 7' })).toEqual({
      iban: 'CH9300762011623852957',
    });
    expect(messages(billingInformationSchema.safeParse({ iban: 'CH00 0000' }))).toEqual(['IBAN is not valid.']);
    expect(billingInformationSchema.safeParse({ bank_name: 'b'.repeat(201) }).success).toBe(false);
  });

  it('lets the onboard body carry a password of 10 to 200 characters', () => {
    expect(onboardRequestSchema.parse({ user: { password: 'correct-horse' } })).toEqual({
      user: { password: 'correct-horse' },
    });
    expect(messages(onboardRequestSchema.safeParse({ user: { password: 'short' } }))).toEqual([
      'Password must have at least 10 characters.',
    ]);
    expect(onboardRequestSchema.safeParse({ user: { password: 'p'.repeat(201) } }).success).toBe(false);
  });
});

const completeUser = {
  email: 'anna@example.ch',
  first_name: 'Anna',
  last_name: 'Muster',
  locale: 'de_CH',
  password: 'correct-horse-battery',
};
const completeOrganisation = {
  name: 'Verein Muster',
  merchant_category_code: '8398',
  main_address: { address_line1: 'Bahnhofstrasse 1', postal_code: '8001', city: 'Zürich', country: 'ch' },
  billing_information: { iban: 'CH93 0076 2011 6238 5295 7', account_holder: 'Verein Muster' },
} as const;

describe('complete onboarding schema', () => {
  it('accepts the minimum needed to create the organisation and fills defaults', () => {
    const parsed = completeOnboardingSchema.parse({ user: completeUser, organisation: completeOrganisation });
    expect(parsed.organisation.main_address).toEqual({
      address_line1: 'Bahnhofstrasse 1',
      address_line2: '',
      postal_code: '8001',
      city: 'Zürich',
      country: 'CH',
    });
    expect(parsed.organisation.billing_information.iban).toBe('CH9300762011623852957');
    expect(parsed.organisation.billing_address).toBeUndefined();
  });

  it('names every missing required field', () => {
    const result = completeOnboardingSchema.safeParse({
      user: { email: 'anna@example.ch' },
      organisation: { name: 'Verein', main_address: { city: 'Bern' }, billing_information: {} },
    });
    const paths = result.error?.issues.map((issue) => issue.path.join('.')).sort();
    expect(paths).toEqual([
      'organisation.billing_information.account_holder',
      'organisation.billing_information.iban',
      'organisation.main_address.address_line1',
      'organisation.main_address.country',
      'organisation.main_address.postal_code',
      'organisation.merchant_category_code',
      'user.first_name',
      'user.last_name',
      'user.locale',
      'user.password',
    ]);
    expect(messages(result)).toContain('Password is required.');
    expect(messages(result)).toContain('Locale is required.');
  });

  it('checks a billing address only when one is given', () => {
    const organisation = { ...completeOrganisation, billing_address: { city: 'Bern' } };
    expect(completeOnboardingSchema.safeParse({ user: completeUser, organisation }).success).toBe(false);
  });
});

describe('mergeOnboardingData', () => {
  const base = {
    user: { email: 'anna@example.ch', first_name: 'Anna', locale: 'de_CH' as const },
    organisation: {
      name: 'Verein',
      main_address: { address_line1: 'Weg 1', address_line2: 'c/o Anna', city: 'Bern' },
      billing_information: { iban: 'CH9300762011623852957', bank_name: 'PostFinance' },
    },
    event_subscriptions: [{ event_name: 'organisation.approved' }],
  };

  it('merges field by field, the override winning, down into addresses and billing data', () => {
    const merged = mergeOnboardingData(base, {
      user: { first_name: 'Annette', last_name: 'Muster', password: 'correct-horse' },
      organisation: {
        main_address: { city: 'Zürich', postal_code: '8001' },
        billing_address: {
          address_line1: 'Steinenberg 2',
          address_line2: '',
          postal_code: '4051',
          city: 'Basel',
          country: 'CH',
        },
        billing_information: { account_holder: 'Verein' },
      },
    });
    expect(merged).toEqual({
      user: {
        email: 'anna@example.ch',
        first_name: 'Annette',
        last_name: 'Muster',
        locale: 'de_CH',
        password: 'correct-horse',
      },
      organisation: {
        name: 'Verein',
        main_address: { address_line1: 'Weg 1', address_line2: 'c/o Anna', city: 'Zürich', postal_code: '8001' },
        billing_address: {
          address_line1: 'Steinenberg 2',
          address_line2: '',
          postal_code: '4051',
          city: 'Basel',
          country: 'CH',
        },
        billing_information: { iban: 'CH9300762011623852957', bank_name: 'PostFinance', account_holder: 'Verein' },
      },
      event_subscriptions: [{ event_name: 'organisation.approved' }],
    });
  });

  it('never erases a value with undefined', () => {
    const merged = mergeOnboardingData(base, {
      user: { first_name: undefined },
      organisation: { name: undefined, main_address: { city: undefined }, billing_information: undefined },
    });
    expect(merged).toEqual(base);
  });

  it('returns the base when there is no override, and the override when the base is empty', () => {
    expect(mergeOnboardingData(base, undefined)).toEqual(base);
    expect(mergeOnboardingData({}, {})).toEqual({});
    expect(mergeOnboardingData({}, { organisation: { main_address: { city: 'Bern' } } })).toEqual({
      organisation: { main_address: { city: 'Bern' } },
    });
  });

  it('leaves both inputs unchanged and shares no nested object with them', () => {
    const snapshot = structuredClone(base);
    const override = { organisation: { main_address: { city: 'Zürich' } } };
    const merged = mergeOnboardingData(base, override);
    expect(base).toEqual(snapshot);
    expect(override).toEqual({ organisation: { main_address: { city: 'Zürich' } } });
    expect(merged.organisation?.main_address).not.toBe(base.organisation.main_address);
    expect(merged.organisation?.billing_information).not.toBe(base.organisation.billing_information);
    expect(merged.user).not.toBe(base.user);
  });

  it('yields data the complete schema accepts once every part is there', () => {
    const merged = mergeOnboardingData(
      { user: { email: completeUser.email, locale: 'fr_CH' as const }, organisation: completeOrganisation },
      { user: { first_name: 'Anna', last_name: 'Muster', password: completeUser.password } },
    );
    expect(completeOnboardingSchema.safeParse(merged).success).toBe(true);
  });
});
