import { reminderWrites } from '@svc/portal';
import { useReminders } from '@svc/subscriptions/reminders';

/**
 * Subscriptions reaches the donor portal through its ReminderPort: the billing worker's charge
 * reminder (a mail with a portal link, contract section 12) is built by the portal, which owns
 * links and depends on subscriptions. Every process that runs the billing worker wires it.
 */
export function wireReminders(): void {
  useReminders({ reminderWrites });
}
