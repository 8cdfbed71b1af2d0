import { GetSecretValueCommand, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { STRIPE_SECRET_OUTPUT } from '@svc/api';
import { stageSecret } from './stage-secret';

/** The environment variables `stripe configure` reads, and the secret's field for each. */
const FIELDS = {
  SVC_STRIPE_TEST_SECRET_KEY: 'test_secret_key',
  SVC_STRIPE_LIVE_SECRET_KEY: 'live_secret_key',
  SVC_STRIPE_WEBHOOK_SECRET: 'webhook_secret',
} as const;

/** What `stripe configure` will write: the given values over the current ones, nothing printed. */
export function stripeSecretUpdate(
  current: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): { secret: Record<string, string>; changed: string[] } {
  const secret: Record<string, string> = {};
  for (const field of Object.values(FIELDS)) {
    const value = current[field];
    if (typeof value === 'string' && value) secret[field] = value;
  }
  const changed: string[] = [];
  for (const [variable, field] of Object.entries(FIELDS)) {
    const value = env[variable];
    if (!value) continue;
    secret[field] = value;
    changed.push(field);
  }
  if (changed.length === 0) {
    throw new Error(`Set at least one of ${Object.keys(FIELDS).join(', ')} in the environment`);
  }
  return { secret, changed };
}

/**
 * Puts the Stripe keys from the environment into a deployed stage's secret (locally the service
 * reads the same variables directly). Prints which fields it set, never their values.
 */
export async function configureStripe(
  stage: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const { secretId, secrets } = await stageSecret(stage, STRIPE_SECRET_OUTPUT, 'stripe configure');
  const current = await secrets.send(new GetSecretValueCommand({ SecretId: secretId }));
  const { secret, changed } = stripeSecretUpdate(JSON.parse(current.SecretString ?? '{}'), env);
  await secrets.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: JSON.stringify(secret) }));
  return `Set ${changed.join(', ')} in the Stripe secret of stage ${stage}; functions read it at their next cold start`;
}
