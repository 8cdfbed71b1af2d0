import { GetSecretValueCommand, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { STRIPE_SECRET_OUTPUT } from '@svc/api';
import type { ProviderHealth } from '@svc/payments';
import { providerRateLimitsSchema, RUNTIME_LIMITS_KEY } from '@svc/payments/provider-rate-limits';
import { stageSecret } from './stage-secret';

/** One line per provider and mode: its circuit, as `pnpm ops providers:status` prints it. */
export function providerStatusLines(health: readonly ProviderHealth[], at = Math.floor(Date.now() / 1000)): string[] {
  return health.map((h) => {
    const parts = [`${h.provider.padEnd(10)} ${h.mode.padEnd(4)} ${h.state}`];
    if (h.failures > 0) parts.push(`${h.failures} failure(s) in the window`);
    if (h.state !== 'closed' && h.opened_at !== undefined) parts.push(`opened ${at - h.opened_at} s ago`);
    if (h.last_failure) parts.push(`last failure: ${h.last_failure}`);
    return parts.join(', ');
  });
}

/**
 * `pnpm ops providers:limits`: the run-time override of the provider rate limits (issue 46), the
 * `provider_rate_limits` key of the stage's provider secret, which the functions that take
 * provider calls re-read at most once a minute (services/payments/src/providers/
 * provider-rate-limits.ts). `--set` validates the JSON and lays it over the stage config's
 * limits per provider, mode and account; `--clear` goes back to the stage config's. The secret's
 * other keys (the providers' keys) are kept and never printed.
 */
export function providerLimitsUpdate(
  secret: Record<string, unknown>,
  options: { set?: string | undefined; clear?: boolean | undefined },
): { secret: Record<string, unknown>; changed: boolean; line: string } {
  if (options.set !== undefined && options.clear) throw new Error('Give --set or --clear, not both');
  if (options.clear) {
    const { [RUNTIME_LIMITS_KEY]: _dropped, ...rest } = secret;
    return { secret: rest, changed: true, line: 'Cleared the run-time provider rate limits: the stage config’s apply' };
  }
  if (options.set !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(options.set);
    } catch {
      throw new Error(`--set takes JSON, e.g. '{"stripe": {"live": 90}}' (got ${options.set})`);
    }
    const limits = providerRateLimitsSchema.safeParse(parsed);
    if (!limits.success) {
      throw new Error(
        `--set takes {"<provider>": {"live"?: n, "test"?: n, "accounts"?: {"<account>": {"live"?: n, "test"?: n}}}} with whole numbers of at least 1: ${limits.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
      );
    }
    return {
      secret: { ...secret, [RUNTIME_LIMITS_KEY]: limits.data },
      changed: true,
      line: `Set the run-time provider rate limits to ${JSON.stringify(limits.data)}: every function applies them within a minute`,
    };
  }
  const current = secret[RUNTIME_LIMITS_KEY];
  return {
    secret,
    changed: false,
    line:
      current === undefined
        ? 'No run-time provider rate limits: the stage config’s apply'
        : `Run-time provider rate limits (over the stage config’s): ${JSON.stringify(current)}`,
  };
}

export async function configureProviderLimits(options: {
  stage?: string | undefined;
  set?: string | undefined;
  clear?: boolean | undefined;
}): Promise<string> {
  // Validated before AWS is asked anything.
  providerLimitsUpdate({}, options);
  const { secretId, secrets } = await stageSecret(options.stage, STRIPE_SECRET_OUTPUT, 'providers:limits');
  const current = await secrets.send(new GetSecretValueCommand({ SecretId: secretId }));
  const update = providerLimitsUpdate(JSON.parse(current.SecretString ?? '{}'), options);
  if (update.changed) {
    await secrets.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: JSON.stringify(update.secret) }));
  }
  return update.line;
}
