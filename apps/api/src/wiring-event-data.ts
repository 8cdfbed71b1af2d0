import type { EventDataBuilders } from '@svc/events';
import { onboardingEventData } from '@svc/onboarding';
import { organisationEventData } from '@svc/organisations';
import { paymentEventData } from '@svc/payments';
import { receiptEventData } from '@svc/receipts';
import { reconciliationEventData } from '@svc/reconciliation';
import { subscriptionEventData } from '@svc/subscriptions';
import { useEventData } from '@svc/webhooks';

/** Every object's event data: its schema (published under `webhooks`) and its builder. */
export const EVENT_DATA: EventDataBuilders = {
  ...paymentEventData,
  ...subscriptionEventData,
  ...organisationEventData,
  ...reconciliationEventData,
  ...onboardingEventData,
  ...receiptEventData,
};

/** The stream publisher builds each event's `data` with the owning domain's builder. */
export function wireEventData(): void {
  useEventData(EVENT_DATA);
}
