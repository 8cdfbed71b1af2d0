/** Thrown when another writer changed the item since it was read; the caller reads again. */
export class StaleVersionError extends Error {}

const TRANSACTION_CONFLICT = /TransactionConflict/;

function isRetryable(error: unknown): boolean {
  if (error instanceof StaleVersionError) return true;
  const name = (error as { name?: string }).name ?? '';
  const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? [];
  return name === 'TransactionConflictException' || reasons.some((r) => TRANSACTION_CONFLICT.test(r.Code ?? ''));
}

/**
 * Runs a read-check-write step until its guarded write lands: on a concurrent change it reads
 * again and re-checks every rule, so a decision is never made on a stale read. `onExhausted`
 * builds the error once the attempts are used up.
 */
export async function retryOnConflict<T>(step: () => Promise<T>, onExhausted: () => Error, attempts = 60): Promise<T> {
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
