import { describe, expect, it } from 'vitest';
import { captchaSecretFrom, configureCaptcha } from './captcha';
import { configureStripe, stripeSecretUpdate } from './stripe';

/** An HMAC key as Adyen's Customer Area gives one: 64 hex characters. */
const HMAC = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';

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
      { SVC_ADYEN_API_KEY: 'AQE-key', SVC_ADYEN_HMAC_KEY: HMAC, SVC_ADYEN_NOTIFICATION_PASSWORD: 'pw' },
    );
    expect(secret).toEqual({
      test_secret_key: 'sk_test_kept',
      adyen_api_key: 'AQE-key',
      adyen_hmac_key: HMAC,
      adyen_notification_password: 'pw',
    });
    expect(changed).toEqual(['adyen_api_key', 'adyen_hmac_key', 'adyen_notification_password']);
  });

  it('refuses keys in the wrong form before writing anything (issue 45)', () => {
    const update = (env: Record<string, string>) => () => stripeSecretUpdate({}, env);
    // Not hex, odd length, too short, base64: Node's hex parser would make a short or empty key of each.
    for (const bad of ['zz'.repeat(32), `${HMAC}0`, '44782DEF', Buffer.from(HMAC, 'hex').toString('base64')])
      expect(update({ SVC_ADYEN_HMAC_KEY: bad }), bad).toThrow(/hexadecimal/);
    expect(update({ SVC_ADYEN_HMAC_KEY: `${HMAC},nothex` })).toThrow(/key 2/);
    expect(update({ SVC_STRIPE_TEST_SECRET_KEY: 'sk_live_abc' })).toThrow(/test secret key/);
    expect(update({ SVC_STRIPE_LIVE_SECRET_KEY: 'pk_live_abc' })).toThrow(/live secret key/);
    expect(update({ SVC_STRIPE_WEBHOOK_SECRET: 'secret' })).toThrow(/webhook secret/);
    expect(
      update({ SVC_STRIPE_LIVE_SECRET_KEY: 'rk_live_abc', SVC_ADYEN_HMAC_KEY: `${HMAC}, ${HMAC.toLowerCase()}` })()
        .changed,
    ).toEqual(['live_secret_key', 'adyen_hmac_key']);
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
