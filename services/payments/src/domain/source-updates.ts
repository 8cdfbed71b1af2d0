import { newEvent } from '@svc/events';
import { retryOnConflict } from '@svc/table';
import { findPaymentSource, type PaymentSourceRecord } from '../repository/payment-source-repository';
import { saveSourceVersion } from './versioned';

/**
 * A saved instrument the provider will no longer charge (a SEPA mandate its donor revoked):
 * `inactive` with the reason, announced as `svc.payments.payment_source.deactivated`; later
 * charges of it fail as `payment_source_unavailable`. Safe twice: only an active source changes.
 */
export function deactivateSource(uuid: string, reason: string): Promise<PaymentSourceRecord | undefined> {
  return retryOnConflict(async () => {
    const source = await findPaymentSource(uuid);
    if (source?.status !== 'active') return source;
    return saveSourceVersion(source, {
      ...source,
      status: 'inactive',
      status_reason: reason,
      events: [
        newEvent({
          name: 'svc.payments.payment_source.deactivated',
          object: 'payment_source',
          object_uuid: source.uuid,
          organisation_uuid: source.organisation_uuid,
          account_uuid: source.account_uuid,
          sequence: 1,
        }),
      ],
    });
  });
}
