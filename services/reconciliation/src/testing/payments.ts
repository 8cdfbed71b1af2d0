/** Payments and parsed rows for matching tests: one organisation, one payment, a row that matches it. */
import type { MatchOptions, MatchResult, PaymentFacts } from '../domain/matching';
import { matchRows } from '../domain/matching';
import type { ParsedRow, ParseItem } from '../domain/rows';
import { collect } from './chunks';

export const ORG = 'aaaaaaaa-0000-4000-8000-000000000001';
export const OTHER_ORG = 'bbbbbbbb-0000-4000-8000-000000000002';
export const PAY = '0b5c1e4e-3c1f-4f5e-9a53-2d0e7b6f8a10';

/** PAY: 50.00 CHF of ORG, created 2025-03-10 23:59 UTC, succeeded. */
export const paymentFacts = (overrides: Partial<PaymentFacts> = {}): PaymentFacts => ({
  uuid: PAY,
  organisation_uuid: ORG,
  amount_minor: 5000,
  currency: 'CHF',
  created: Date.parse('2025-03-10T23:59:00Z') / 1000,
  status: 'succeeded',
  ...overrides,
});

/** A credit of 50.00 CHF booked 2025-03-12 with PAY as its reference. */
export const parsedRow = (overrides: Partial<ParsedRow> = {}): ParsedRow => ({
  row: 1,
  amount_minor: 5000,
  currency: 'CHF',
  credit: true,
  booking_date: '2025-03-12',
  references: [PAY],
  reference: PAY,
  ...overrides,
});

/** A lookup over `payments` (by uuid) that records the uuids of every call. */
export function paymentStore(payments: readonly PaymentFacts[]) {
  const byUuid = new Map(payments.map((p) => [p.uuid, p]));
  const calls: string[][] = [];
  const lookup = async (uuids: string[]) => {
    calls.push(uuids);
    const found = new Map<string, PaymentFacts>();
    for (const uuid of uuids) {
      const facts = byUuid.get(uuid);
      if (facts) found.set(uuid, facts);
    }
    return found;
  };
  return { calls, lookup };
}

export function matchAgainst(
  items: Iterable<ParseItem> | AsyncIterable<ParseItem>,
  payments: readonly PaymentFacts[] = [paymentFacts()],
  options: Partial<MatchOptions> = {},
): Promise<MatchResult[]> {
  return collect(matchRows(items, paymentStore(payments).lookup, { organisationUuid: ORG, ...options }));
}
