/** Totals of a reconciliation: rows by outcome and the matched money per currency. */
import type { Amount, MatchResult } from './matching';

export interface ReconciliationSummary {
  rows: number;
  matched: number;
  unmatched: number;
  errors: number;
  /** Matched money per currency, sorted by currency; values are minor units as strings. */
  matched_amounts: Amount[];
}

export interface Summariser {
  add(result: MatchResult): void;
  result(): ReconciliationSummary;
}

/** Counts results (given now, or `add`ed as they stream by): rows, outcomes and matched money. */
export function summarise(results: Iterable<MatchResult> = []): Summariser {
  const counts = { rows: 0, matched: 0, unmatched: 0, errors: 0 };
  const amounts = new Map<string, bigint>();
  const summariser: Summariser = {
    add(result) {
      counts.rows++;
      if (result.outcome === 'error') counts.errors++;
      else counts[result.outcome]++;
      if (result.outcome === 'matched' && result.amount) {
        const { currency, value } = result.amount;
        amounts.set(currency, (amounts.get(currency) ?? 0n) + BigInt(value));
      }
    },
    result: () => ({
      ...counts,
      matched_amounts: [...amounts]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([currency, value]) => ({ value: value.toString(), currency })),
    }),
  };
  for (const result of results) summariser.add(result);
  return summariser;
}
