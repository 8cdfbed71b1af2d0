import { ConflictError, now } from '@svc/core';
import { type GuardedWrite, transactWrite } from '@svc/table';
import { type PaymentRecord, paymentUpdateWrite } from '../repository/payment-repository';
import { type PaymentSourceRecord, paymentSourceUpdateWrite } from '../repository/payment-source-repository';

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
 * again and re-checks every rule, so a decision is never made on a stale read.
 */
export async function retryOnConflict<T>(step: () => Promise<T>, attempts = 60): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (!isRetryable(error) || attempt >= attempts) {
        if (isRetryable(error)) throw new ConflictError('Too many concurrent changes; try again');
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(250, 5 * 2 ** attempt)));
    }
  }
}

/** Writes `next` (version + 1) guarded by the version of `read`, with any extra items. */
export async function savePaymentVersion(
  read: PaymentRecord,
  next: PaymentRecord,
  extra: GuardedWrite[] = [],
): Promise<PaymentRecord> {
  const saved = { ...next, version: read.version + 1, updated: now() };
  await transactWrite([
    { item: paymentUpdateWrite(saved, read.version), onConditionFailed: () => new StaleVersionError() },
    ...extra,
  ]);
  return saved;
}

export async function saveSourceVersion(
  read: PaymentSourceRecord,
  next: PaymentSourceRecord,
  extra: GuardedWrite[] = [],
): Promise<PaymentSourceRecord> {
  const saved = { ...next, version: read.version + 1 };
  await transactWrite([
    { item: paymentSourceUpdateWrite(saved, read.version), onConditionFailed: () => new StaleVersionError() },
    ...extra,
  ]);
  return saved;
}
