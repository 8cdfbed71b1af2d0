import { onboardingEventData } from '@svc/onboarding';
import { organisationEventData } from '@svc/organisations';
import { paymentEventData } from '@svc/payments';
import { reconciliationEventData } from '@svc/reconciliation';
import { subscriptionEventData } from '@svc/subscriptions';
import { useEventData } from '@svc/webhooks';

/** The stream publisher builds each event's `data` with the owning domain's builder. */
export function wireEventData(): void {
  useEventData({
    ...paymentEventData,
    ...subscriptionEventData,
    ...organisationEventData,
    ...reconciliationEventData,
    ...onboardingEventData,
  });
}
