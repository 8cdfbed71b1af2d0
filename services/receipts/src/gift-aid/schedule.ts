import type { Gift } from '../domain/gifts';
import { type CoveringDeclaration, coveredPayments } from './coverage';
import { type DonorColumns, type DonorRecord, donorColumns } from './donor-fields';
import { scheduleDate, ukDayOfSeconds } from './uk-dates';

/**
 * HMRC's Gift Aid claim schedule, built donor by donor in bounded memory: each donor's lines are
 * written as soon as their gifts are read; only the aggregated lines of small donations wait for
 * the end (one line per £1,000 at most). Pure: no table, no clock.
 */

/** A gift as the payments domain gives it (../domain/gifts.ts): `succeeded_at` in Unix seconds. */
export type ClaimGift = Pick<
  Gift,
  'payment_uuid' | 'supporter_uuid' | 'currency' | 'succeeded_at' | 'amount_minor' | 'net_minor'
>;

/**
 * The columns of HMRC's Charities Online Gift Aid schedule, in its order (contract section 13;
 * GOV.UK, "Schedule spreadsheet to claim back tax on Gift Aid donations",
 * https://www.gov.uk/guidance/schedule-spreadsheet-to-claim-back-tax-on-gift-aid-donations,
 * last updated 28 November 2025).
 */
export const SCHEDULE_COLUMNS = [
  'Title',
  'First name',
  'Last name',
  'House name or number',
  'Postcode',
  'Aggregated donations',
  'Sponsored event',
  'Donation date',
  'Amount',
] as const;

/*
 * "You can ‘aggregate’ (add together) donations of £20 or less from different donors and show
 * them as one entry on the spreadsheet. The total donation on one line cannot be higher than
 * £1,000" — HMRC, "How to complete the Gift Aid donation schedule spreadsheet",
 * http://www.hmrc.gov.uk/charities/online/giftaid-spreadsheet.htm (undated, written for Charities
 * Online's launch on 22 April 2013), and Charity Tax Group, "Aggregated donations limit
 * clarified" (April 2019), https://www.charitytaxgroup.org.uk/news-post/2019/aggregated-donations-limit-increases-30/,
 * which reports HMRC withdrawing a £30 figure as an error and keeping £20. (The GOV.UK page of
 * 28 November 2025 says "under £30" in its list; £20 satisfies both.)
 */
export const AGGREGATE_DONATION_MAX_MINOR = 2_000;
export const AGGREGATE_LINE_MAX_MINOR = 100_000;

/**
 * The "Aggregated donations" box holds "a simple description like ‘Thursday club donors’ …
 * (maximum of 35 characters)" (Charity Tax Group, April 2019, above).
 */
export const AGGREGATE_DESCRIPTION = 'Online donations of 20.00 or less';

/** Counts of a finished schedule (the route answers them as headers). */
export interface ScheduleTotals {
  /** Donations claimed, on their own lines or aggregated. */
  donations: number;
  /** Of which in aggregated lines. */
  aggregated: number;
  /** Lines written after the header. */
  lines: number;
  /** Covered by a declaration, above £20, but the donor lacks what HMRC requires (name, house, postcode). */
  left_out: number;
  /** The schedule's total, in pence. */
  total_minor: number;
}

/**
 * Amount "without using £ signs and showing amounts to 2 decimal places, for example 200.00 not
 * £200" (GOV.UK schedule guidance, 28 November 2025, above): pounds and pence, no separators.
 */
export function scheduleAmount(pence: number): string {
  return `${Math.floor(pence / 100)}.${String(pence % 100).padStart(2, '0')}`;
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export const CSV_LINE_END = '\r\n';

const csvLine = (fields: readonly string[]) => `${fields.map(csvField).join(',')}${CSV_LINE_END}`;

/** A donor's own line: "Sponsored event" stays blank (we run no sponsored events), as does the aggregate box. */
function donorLine(donor: DonorColumns, day: string, pence: number): string {
  return csvLine([
    donor.title,
    donor.first_name,
    donor.last_name,
    donor.house,
    donor.postcode,
    '',
    '',
    scheduleDate(day),
    scheduleAmount(pence),
  ]);
}

/**
 * An aggregated line: no donor details ("do not enter the name and address of individual
 * donors"), the description, and "the date of the last donation" (Charity Tax Group, April 2019,
 * above; GOV.UK's page of 28 November 2025: "if you’re submitting aggregated donations, enter the
 * date of the last one").
 */
function aggregateLine(lastDay: string, pence: number): string {
  return csvLine(['', '', '', '', '', AGGREGATE_DESCRIPTION, '', scheduleDate(lastDay), scheduleAmount(pence)]);
}

export class ClaimSchedule {
  private readonly aggregateLines: string[] = [];
  private open: { pence: number; lastDay: string } | undefined;
  private readonly counts: ScheduleTotals = { donations: 0, aggregated: 0, lines: 0, left_out: 0, total_minor: 0 };

  /** The header row. */
  header(): string {
    return csvLine(SCHEDULE_COLUMNS);
  }

  /**
   * One donor's gifts of the claim's period (every currency and refunded ones too: a single
   * declaration is matched against all of them) and their declarations, cancelled ones included.
   * Answers the donor's own lines; small donations go to the aggregated lines instead.
   *
   * What qualifies: a gift in sterling (GBP), covered by a declaration (coverage.ts), less what
   * was refunded or lost in a dispute: a repaid part is no gift ("the gift is not subject to a
   * condition as to repayment", GOV.UK "Chapter 3: Gift Aid", 3.2.1,
   * https://www.gov.uk/government/publications/charities-detailed-guidance-notes/chapter-3-gift-aid,
   * updated 11 March 2024). A gift in another currency would have to be converted at its day's
   * rate (same chapter, older text at http://www.hmrc.gov.uk/charities/guidance-notes/chapter3/sectionb.htm):
   * we keep no rates, so those are left out. Fees a donor chose to cover are part of what they
   * gave, so the whole amount paid counts (net_minor is of the whole amount). We record no donor
   * benefits (3.2.1: "any benefits associated with the gift are within the statutory limits"):
   * an organisation that gives benefits must leave those gifts out itself.
   */
  addDonor(
    donor: DonorRecord | undefined,
    gifts: readonly ClaimGift[],
    declarations: readonly CoveringDeclaration[],
  ): string[] {
    const sterling = gifts.filter((gift) => gift.currency === 'GBP');
    if (sterling.length === 0 || declarations.length === 0) return [];
    const covered = coveredPayments(sterling, declarations);
    const columns = donor ? donorColumns(donor) : undefined;
    const lines: string[] = [];
    const ordered = [...sterling].sort((a, b) => a.succeeded_at - b.succeeded_at);
    for (const gift of ordered) {
      const pence = gift.net_minor;
      if (!covered.has(gift.payment_uuid) || pence <= 0) continue;
      const day = ukDayOfSeconds(gift.succeeded_at);
      if (pence <= AGGREGATE_DONATION_MAX_MINOR) {
        this.aggregate(day, pence);
      } else if (columns) {
        lines.push(donorLine(columns, day, pence));
        this.count(pence);
      } else {
        this.counts.left_out += 1;
      }
    }
    this.counts.lines += lines.length;
    return lines;
  }

  /** The aggregated lines, once every donor was added. */
  finish(): string[] {
    this.close();
    this.counts.lines += this.aggregateLines.length;
    return this.aggregateLines.splice(0);
  }

  get totals(): Readonly<ScheduleTotals> {
    return this.counts;
  }

  private count(pence: number): void {
    this.counts.donations += 1;
    this.counts.total_minor += pence;
  }

  /** Into the open line, or a new one when it would pass £1,000; the line's date is its latest. */
  private aggregate(day: string, pence: number): void {
    if (this.open && this.open.pence + pence > AGGREGATE_LINE_MAX_MINOR) this.close();
    this.open = this.open
      ? { pence: this.open.pence + pence, lastDay: day > this.open.lastDay ? day : this.open.lastDay }
      : { pence, lastDay: day };
    this.counts.aggregated += 1;
    this.count(pence);
  }

  private close(): void {
    if (!this.open) return;
    this.aggregateLines.push(aggregateLine(this.open.lastDay, this.open.pence));
    this.open = undefined;
  }
}
