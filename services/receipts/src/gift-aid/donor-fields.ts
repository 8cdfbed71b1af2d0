/**
 * A supporter as HMRC's Gift Aid schedule takes a donor: title, first name, last name, house
 * name or number, postcode, each cut and cleaned to what the schedule accepts. A donor without
 * what HMRC requires (a name, and a UK house and postcode or an address abroad) has no columns:
 * their donations can only be claimed inside an aggregated line (schedule.ts).
 */

/** The supporter fields the schedule reads (the Supporter record of @svc/supporters has them all). */
export interface DonorRecord {
  honorific_prefix?: string | undefined;
  first_name?: string | undefined;
  last_name?: string | undefined;
  house_number?: string | undefined;
  street?: string | undefined;
  postal_code?: string | undefined;
  city?: string | undefined;
  country?: string | undefined;
}

export interface DonorColumns {
  title: string;
  first_name: string;
  last_name: string;
  house: string;
  postcode: string;
}

/*
 * Lengths: "title, using a maximum of 4 characters per line; first name (or first initial) and
 * last name, using a maximum of 35 characters per line", GOV.UK "Schedule spreadsheet to claim
 * back tax on Gift Aid donations", https://www.gov.uk/guidance/schedule-spreadsheet-to-claim-back-tax-on-gift-aid-donations
 * (last updated 28 November 2025; the change is recorded at
 * https://govdiff.njk.onl/update/2025-11-28T14:23:00+00:00/www.gov.uk/guidance/schedule-spreadsheet-to-claim-back-tax-on-gift-aid-donations).
 * The house box takes 40 characters: HMRC's schedule spreadsheet version 3
 * (gift_aid_schedule_version_3.ods), as read in https://github.com/OneZoom/OZtree/issues/117
 * (comment of 23 November 2021).
 */
export const TITLE_MAX = 4;
export const NAME_MAX = 35;
export const HOUSE_MAX = 40;

/** HMRC's own examples of a title cut to four letters ("Prof for professor or Rev for Reverend"). */
const SHORT_TITLES: Record<string, string> = {
  professor: 'Prof',
  reverend: 'Rev',
  doctor: 'Dr',
  sister: 'Sr',
  brother: 'Br',
};

/**
 * Letters without their accents (é → e, ß → ss). The schedule is checked by HMRC's systems when
 * it is attached to a claim; we found no published list of the characters they accept, so names
 * keep to plain Latin letters, spaces and apostrophes, which every example HMRC gives uses.
 */
function plainLatin(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[‘’ʼ`´]/g, "'")
    .replace(/ß/g, 'ss')
    .replace(/[Ææ]/g, (c) => (c === 'Æ' ? 'AE' : 'ae'))
    .replace(/[Øø]/g, (c) => (c === 'Ø' ? 'O' : 'o'))
    .replace(/[Łł]/g, (c) => (c === 'Ł' ? 'L' : 'l'))
    .replace(/[Đđ]/g, (c) => (c === 'Đ' ? 'D' : 'd'));
}

/**
 * Nothing but the allowed characters, single spaces, no blank at either end ("Don't include blank
 * spaces or other characters at the start or end of boxes", HMRC's schedule notes as quoted by
 * the Charity Tax Group, https://www.charitytaxgroup.org.uk/tax-update/updated-gasds-community-building-schedules/),
 * cut to `max` characters, starting with a letter or digit (so no cell reads as a formula).
 */
function clean(text: string | undefined, disallowed: RegExp, max: number): string {
  if (!text) return '';
  const kept = plainLatin(text).replace(disallowed, ' ').replace(/\s+/g, ' ').trim();
  const start = kept.search(/[A-Za-z0-9]/);
  return start < 0 ? '' : kept.slice(start, start + max).trim();
}

/**
 * A name: letters, spaces and apostrophes. Hyphens become spaces: "If the last name is
 * double-barreled, use a space instead of the hyphen, for example, enter House Martin not
 * House-Martin" (HMRC, "How to complete the Gift Aid donation schedule spreadsheet",
 * http://www.hmrc.gov.uk/charities/online/giftaid-spreadsheet.htm, undated, written for Charities
 * Online's launch on 22 April 2013; the same rule on the GOV.UK page of 28 November 2025).
 */
export function scheduleName(name: string | undefined): string {
  return clean(name, /[^A-Za-z' ]/g, NAME_MAX);
}

/** A title of at most four letters (HMRC's examples shortened), else none: the title is optional. */
export function scheduleTitle(title: string | undefined): string {
  const letters = clean(title, /[^A-Za-z]/g, 50).replace(/ /g, '');
  const short = SHORT_TITLES[letters.toLowerCase()] ?? letters;
  return short.length <= TITLE_MAX ? short : '';
}

/**
 * A UK postcode in capitals with its space before the last three characters ("enter the
 * postcode using capital letters and include a space, for example, S19 2BD", GOV.UK schedule
 * guidance of 28 November 2025, above), or undefined when the text is not a UK postcode.
 */
export function ukPostcode(text: string | undefined): string | undefined {
  const compact = (text ?? '').toUpperCase().replace(/\s+/g, '');
  if (!/^[A-Z]{1,2}[0-9][A-Z0-9]?[0-9][A-Z]{2}$/.test(compact)) return undefined;
  return `${compact.slice(0, -3)} ${compact.slice(-3)}`;
}

const UK_NAMES = new Set([
  'GB',
  'GBR',
  'UK',
  'UNITED KINGDOM',
  'GREAT BRITAIN',
  'ENGLAND',
  'SCOTLAND',
  'WALES',
  'NORTHERN IRELAND',
]);

/** Where the donor lives: the UK, abroad, or unknown (no country and no UK postcode). */
export function donorResidence(donor: DonorRecord): 'uk' | 'overseas' | 'unknown' {
  const country = plainLatin(donor.country ?? '')
    .toUpperCase()
    .replace(/[^A-Z ]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (country) return UK_NAMES.has(country) ? 'uk' : 'overseas';
  return ukPostcode(donor.postal_code) ? 'uk' : 'unknown';
}

const HOUSE_DISALLOWED = /[^A-Za-z0-9 ,.'/&-]/g;

/**
 * The schedule's columns for a donor, or undefined when HMRC's minimum is missing: a first name
 * (or initial), a last name, and for a UK donor the house name or number and a valid postcode.
 * Without a house number the first line of the street address stands in for it (what a donor
 * typed as "Rose Cottage" or "12 High Street" usually sits there). A donor abroad has the full
 * address in the house box and X as the postcode: HMRC's schedule spreadsheet version 3, as read
 * in https://github.com/OneZoom/OZtree/issues/117 (23 November 2021), and GOV.UK's guidance on
 * "non-UK resident donors" added on 28 November 2025 (page above).
 */
export function donorColumns(donor: DonorRecord): DonorColumns | undefined {
  const first_name = scheduleName(donor.first_name);
  const last_name = scheduleName(donor.last_name);
  if (!first_name || !last_name) return undefined;
  const title = scheduleTitle(donor.honorific_prefix);
  const residence = donorResidence(donor);
  if (residence === 'uk') {
    const postcode = ukPostcode(donor.postal_code);
    const house =
      clean(donor.house_number, HOUSE_DISALLOWED, HOUSE_MAX) || clean(donor.street, HOUSE_DISALLOWED, HOUSE_MAX);
    return postcode && house ? { title, first_name, last_name, house, postcode } : undefined;
  }
  if (residence === 'overseas') {
    const line = [donor.house_number, donor.street, donor.postal_code, donor.city, donor.country]
      .map((part) => clean(part, HOUSE_DISALLOWED, HOUSE_MAX))
      .filter(Boolean)
      .join(', ');
    const house = clean(line, HOUSE_DISALLOWED, HOUSE_MAX).replace(/,$/, '');
    return house ? { title, first_name, last_name, house, postcode: 'X' } : undefined;
  }
  return undefined;
}
