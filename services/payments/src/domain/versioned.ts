import { ConflictError, now } from '@svc/core';
import { type GuardedWrite, retryOnConflict as retryWrites, StaleVersionError, transactWrite } from '@svc/table';
import { type PaymentRecord, paymentUpdateWrite } from '../repository/payment-repository';
import { type PaymentSourceRecord, paymentSourceUpdateWrite } from '../repository/payment-source-repository';

/** Runs a read-check-write step until its guarded write lands (see @svc/table). */
export function retryOnConflict<T>(step: () => Promise<T>): Promise<T> {
  return retryWrites(step, () => new ConflictError('Too many concurrent changes; try again'));
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
