import { describe, expect, it } from 'vitest';
import { providerStatusLines } from './providers';

describe('pnpm ops providers:status', () => {
  it('prints each provider and mode with its circuit, failures, how long it has been open and why', () => {
    const lines = providerStatusLines(
      [
        { provider: 'stripe', mode: 'live', state: 'closed', failures: 0, window_start: 0, changed: 0 },
        {
          provider: 'adyen',
          mode: 'live',
          state: 'open',
          failures: 5,
          window_start: 1_000,
          opened_at: 1_010,
          changed: 1_010,
          last_failure: 'no_answer',
        },
        {
          provider: 'adyen',
          mode: 'test',
          state: 'half_open',
          failures: 2,
          window_start: 1_000,
          opened_at: 990,
          changed: 1_020,
        },
      ],
      1_040,
    );
    expect(lines).toEqual([
      'stripe     live closed',
      'adyen      live open, 5 failure(s) in the window, opened 30 s ago, last failure: no_answer',
      'adyen      test half_open, 2 failure(s) in the window, opened 50 s ago',
    ]);
  });
});
