import { describe, expect, it } from 'vitest';
import { STRIPE_API_VERSION } from './stripe-config';
import { saveableOffSession, stripeProvider } from './stripe-provider';

describe('what Stripe can save for later charges', () => {
  it('knows which methods Stripe can save at which API version (TWINT since 2026-05-27)', () => {
    expect(saveableOffSession('twint', STRIPE_API_VERSION)).toBe(true);
    expect(saveableOffSession('twint', '2026-04-22.dahlia')).toBe(false);
    expect(saveableOffSession('card', '2020-08-27')).toBe(true);
    expect(saveableOffSession('sepa_dd', '2020-08-27')).toBe(true);
  });

  it('refuses to save a method it cannot before asking for a key or calling Stripe', async () => {
    const context = { profile: { name: 'x', payment_method: 'twint', provider: 'stripe' }, testMode: true };
    // No key is configured here: a saveable method is refused for the key, not for the method.
    expect(await stripeProvider.unusableFor?.(context, 'twint', true)).toMatch(/key/);
  });
});
