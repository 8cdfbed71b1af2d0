import { onboardingEventData } from '@svc/onboarding';
import { organisationEventData } from '@svc/organisations';
import { paymentEventData, useSubscriptions } from '@svc/payments';
import { reconciliationEventData } from '@svc/reconciliation';
import { subscriptionEventData, subscriptionsForPayments } from '@svc/subscriptions';
import { useEventData } from '@svc/webhooks';

/**
 * The links between domains that would otherwise be imports against the layering, made once per
 * process by each composition root (every Lambda entry that needs them, the local runtime, the
 * test setup): payments reaches subscriptions through its port, and the stream publisher builds
 * each event's `data` with the owning domain's builder. Idempotent.
 */
export function wireDomains(): void {
  useSubscriptions(subscriptionsForPayments);
  useEventData({
    ...paymentEventData,
    ...subscriptionEventData,
    ...organisationEventData,
    ...reconciliationEventData,
    ...onboardingEventData,
  });
}
