import { describe, expect, it } from 'vitest';
import { captchaSecretFrom, configureCaptcha } from './captcha';
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

  it('puts Adyen’s keys in the same secret, keeping Stripe’s', () => {
    const { secret, changed } = stripeSecretUpdate(
      { test_secret_key: 'sk_test_kept' },
      { SVC_ADYEN_API_KEY: 'AQE-key', SVC_ADYEN_HMAC_KEY: '44782DEF', SVC_ADYEN_NOTIFICATION_PASSWORD: 'pw' },
    );
    expect(secret).toEqual({
      test_secret_key: 'sk_test_kept',
      adyen_api_key: 'AQE-key',
      adyen_hmac_key: '44782DEF',
      adyen_notification_password: 'pw',
    });
    expect(changed).toEqual(['adyen_api_key', 'adyen_hmac_key', 'adyen_notification_password']);
  });

  it('refuses to run without a key in the environment or without a deployed stage', async () => {
    expect(() => stripeSecretUpdate({}, {})).toThrow(/SVC_STRIPE_TEST_SECRET_KEY/);
    await expect(configureStripe(undefined, {})).rejects.toThrow(/--stage/);
    await expect(configureStripe('local', {})).rejects.toThrow(/locally/);
  });
});

describe('pnpm ops captcha configure', () => {
  it('takes the secret key from SVC_CAPTCHA_SECRET, trimmed, and nothing else', () => {
    expect(captchaSecretFrom({ SVC_CAPTCHA_SECRET: ' 6Lc-secret-key\n' })).toBe('6Lc-secret-key');
    expect(() => captchaSecretFrom({})).toThrow(/SVC_CAPTCHA_SECRET/);
    expect(() => captchaSecretFrom({ SVC_CAPTCHA_SECRET: '   ' })).toThrow(/SVC_CAPTCHA_SECRET/);
    expect(() => captchaSecretFrom({ SVC_CAPTCHA_SECRET: 'two words' })).toThrow(/whitespace/);
  });

  it('refuses to run without a deployed stage, before any AWS call', async () => {
    await expect(configureCaptcha(undefined, { SVC_CAPTCHA_SECRET: 'k' })).rejects.toThrow(/--stage/);
    await expect(configureCaptcha('local', { SVC_CAPTCHA_SECRET: 'k' })).rejects.toThrow(/locally/);
    await expect(configureCaptcha('dev', {})).rejects.toThrow(/SVC_CAPTCHA_SECRET/);
  });
});
