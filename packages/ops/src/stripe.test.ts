import { describe, expect, it } from 'vitest';
import { configureStripe, stripeSecretUpdate } from './stripe';

describe('pnpm ops stripe configure', () => {
  it('sets the given keys over the stored ones and drops the placeholder', () => {
    const { secret, changed } = stripeSecretUpdate(
      { unset: 'placeholder', live_secret_key: 'sk_live_old', webhook_secret: 'whsec_old' },
      { SVC_STRIPE_TEST_SECRET_KEY: 'sk_test_new', SVC_STRIPE_WEBHOOK_SECRET: 'whsec_new' },
    );
    expect(secret).toEqual({
      test_secret_key: 'sk_test_new',
      live_secret_key: 'sk_live_old',
      webhook_secret: 'whsec_new',
    });
    expect(changed).toEqual(['test_secret_key', 'webhook_secret']);
  });

  it('refuses to run without a key in the environment or without a deployed stage', async () => {
    expect(() => stripeSecretUpdate({}, {})).toThrow(/SVC_STRIPE_TEST_SECRET_KEY/);
    await expect(configureStripe(undefined, {})).rejects.toThrow(/--stage/);
    await expect(configureStripe('local', {})).rejects.toThrow(/locally/);
  });
});
