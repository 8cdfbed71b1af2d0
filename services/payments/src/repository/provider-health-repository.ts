import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { BUSINESS_METRICS, logger, now, recordMetric } from '@svc/core';
import { db, defineEntity, tableName } from '@svc/table';
import * as z from 'zod';

/**
 * The health of a provider, per mode (test and live reach different endpoints and accounts),
 * shared by every function through the table: a circuit breaker.
 *
 * - `closed`: payments go to the provider. Technical failures (timeouts, 5xx, connection errors,
 *   never declines) are counted in a window of WINDOW_SECONDS; OPEN_AFTER of them open it.
 * - `open`: new payments skip the provider for COOL_DOWN_SECONDS.
 * - `half_open`: after the cool-down one payment (the probe, claimed by a conditional write, so
 *   one across all functions) goes to the provider; its success closes the circuit, its failure
 *   opens it again. A probe that never reports (its function died) is given up after PROBE_SECONDS.
 *
 * Writes happen on failures and state changes only, never on a success of a closed circuit, so
 * the item takes no write per donation at a peak; reads are cached per container for
 * CACHE_SECONDS (the state another function wrote is seen at most that late).
 */
export const WINDOW_SECONDS = 30;
export const OPEN_AFTER = 5;
export const COOL_DOWN_SECONDS = 30;
export const PROBE_SECONDS = 30;
const CACHE_SECONDS = 1;

export type CircuitState = 'closed' | 'open' | 'half_open';

const healthSchema = z.object({
  provider: z.string(),
  mode: z.enum(['test', 'live']),
  state: z.enum(['closed', 'open', 'half_open']),
  failures: z.number(),
  window_start: z.number(),
  opened_at: z.number().optional(),
  probe_at: z.number().optional(),
  changed: z.number(),
  last_failure: z.string().optional(),
});
export type ProviderHealth = z.infer<typeof healthSchema>;

export const PROVIDER_HEALTH = defineEntity<ProviderHealth, readonly [string, 'test' | 'live']>({
  name: 'provider_health',
  summary:
    'A provider’s circuit breaker per mode (closed, open, half open), shared by every function; written on failures and state changes only.',
  prefix: 'PROVIDER_HEALTH',
  idShown: '<provider>#<test or live>',
  sort: 'PROVIDER_HEALTH',
  id: (health) => [health.provider, health.mode] as const,
  idParts: ([provider, mode]) => [provider, mode],
  byKey: 'a provider’s circuit (fail-over)',
  storage: {
    toAttributes: ({ provider: _p, mode: _m, ...rest }) => rest,
    fromAttributes: (item) => {
      const [, provider, mode] = String(item.pk).split('#');
      const { pk: _pk, sk: _sk, entity: _entity, ...rest } = item;
      return { provider, mode, ...rest };
    },
  },
  parse: (value) => healthSchema.parse(value),
});

const closed = (provider: string, mode: 'test' | 'live'): ProviderHealth => ({
  provider,
  mode,
  state: 'closed',
  failures: 0,
  window_start: 0,
  changed: 0,
});

const cache = new Map<string, { read: number; health: ProviderHealth }>();
const cacheKey = (provider: string, mode: string) => `${provider}#${mode}`;

export async function providerHealth(provider: string, mode: 'test' | 'live', fresh = false): Promise<ProviderHealth> {
  const key = cacheKey(provider, mode);
  const cached = cache.get(key);
  if (!fresh && cached && now() - cached.read < CACHE_SECONDS && cached.read <= now()) return cached.health;
  const health = (await PROVIDER_HEALTH.find([provider, mode])) ?? closed(provider, mode);
  cache.set(key, { read: now(), health });
  return health;
}

function remember(health: ProviderHealth): ProviderHealth {
  cache.set(cacheKey(health.provider, health.mode), { read: now(), health });
  return health;
}

/** Forgets what this container read (tests that reset the table). */
export function forgetProviderHealth(): void {
  cache.clear();
}

/** Logged, and counted (ProviderCircuitChanges, dimension `state`, the open state alarmed), at each change. */
export const CIRCUIT_CHANGED = 'A provider’s circuit changed state';

function announce(health: ProviderHealth, from: CircuitState): void {
  recordMetric(BUSINESS_METRICS.providerCircuitChanges, 1, { provider: health.provider, state: health.state });
  const log = health.state === 'open' ? logger.error.bind(logger) : logger.info.bind(logger);
  log(CIRCUIT_CHANGED, {
    provider: health.provider,
    mode: health.mode,
    from,
    to: health.state,
    failures: health.failures,
    last_failure: health.last_failure,
  });
}

/** What a new payment may do with a provider now: go, go as the one probe, or skip it. */
export type Admission = 'go' | 'probe' | 'skip';

export async function admit(provider: string, mode: 'test' | 'live'): Promise<Admission> {
  const health = await providerHealth(provider, mode);
  const at = now();
  if (health.state === 'closed') return 'go';
  const probeDue =
    (health.state === 'open' && at >= (health.opened_at ?? 0) + COOL_DOWN_SECONDS) ||
    (health.state === 'half_open' && at >= (health.probe_at ?? 0) + PROBE_SECONDS);
  if (!probeDue) return 'skip';
  // One probe across every function: whoever moves the item from the state it read wins.
  const claimed = await update(
    provider,
    mode,
    'SET #state = :half, probe_at = :at, changed = :at',
    '#state = :seen AND changed = :changed',
    { ':half': 'half_open', ':at': at, ':seen': health.state, ':changed': health.changed },
  );
  if (!claimed) {
    await providerHealth(provider, mode, true);
    return 'skip';
  }
  if (health.state === 'open') announce(claimed, 'open');
  return 'probe';
}

/**
 * A probe claimed and then not sent (the payment went elsewhere, or its input was refused):
 * the circuit goes back to open as it was, so the next payment may probe at once.
 */
export async function releaseProbe(provider: string, mode: 'test' | 'live'): Promise<void> {
  await update(provider, mode, 'SET #state = :open', '#state = :half', { ':open': 'open', ':half': 'half_open' });
}

/** The provider answered (a payment, a decline): a closed circuit stays so without a write. */
export async function recordAnswer(provider: string, mode: 'test' | 'live', admission: Admission): Promise<void> {
  const health = await providerHealth(provider, mode);
  if (health.state === 'closed' && health.failures === 0 && admission !== 'probe') return;
  const at = now();
  const next = await update(
    provider,
    mode,
    'SET #state = :closed, failures = :zero, window_start = :at, changed = :at REMOVE opened_at, probe_at',
    undefined,
    { ':closed': 'closed', ':zero': 0, ':at': at },
  );
  if (next && health.state !== 'closed') announce(next, health.state);
}

/**
 * A technical failure (no answer, a 5xx, a refused connection): counted in the window, and the
 * circuit opened at OPEN_AFTER, or at once when the failure was the probe's.
 */
export async function recordFailure(
  provider: string,
  mode: 'test' | 'live',
  admission: Admission,
  reason: string,
): Promise<void> {
  const at = now();
  const health = await providerHealth(provider, mode, true);
  if (admission === 'probe' || health.state === 'half_open') {
    const reopened = await update(
      provider,
      mode,
      'SET #state = :open, opened_at = :at, changed = :at, last_failure = :reason REMOVE probe_at',
      undefined,
      { ':open': 'open', ':at': at, ':reason': reason },
    );
    if (reopened && health.state !== 'open') announce(reopened, health.state);
    return;
  }
  if (health.state === 'open') return;
  const counted =
    at - health.window_start >= WINDOW_SECONDS
      ? await update(
          provider,
          mode,
          'SET failures = :one, window_start = :at, last_failure = :reason, changed = if_not_exists(changed, :zero), #state = if_not_exists(#state, :closed)',
          'attribute_not_exists(window_start) OR window_start = :seen',
          { ':one': 1, ':at': at, ':reason': reason, ':seen': health.window_start, ':zero': 0, ':closed': 'closed' },
        )
      : await update(provider, mode, 'ADD failures :one SET last_failure = :reason', 'window_start = :seen', {
          ':one': 1,
          ':reason': reason,
          ':seen': health.window_start,
        });
  // Another function moved the window first: counted again in the new one.
  if (!counted) return recordFailure(provider, mode, admission, reason);
  if (counted.state === 'closed' && counted.failures >= OPEN_AFTER) {
    const opened = await update(
      provider,
      mode,
      'SET #state = :open, opened_at = :at, changed = :at',
      '#state = :closed',
      { ':open': 'open', ':at': at, ':closed': 'closed' },
    );
    if (opened) announce(opened, 'closed');
  }
}

async function update(
  provider: string,
  mode: 'test' | 'live',
  expression: string,
  condition: string | undefined,
  values: Record<string, unknown>,
): Promise<ProviderHealth | undefined> {
  const names: Record<string, string> =
    expression.includes('#state') || condition?.includes('#state') ? { '#state': 'state' } : {};
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: PROVIDER_HEALTH.key([provider, mode]),
        UpdateExpression: `${expression.replace(/^SET /, 'SET entity = :entity, ')}`.replace(
          /^ADD (.*?) SET /,
          'ADD $1 SET entity = :entity, ',
        ),
        ...(condition ? { ConditionExpression: condition } : {}),
        ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: { ...values, ':entity': 'provider_health' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return remember(PROVIDER_HEALTH.fromItem(out.Attributes ?? {}));
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

/** Every provider circuit the table holds (the operator's view). */
export async function allProviderHealth(providers: readonly string[]): Promise<ProviderHealth[]> {
  const modes = ['test', 'live'] as const;
  return Promise.all(providers.flatMap((provider) => modes.map((mode) => providerHealth(provider, mode, true))));
}
