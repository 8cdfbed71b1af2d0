import { useSubscriptions } from '@svc/payments';
import { subscriptionsForPayments } from '@svc/subscriptions';

/**
 * The links between domains that would otherwise be import cycles, made once per process by
 * each composition root: every Lambda entry that runs payments code, the local runtime and the
 * test setup. Idempotent.
 */
export function wireDomains(): void {
  useSubscriptions(subscriptionsForPayments);
}
