import { describe, expect, it } from 'vitest';
import type { MatchResult } from './matching';
import { summarise } from './summary';

describe('summarise', () => {
  it('counts rows, outcomes and matched money per currency', () => {
    const result = (outcome: MatchResult['outcome'], value: string, currency: string): MatchResult => ({
      row: 1,
      outcome,
      amount: { value, currency },
    });
    const summary = summarise([
      result('matched', '5000', 'CHF'),
      result('matched', '9007199254740991', 'EUR'),
      result('matched', '9007199254740991', 'EUR'),
      result('unmatched', '7', 'CHF'),
      { row: 2, outcome: 'error', reason: 'invalid_date' },
    ]);
    summary.add(result('matched', '1', 'CHF'));
    expect(summary.result()).toEqual({
      rows: 6,
      matched: 4,
      unmatched: 1,
      errors: 1,
      matched_amounts: [
        { value: '5001', currency: 'CHF' },
        { value: '18014398509481982', currency: 'EUR' },
      ],
    });
    expect(summarise().result()).toEqual({ rows: 0, matched: 0, unmatched: 0, errors: 0, matched_amounts: [] });
  });
});
