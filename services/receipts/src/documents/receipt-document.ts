import { isoExponent } from '@svc/core';
import * as z from 'zod';

/**
 * What a receipt's PDF is made from: everything it prints, already decided (totals, numbers,
 * statuses) by the receipts domain. The renderer checks the input's own consistency (the gifts add
 * up to the total, each falls in the period) so that no document can state a total its list does
 * not show.
 */

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar date `YYYY-MM-DD` that exists (no 2025-02-30). */
export const IsoDate = z.string().refine((value) => {
  const match = ISO_DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}, 'Expected an existing calendar date YYYY-MM-DD');

const text = z.string().trim().min(1);

const MinorUnits = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

export const PostalAddress = z.object({
  line1: text,
  postal_code: text,
  city: text,
  /** ISO 3166-1 alpha-2 (`CH`, `DE`, `GB`). */
  country: z.string().regex(/^[A-Z]{2}$/),
});

export const ReceiptOrganisation = z.object({
  legal_name: text,
  address: PostalAddress,
  /**
   * CH: the cantonal tax exemption's reference; DE: the tax number (StNr.) the Finanzamt gave;
   * GB: the registered charity number.
   */
  tax_exemption_reference: text,
  /** Who signs for the organisation (printed; a German machine-made receipt needs no signature). */
  signatory: text,
});

export const DonorName = z.union([
  z.object({ first_name: text, last_name: text }),
  z.object({ organisation_name: text }),
]);

export const ReceiptDonor = z.object({
  name: DonorName,
  /** The postal address, one line per entry (street, postcode and town, country); absent when unknown. */
  address_lines: z.array(text).optional(),
});

export const ReceiptHeader = z.object({
  /** `<year>-<sequence>` in the contract; printed as given. */
  number: text,
  year: z.number().int().min(1900).max(9999),
  /** When the receipt was issued: epoch milliseconds or an ISO date/time. */
  issued_at: z.union([z.number().int().nonnegative(), IsoDate, z.iso.datetime({ offset: true })]),
  status: z.enum(['issued', 'voided']),
  /** The number of the receipt this one replaces (a refund or lost dispute voided it). */
  replaces_number: text.optional(),
});

export const ReceiptGift = z.object({
  /** The date the money arrived. */
  date: IsoDate,
  amount_minor: MinorUnits,
  /** A money donation, or a membership fee (Germany names the two apart). */
  kind: z.enum(['money', 'membership_fee']),
  /** Germany: the gift is a waiver of reimbursement of expenses (Verzicht auf Erstattung von Aufwendungen). */
  waiver_of_reimbursement: z.boolean(),
});

/**
 * Germany: the tax office's decision that lets the organisation issue receipts, as the official
 * model prints it. The tax number is the organisation's `tax_exemption_reference`.
 */
export const GermanExemption = z.object({
  /**
   * The purposes, as words that follow "Förderung" in the model's sentences: "der Jugendhilfe",
   * "der Entwicklungszusammenarbeit" (after a § 60a finding the model's "Wir fördern nach unserer
   * Satzung" is followed by ": Förderung <purposes>").
   */
  purposes: text,
  /** The Finanzamt, as it follows "des Finanzamtes" / "vom Finanzamt": "Berlin für Körperschaften I". */
  tax_office: text,
  /**
   * `exemption_notice`: a Freistellungsbescheid (or the annex to a corporate tax assessment);
   * `statutes_finding`: the separate finding under § 60a AO that the statutes qualify.
   */
  basis: z.enum(['exemption_notice', 'statutes_finding']),
  /** The date of that decision. */
  decision_date: IsoDate,
  /** The last assessment period the exemption notice covers ("2021 bis 2023"); exemption notices only. */
  assessment_period: text.optional(),
  /**
   * When the use of machine-made receipts without signature was notified to the tax office
   * (R 10b.1 Abs. 4 EStR). Absent: the receipt carries a signature line instead of the notice.
   */
  machine_receipts_notified_on: IsoDate.optional(),
});

const common = {
  /** BCP 47; CH picks German, French, Italian or English by its language (German by default). */
  locale: z.string().min(2),
  organisation: ReceiptOrganisation,
  donor: ReceiptDonor,
  receipt: ReceiptHeader,
  total: z.object({ minor: MinorUnits, currency: z.string().regex(/^[A-Z]{3}$/) }),
  gifts: z.array(ReceiptGift).min(1),
  period: z.object({ from: IsoDate, to: IsoDate }),
};

export const ReceiptDocument = z
  .discriminatedUnion('country', [
    z.object({ country: z.literal('CH'), ...common }),
    z.object({ country: z.literal('GB'), ...common }),
    z.object({ country: z.literal('DE'), ...common, germany: GermanExemption }),
  ])
  .superRefine((doc, ctx) => {
    if (isoExponent(doc.total.currency) === undefined) {
      ctx.addIssue({ code: 'custom', path: ['total', 'currency'], message: 'Not an ISO 4217 currency we take' });
    }
    if (doc.period.from > doc.period.to) {
      ctx.addIssue({ code: 'custom', path: ['period'], message: 'The period ends before it starts' });
    }
    // Integers below 2^53 each: the sum is exact as a bigint whatever the count.
    const sum = doc.gifts.reduce((total, gift) => total + BigInt(gift.amount_minor), 0n);
    if (sum !== BigInt(doc.total.minor)) {
      ctx.addIssue({
        code: 'custom',
        path: ['total', 'minor'],
        message: `The gifts add up to ${sum}, not the total ${doc.total.minor}`,
      });
    }
    if (doc.country === 'DE' && doc.germany.basis === 'exemption_notice' && !doc.germany.assessment_period) {
      ctx.addIssue({
        code: 'custom',
        path: ['germany', 'assessment_period'],
        message: 'An exemption notice names the last assessment period it covers',
      });
    }
    doc.gifts.forEach((gift, index) => {
      if (gift.date < doc.period.from || gift.date > doc.period.to) {
        ctx.addIssue({ code: 'custom', path: ['gifts', index, 'date'], message: 'A gift outside the period' });
      }
    });
  });

export type ReceiptDocument = z.infer<typeof ReceiptDocument>;
export type ReceiptGift = z.infer<typeof ReceiptGift>;
export type GermanExemption = z.infer<typeof GermanExemption>;
export type DonorName = z.infer<typeof DonorName>;
export type ReceiptCountry = ReceiptDocument['country'];
