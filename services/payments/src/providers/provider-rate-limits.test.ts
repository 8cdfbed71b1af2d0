import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { advanceClock, freezeClock, resumeRealTime } from '@svc/core';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  configuredRateLimits,
  DEFAULT_RATE_LIMITS,
  forgetRuntimeRateLimits,
  LIMITS_CACHE_SECONDS,
  limitOf,
  providerRateLimits,
} from './provider-rate-limits';

/**
 * The limits the provider limiter applies (issue 46, point 2): the stage config's from the
 * deploy (SVC_PROVIDER_RATE_LIMITS), with the run-time override of the stage's provider secret
 * laid over them and re-read at most once a minute.
 */
const CONFIGURED = {
  stripe: { live: 22, test: 20, accounts: { acct_big: { live: 80 } } },
  adyen: { live: 50 },
};

let secret: Record<string, unknown> = {};
let reads = 0;
let failing = false;
const saved = { ...process.env };

beforeEach(() => {
  process.env.SVC_PROVIDER_RATE_LIMITS = JSON.stringify(CONFIGURED);
  process.env.SVC_STRIPE_SECRET_ARN = 'arn:aws:secretsmanager:eu-central-2:000000000000:secret:svc-providers';
  secret = { live_secret_key: 'sk_live_x' };
  reads = 0;
  failing = false;
  vi.spyOn(SecretsManagerClient.prototype, 'send').mockImplementation((async () => {
    reads += 1;
    if (failing) throw Object.assign(new Error('denied'), { name: 'AccessDeniedException' });
    return { SecretString: JSON.stringify(secret) };
  }) as never);
  freezeClock(1_900_000_000);
  forgetRuntimeRateLimits();
});

afterEach(() => {
  vi.restoreAllMocks();
  process.env = { ...saved };
});

afterAll(() => {
  resumeRealTime();
});

describe('provider rate limits', () => {
  it('are the configured ones, per provider, mode and account (an account’s own first)', async () => {
    const limits = await providerRateLimits();
    expect(limitOf(limits, 'stripe', undefined, false)).toBe(22);
    expect(limitOf(limits, 'stripe', 'acct_other', true)).toBe(20);
    expect(limitOf(limits, 'stripe', 'acct_big', false)).toBe(80);
    // Its test mode is the provider's.
    expect(limitOf(limits, 'stripe', 'acct_big', true)).toBe(20);
    expect(limitOf(limits, 'adyen', 'CharityECOM', false)).toBe(50);
    expect(limitOf(limits, 'adyen', 'CharityECOM', true)).toBeUndefined();
    expect(limitOf(limits, 'simulated', undefined, false)).toBeUndefined();
  });

  it('are Stripe’s defaults without configuration or secret (the local runtime)', async () => {
    delete process.env.SVC_PROVIDER_RATE_LIMITS;
    delete process.env.SVC_STRIPE_SECRET_ARN;
    expect(await providerRateLimits()).toEqual(DEFAULT_RATE_LIMITS);
    expect(reads).toBe(0);
  });

  it('take the secret’s override over the configured ones, merged per mode and account, without a deploy', async () => {
    secret.provider_rate_limits = { stripe: { live: 90, accounts: { acct_big: { test: 40 } } } };
    const limits = await providerRateLimits();
    expect(limitOf(limits, 'stripe', undefined, false)).toBe(90);
    // What the override leaves out stays as configured.
    expect(limitOf(limits, 'stripe', undefined, true)).toBe(20);
    expect(limitOf(limits, 'stripe', 'acct_big', false)).toBe(80);
    expect(limitOf(limits, 'stripe', 'acct_big', true)).toBe(40);
    expect(limitOf(limits, 'adyen', undefined, false)).toBe(50);
  });

  it('re-reads the secret at most once a minute per container: a change reaches it within that', async () => {
    await Promise.all(Array.from({ length: 20 }, () => providerRateLimits()));
    expect(reads).toBe(1);
    secret.provider_rate_limits = { stripe: { live: 95 } };
    advanceClock(LIMITS_CACHE_SECONDS - 1);
    expect(limitOf(await providerRateLimits(), 'stripe', undefined, false)).toBe(22);
    expect(reads).toBe(1);
    advanceClock(1);
    expect(limitOf(await providerRateLimits(), 'stripe', undefined, false)).toBe(95);
    expect(reads).toBe(2);
  });

  it('keep the configured ones when the secret cannot be read or holds no valid override, and try again a minute later', async () => {
    failing = true;
    expect(limitOf(await providerRateLimits(), 'stripe', undefined, false)).toBe(22);
    failing = false;
    secret.provider_rate_limits = { stripe: { live: 0 } };
    advanceClock(LIMITS_CACHE_SECONDS);
    expect(limitOf(await providerRateLimits(), 'stripe', undefined, false)).toBe(22);
    secret.provider_rate_limits = { stripe: { live: 70 } };
    advanceClock(LIMITS_CACHE_SECONDS);
    expect(limitOf(await providerRateLimits(), 'stripe', undefined, false)).toBe(70);
    expect(reads).toBe(3);
  });

  it('refuse a malformed configuration at the first payment rather than run unlimited', () => {
    process.env.SVC_PROVIDER_RATE_LIMITS = JSON.stringify({ stripe: { live: '22' } });
    expect(() => configuredRateLimits()).toThrow();
  });
});
