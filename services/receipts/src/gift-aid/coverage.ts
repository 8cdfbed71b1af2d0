import type { Declaration } from './declaration';
import { ukDayOfSeconds, yearsBefore } from './uk-dates';

/**
 * Which of a donor's donations their Gift Aid declarations cover. A donation can be claimed only
 * if "the charity [has] a Gift Aid declaration made by the donor which covers the donation"
 * (GOV.UK, "Chapter 3: Gift Aid", 3.2.2,
 * https://www.gov.uk/government/publications/charities-detailed-guidance-notes/chapter-3-gift-aid,
 * updated 11 March 2024). Declarations count by UK days (uk-dates.ts): HMRC's model declaration
 * speaks of donations made "today", "in the past 4 years" and "in the future", and of a
 * cancellation applying to donations made "on or after the date of cancellation".
 */
export type CoveringDeclaration = Pick<Declaration, 'scope' | 'channel' | 'declared_at' | 'cancelled_at'>;

export interface DatedGift {
  payment_uuid: string;
  /** Unix seconds. */
  succeeded_at: number;
}

/** How many years before its day a past_and_future declaration reaches. */
export const PAST_YEARS = 4;

/** Seconds within which the donor of an oral declaration may cancel it from the start. */
export const ORAL_RETROSPECTIVE_CANCEL_SECONDS = 30 * 86_400;

/**
 * The UK days a declaration covers: from `first` (inclusive) to `end` (exclusive, open when
 * absent). Undefined: it covers no day.
 */
function coveredDays(declaration: CoveringDeclaration): { first: string; end?: string } | undefined {
  const { declared_at, cancelled_at, channel, scope } = declaration;
  // An oral declaration's written record tells the donor they may cancel it "retrospectively
  // within 30 days" (HMRC Relief Manual RE1841, "Gift Aid relief: appropriate declarations",
  // http://www.hmrc.gov.uk/manuals/REManual/RE1841.htm, undated): cancelled that soon, it never
  // covered anything. We count the 30 days from the declaration (we keep no date of the record).
  if (
    channel === 'oral' &&
    cancelled_at !== undefined &&
    cancelled_at - declared_at <= ORAL_RETROSPECTIVE_CANCEL_SECONDS
  ) {
    return undefined;
  }
  const declaredDay = ukDayOfSeconds(declared_at);
  // Model declaration: "today … in the future" and "in the past 4 years" (GOV.UK, "Gift Aid
  // declarations: claiming tax back on donations", https://gov.uk/gift-aid-declarations-claiming-tax-back-on-donations,
  // model declarations published 21 October 2015). The past reaches the same date 4 years before.
  const first = scope === 'past_and_future' ? yearsBefore(declaredDay, PAST_YEARS) : declaredDay;
  // "It will then not apply to donations you make on or after the date of cancellation" (the
  // model declaration's notes, as charities print them, e.g. http://craxtonmemorialtrust.org.uk/html/gift-aid-notes.htm):
  // a donation made earlier on the day of cancellation is not covered either.
  const end = cancelled_at === undefined ? undefined : ukDayOfSeconds(cancelled_at);
  if (end !== undefined && end <= first) return undefined;
  return end === undefined ? { first } : { first, end };
}

const within = (day: string, days: { first: string; end?: string }) =>
  day >= days.first && (days.end === undefined || day < days.end);

/**
 * The payments among one donor's `gifts` that any of their declarations covers. A 'single'
 * declaration names no payment (the API takes none), so it covers the one donation it was made
 * with: of the donor's gifts on the UK day of `declared_at`, the one nearest in time to it (the
 * earlier on a tie). Pass every gift of the donor on the days concerned, refunded ones included,
 * so a refund never moves a single declaration onto another donation.
 */
export function coveredPayments(
  gifts: readonly DatedGift[],
  declarations: readonly CoveringDeclaration[],
): Set<string> {
  const covered = new Set<string>();
  const dated = gifts.map((gift) => ({ gift, day: ukDayOfSeconds(gift.succeeded_at) }));
  for (const declaration of declarations) {
    const days = coveredDays(declaration);
    if (!days) continue;
    if (declaration.scope === 'single') {
      const nearest = dated
        .filter(({ day }) => day === days.first && within(day, days))
        .sort(
          (a, b) =>
            Math.abs(a.gift.succeeded_at - declaration.declared_at) -
              Math.abs(b.gift.succeeded_at - declaration.declared_at) || a.gift.succeeded_at - b.gift.succeeded_at,
        )[0];
      if (nearest) covered.add(nearest.gift.payment_uuid);
      continue;
    }
    for (const { gift, day } of dated) if (within(day, days)) covered.add(gift.payment_uuid);
  }
  return covered;
}
