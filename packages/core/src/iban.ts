/**
 * IBANs (ISO 13616), one implementation for every domain: payments checks SEPA mandates with it,
 * onboarding the bank account of a new organisation.
 */
/**
 * IBAN lengths of the ISO 13616 registry: every SEPA country (with CH and LI, 21 characters) and
 * some other European and frequent countries. An IBAN of a country outside this table is refused,
 * because its length cannot be checked.
 */
const IBAN_LENGTHS: ReadonlyMap<string, number> = new Map(
  [
    'AD24 AL28 AT20 BE16 BG22 CH21 CY28 CZ24 DE22 DK18 EE20 ES24 FI18 FR27 GB22 GI23',
    'GR27 HR21 HU28 IE22 IS26 IT27 LI21 LT20 LU20 LV21 MC27 MD24 ME22 MK19 MT31 NL18',
    'NO15 PL28 PT25 RO24 SE24 SI19 SK24 SM27 VA22',
    // Outside SEPA.
    'AE23 AZ28 BA20 BH22 BR29 BY28 CR22 DO28 EG29 FO18 GE22 GL18 GT28 IL23 JO30 KW30',
    'KZ20 LB28 MU30 PK24 QA29 RS22 SA24 TN24 TR26 UA29 VG24 XK20',
  ]
    .join(' ')
    .split(' ')
    .map((entry) => [entry.slice(0, 2), Number(entry.slice(2))]),
);

/** The compact form: whitespace removed, upper case. */
export function normaliseIban(value: string): string {
  return value.replace(/\s+/g, '').toUpperCase();
}

/** The display form: the compact form in groups of four, e.g. `CH93 0076 2011 6238 5295 7`. */
export function formatIban(value: string): string {
  return normaliseIban(value).replace(/(.{4})(?=.)/g, '$1 ');
}

/** ISO 7064 MOD 97-10 over the digits of `text`, taken seven digits at a time. */
function mod97(digits: string): number {
  let remainder = 0;
  for (let i = 0; i < digits.length; i += 7) {
    remainder = Number(`${remainder}${digits.slice(i, i + 7)}`) % 97;
  }
  return remainder;
}

/** ISO 13616: country code, check digits, the registered length and the MOD 97-10 check. */
export function isValidIban(value: string): boolean {
  if (typeof value !== 'string') return false;
  const iban = normaliseIban(value);
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{1,30}$/.test(iban)) return false;
  if (IBAN_LENGTHS.get(iban.slice(0, 2)) !== iban.length) return false;
  const check = iban.slice(2, 4);
  if (check === '00' || check === '01' || check === '99') return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  const digits = rearranged.replace(/[A-Z]/g, (letter) => String(letter.charCodeAt(0) - 55));
  return mod97(digits) === 1;
}
