import { describe, expect, it } from 'vitest';
import { providerLimitsUpdate, providerStatusLines } from './providers';

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

describe('pnpm ops providers:limits', () => {
  const keys = { live_secret_key: 'sk_live_x', webhook_secret: 'whsec_x' };

  it('sets the run-time limits in the secret, keeping its keys, and prints no key', () => {
    const update = providerLimitsUpdate(keys, {
      set: '{"stripe": {"live": 90, "accounts": {"acct_1": {"live": 40}}}}',
    });
    expect(update.secret).toEqual({
      ...keys,
      provider_rate_limits: { stripe: { live: 90, accounts: { acct_1: { live: 40 } } } },
    });
    expect(update.changed).toBe(true);
    expect(update.line).not.toContain('sk_live');
  });

  it('clears them, and prints what is set without changing anything', () => {
    const set = { ...keys, provider_rate_limits: { stripe: { live: 90 } } };
    expect(providerLimitsUpdate(set, {}).line).toBe(
      'Run-time provider rate limits (over the stage config’s): {"stripe":{"live":90}}',
    );
    expect(providerLimitsUpdate(set, {}).changed).toBe(false);
    expect(providerLimitsUpdate(set, { clear: true }).secret).toEqual(keys);
  });

  it.each([
    ['{"stripe": {"live": 0}}', /whole numbers of at least 1/],
    ['{"stripe": {"live": 2.5}}', /whole numbers/],
    ['{"stripe": {"sandbox": 5}}', /--set takes/],
    ['stripe=90', /--set takes JSON/],
  ])('refuses --set %s', (set, message) => {
    expect(() => providerLimitsUpdate(keys, { set })).toThrow(message);
  });
});
