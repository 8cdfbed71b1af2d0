import { useSubscriptions } from '@svc/payments';
import { subscriptionsForPayments } from '@svc/subscriptions';

/** Payments reaches subscriptions through its port (a payment that starts or settles one). */
export function wirePayments(): void {
  useSubscriptions(subscriptionsForPayments);
}
