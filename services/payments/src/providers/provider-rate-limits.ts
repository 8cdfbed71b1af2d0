import { deferred, logger, now, sdkClient } from '@svc/core';
import * as z from 'zod';

/**
 * How many requests a second the shared limiter (repository/provider-rate-repository.ts) lets go
 * to a provider, per provider, mode and, where one was given, per provider account (issue 46,
 * point 2). Two sources, the second over the first:
 *
 * 1. The stage's configuration (`providerRateLimits` in infra/config/stages.ts), which a deploy
 *    puts into `SVC_PROVIDER_RATE_LIMITS` on every function that takes provider calls (payments,
 *    the billing worker, the payment resolver); locally and in tests the variable as set.
 * 2. A run-time override an operator sets without a deploy (`pnpm ops providers:limits`): the key
 *    `provider_rate_limits` of the stage's provider secret (the StripeKeys secret,
 *    `SVC_STRIPE_SECRET_ARN`). Those functions read that secret already (Stripe's keys), so the
 *    override needs no new permission for them, and the operators who set the keys can set it;
 *    an SSM parameter or a table item would each have needed a new grant on every such function
 *    (and SSM's GetParameter is held to 40 transactions a second per account and Region by
 *    default, https://docs.aws.amazon.com/general/latest/gr/ssm.html, which a thousand prewarmed
 *    containers re-reading it would approach). It is re-read at most once per
 *    LIMITS_CACHE_SECONDS per container: a change reaches every container within that.
 *
 * The override is merged into the configuration per provider, mode and account: `{"stripe":
 * {"live": 90}}` raises Stripe's live limit and leaves its test limit and its accounts' as
 * configured. Without either, DEFAULT_RATE_LIMITS.
 *
 * Stripe: "Live mode: 100 operations - Sandbox: 25 operations" a second per account, and "API
 * endpoints have a default limit of 25 requests per second", each named operation its own
 * endpoint (https://docs.stripe.com/rate-limits; a large increase needs "at least 6 weeks"
 * notice). What the limiter counts is one operation, the new payment's `POST /v1/payment_intents`,
 * so its 25 binds before the 100: 22 live and 20 in test mode (room for retries of it). Adyen
 * publishes no fixed per-account figure (it answers 429 over a client's limit,
 * https://docs.adyen.com/development-resources/rate-limits/): no limit unless configured.
 */
export interface ModeLimits {
  live?: number | undefined;
  test?: number | undefined;
}
export type ProviderRateLimits = Record<string, ModeLimits & { accounts?: Record<string, ModeLimits> | undefined }>;

export const DEFAULT_RATE_LIMITS: ProviderRateLimits = { stripe: { live: 22, test: 20 } };
/** The account a payment on the platform's own provider account counts under. */
export const PLATFORM_ACCOUNT_KEY = 'platform';
/** The key of the run-time override in the stage's provider secret. */
export const RUNTIME_LIMITS_KEY = 'provider_rate_limits';
/** A container re-reads the override at most this often (service clock seconds). */
export const LIMITS_CACHE_SECONDS = 60;

const modeSchema = () =>
  z.object({ live: z.number().int().min(1).optional(), test: z.number().int().min(1).optional() }).strict();
export const providerRateLimitsSchema = deferred(() =>
  z.record(
    z.string(),
    modeSchema()
      .extend({ accounts: z.record(z.string(), modeSchema()).optional() })
      .strict(),
  ),
);

/** `over` laid on `base` per provider, mode and account. */
export function mergeRateLimits(base: ProviderRateLimits, over: ProviderRateLimits | undefined): ProviderRateLimits {
  if (!over) return base;
  const merged: ProviderRateLimits = { ...base };
  for (const [provider, limits] of Object.entries(over)) {
    const before = base[provider] ?? {};
    const accounts = { ...before.accounts };
    for (const [account, modes] of Object.entries(limits.accounts ?? {})) {
      accounts[account] = { ...accounts[account], ...modes };
    }
    merged[provider] = {
      ...before,
      ...limits,
      ...(Object.keys(accounts).length > 0 ? { accounts } : {}),
    };
  }
  return merged;
}

/** The limit of one provider account in one mode: the account's own, else the provider's. */
export function limitOf(
  limits: ProviderRateLimits,
  provider: string,
  account: string | undefined,
  testMode: boolean,
): number | undefined {
  const mode = testMode ? 'test' : 'live';
  const entry = limits[provider];
  return entry?.accounts?.[account ?? PLATFORM_ACCOUNT_KEY]?.[mode] ?? entry?.[mode];
}

/** The configured limits, parsed once per value of the variable (not once per payment). */
let configured: { from: string | undefined; limits: ProviderRateLimits } | undefined;

export function configuredRateLimits(): ProviderRateLimits {
  const text = process.env.SVC_PROVIDER_RATE_LIMITS;
  if (!configured || configured.from !== text) {
    configured = {
      from: text,
      limits: text ? providerRateLimitsSchema.parse(JSON.parse(text)) : DEFAULT_RATE_LIMITS,
    };
  }
  return configured.limits;
}

let override: { readAt: number; secretArn: string; limits: Promise<ProviderRateLimits | undefined> } | undefined;

/** Forgets the override read (tests that play a new container or change the secret). */
export function forgetRuntimeRateLimits(): void {
  override = undefined;
}

/**
 * The run-time override, read from the secret at most once per LIMITS_CACHE_SECONDS. A secret
 * that cannot be read or holds no valid override leaves the configured limits (logged): a
 * payment never fails for it.
 */
async function runtimeOverride(): Promise<ProviderRateLimits | undefined> {
  const secretArn = process.env.SVC_STRIPE_SECRET_ARN;
  if (!secretArn) return undefined;
  const at = now();
  // A clock moved back (the local runtime's, the tests') counts as stale.
  const fresh =
    override?.secretArn === secretArn && at >= override.readAt && at - override.readAt < LIMITS_CACHE_SECONDS;
  if (!fresh || !override) {
    override = { readAt: at, secretArn, limits: readOverride(secretArn) };
  }
  return override.limits;
}

async function readOverride(secretArn: string): Promise<ProviderRateLimits | undefined> {
  try {
    const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
    const out = await sdkClient(new SecretsManagerClient({})).send(new GetSecretValueCommand({ SecretId: secretArn }));
    const value = (JSON.parse(out.SecretString ?? '{}') as Record<string, unknown>)[RUNTIME_LIMITS_KEY];
    if (value === undefined) return undefined;
    const parsed = providerRateLimitsSchema.safeParse(value);
    if (parsed.success) return parsed.data;
    logger.error('The provider rate limits in the stage secret are not valid: the configured ones apply', {
      key: RUNTIME_LIMITS_KEY,
      issues: parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`),
    });
  } catch (error) {
    logger.warn('The provider rate limits could not be read from the stage secret: the configured ones apply', {
      error: (error as Error).name,
    });
  }
  return undefined;
}

/** The limits in force: the configured ones with the run-time override laid over them. */
export async function providerRateLimits(): Promise<ProviderRateLimits> {
  return mergeRateLimits(configuredRateLimits(), await runtimeOverride());
}
