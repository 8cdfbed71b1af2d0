import { GetSecretValueCommand, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { STRIPE_SECRET_OUTPUT } from '@svc/api';
import { hexKeys, stripeSecretKey, stripeWebhookSecret } from '@svc/core';
import { ensureWebhookEndpoint, replayStripeEvents, stripeClient } from '@svc/payments';
import type Stripe from 'stripe';
import { stageSecret } from './stage-secret';
import { openTarget, outputsOfStage } from './target';

/**
 * The environment variables `stripe configure` reads, and the secret's field for each: the stage's
 * one providers secret holds Stripe's keys and Adyen's (adyen-config.ts reads the `adyen_*` fields).
 */
export const FIELDS = {
  SVC_STRIPE_TEST_SECRET_KEY: 'test_secret_key',
  SVC_STRIPE_LIVE_SECRET_KEY: 'live_secret_key',
  SVC_STRIPE_WEBHOOK_SECRET: 'webhook_secret',
  SVC_ADYEN_API_KEY: 'adyen_api_key',
  SVC_ADYEN_HMAC_KEY: 'adyen_hmac_key',
  SVC_ADYEN_LIVE_URL_PREFIX: 'adyen_live_url_prefix',
  SVC_ADYEN_NOTIFICATION_USERNAME: 'adyen_notification_username',
  SVC_ADYEN_NOTIFICATION_PASSWORD: 'adyen_notification_password',
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
  // Keys in the wrong form are refused before anything is written (the service would refuse them
  // at its next cold start, or worse, use them).
  if (env.SVC_STRIPE_TEST_SECRET_KEY)
    stripeSecretKey(env.SVC_STRIPE_TEST_SECRET_KEY, 'test', 'SVC_STRIPE_TEST_SECRET_KEY');
  if (env.SVC_STRIPE_LIVE_SECRET_KEY)
    stripeSecretKey(env.SVC_STRIPE_LIVE_SECRET_KEY, 'live', 'SVC_STRIPE_LIVE_SECRET_KEY');
  if (env.SVC_STRIPE_WEBHOOK_SECRET) stripeWebhookSecret(env.SVC_STRIPE_WEBHOOK_SECRET, 'SVC_STRIPE_WEBHOOK_SECRET');
  if (env.SVC_ADYEN_HMAC_KEY) hexKeys(env.SVC_ADYEN_HMAC_KEY, 'SVC_ADYEN_HMAC_KEY');
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

/** The Stripe client of a stage (keys from its secret) or of the local environment, for a mode. */
async function stripeOf(stage: string | undefined, mode: string | undefined): Promise<Stripe> {
  if (mode !== undefined && mode !== 'test' && mode !== 'live') throw new Error('--mode is test or live');
  if (stage && stage !== 'local') {
    const secret = (await outputsOfStage(stage)).get(STRIPE_SECRET_OUTPUT);
    if (!secret) throw new Error(`Stage ${stage} has no ${STRIPE_SECRET_OUTPUT} output`);
    process.env.SVC_STRIPE_SECRET_ARN = secret;
  }
  const client = await stripeClient(mode !== 'live');
  if (!client)
    throw new Error(`No Stripe ${mode ?? 'test'} key (the stage's secret, or SVC_STRIPE_*_SECRET_KEY locally)`);
  return client;
}

/** `--since`: unix seconds or an ISO date-time. */
export function parseSince(value: string | undefined): number {
  if (!value) throw new Error('stripe:events needs --since <unix seconds or ISO time>');
  const seconds = /^\d+$/.test(value) ? Number(value) : Math.floor(Date.parse(value) / 1000);
  if (!Number.isFinite(seconds)) throw new Error(`--since ${value} is neither unix seconds nor an ISO time`);
  return seconds;
}

/** `pnpm ops stripe:events`: Stripe's events since a time, applied to the stage's table as deliveries are. */
export async function replayEvents(options: {
  stage?: string | undefined;
  since?: string | undefined;
  mode?: string | undefined;
  account?: string | undefined;
}): Promise<string> {
  const since = parseSince(options.since);
  const stripe = await stripeOf(options.stage, options.mode);
  const target = await openTarget({ stage: options.stage });
  try {
    const summary = await replayStripeEvents(stripe, { since, account: options.account });
    return `Replayed Stripe events since ${new Date(since * 1000).toISOString()} on ${target.description}: ${JSON.stringify(summary)}`;
  } finally {
    await target.close();
  }
}

/**
 * `pnpm ops stripe:webhook-endpoint`: our endpoint at Stripe, pinned and subscribed; a new
 * endpoint's signing secret goes into the stage's secret beside the ones it has (comma-separated,
 * so deliveries to the old endpoint keep verifying while it is rolled), or is printed once locally.
 */
export async function configureWebhookEndpoint(options: {
  stage?: string | undefined;
  url?: string | undefined;
  mode?: string | undefined;
  connect?: boolean | undefined;
}): Promise<string[]> {
  if (!options.url || !/^https:\/\//.test(options.url)) {
    throw new Error('stripe:webhook-endpoint needs --url https://<api host>/providers/stripe/events');
  }
  const stripe = await stripeOf(options.stage, options.mode);
  const endpoint = await ensureWebhookEndpoint(stripe, { url: options.url, connect: options.connect ?? false });
  const lines = [`Stripe webhook endpoint ${endpoint.id} ${endpoint.action} for ${options.url}`];
  if (endpoint.note) lines.push(endpoint.note);
  if (!endpoint.secret) return lines;
  if (!options.stage || options.stage === 'local') {
    lines.push('Its signing secret, shown only now: set SVC_STRIPE_WEBHOOK_SECRET (comma-separate several) to:');
    lines.push(endpoint.secret);
    return lines;
  }
  const { secretId, secrets } = await stageSecret(options.stage, STRIPE_SECRET_OUTPUT, 'stripe:webhook-endpoint');
  const current = JSON.parse(
    (await secrets.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString ?? '{}',
  );
  const kept = typeof current.webhook_secret === 'string' && current.webhook_secret ? `${current.webhook_secret},` : '';
  const { secret } = stripeSecretUpdate(current, { SVC_STRIPE_WEBHOOK_SECRET: `${kept}${endpoint.secret}` });
  await secrets.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: JSON.stringify(secret) }));
  lines.push(`Its signing secret was added to the Stripe secret of stage ${options.stage}`);
  return lines;
}
