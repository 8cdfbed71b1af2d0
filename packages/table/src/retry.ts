import { ConflictError } from '@svc/core';

/** Thrown when another writer changed the item since it was read; the caller reads again. */
export class StaleVersionError extends Error {}

const TRANSACTION_CONFLICT = /TransactionConflict/;

function isRetryable(error: unknown): boolean {
  if (error instanceof StaleVersionError) return true;
  const name = (error as { name?: string }).name ?? '';
  const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? [];
  return name === 'TransactionConflictException' || reasons.some((r) => TRANSACTION_CONFLICT.test(r.Code ?? ''));
}

/** What a caller hears when its step lost the race every time: a 409 it may send again. */
const tooManyConflicts = () => new ConflictError('Too many concurrent changes; try again');

/**
 * Runs a read-check-write step until its guarded write lands: on a concurrent change it reads
 * again and re-checks every rule, so a decision is never made on a stale read. `onExhausted`
 * builds the error once the attempts are used up (by default a 409 Conflict). The one way every
 * domain retries a guarded write.
 */
export async function retryOnConflict<T>(
  step: () => Promise<T>,
  onExhausted: () => Error = tooManyConflicts,
  attempts = 60,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (!isRetryable(error)) throw error;
      if (attempt >= attempts) throw onExhausted();
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(250, 5 * 2 ** attempt)));
    }
  }
}
