import { now } from '@svc/core';
import { type GuardedWrite, transactWrite, versioned } from '@svc/table';
import { type PaymentRecord, paymentUpdateWrite, withSucceededAt } from '../repository/payment-repository';
import { type PaymentSourceRecord, paymentSourceUpdateWrite } from '../repository/payment-source-repository';

/**
 * Writes `next` (version + 1) guarded by the version of `read`, with any extra items; the record
 * answered is the one stored (`succeeded_at` set if it just succeeded).
 */
export async function savePaymentVersion(
  read: PaymentRecord,
  next: PaymentRecord,
  extra: GuardedWrite[] = [],
): Promise<PaymentRecord> {
  const at = now();
  const saved = withSucceededAt({ ...next, version: read.version + 1, updated: at }, at);
  await transactWrite([versioned(paymentUpdateWrite(saved, read.version)), ...extra]);
  return saved;
}

export async function saveSourceVersion(
  read: PaymentSourceRecord,
  next: PaymentSourceRecord,
  extra: GuardedWrite[] = [],
): Promise<PaymentSourceRecord> {
  const saved = { ...next, version: read.version + 1 };
  await transactWrite([versioned(paymentSourceUpdateWrite(saved, read.version)), ...extra]);
  return saved;
}
