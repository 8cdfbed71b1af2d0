import { projectWrittenOrganisations } from '@svc/organisations/read-your-writes';
import { projectWrittenPayments } from '@svc/payments/read-your-writes';
import { warmUpOnOpen } from '@svc/sql';
import { projectWrittenSubscriptions } from '@svc/subscriptions/read-your-writes';
import { onItemsWritten } from '@svc/table';
import { wireEventData } from './wiring-event-data';
import { wirePayments } from './wiring-payments';
import { wireReminders } from './wiring-reminders';

/**
 * Everything a process that runs every domain needs, handed over as values: the local runtime,
 * the seed, the tests. Each Lambda entry (`*-lambda.ts`) hands over only what its own code needs:
 *
 * - payments reaches subscriptions through its port (`wirePayments`);
 * - subscriptions reaches the portal for charge reminders through its port (`wireReminders`);
 * - the stream publisher builds each event's `data` with the owning domain's builder
 *   (`wireEventData`);
 * - whoever writes payments, subscriptions or organisations has them projected into the search
 *   engine before it answers (`onItemsWritten`, read-your-writes for searches);
 * - the embedded engine runs each domain's warm-up searches when it opens (`warmUpOnOpen`; Aurora
 *   keeps its caches in the server and needs none). Loaded at the open, not before.
 *
 * No module registers anything when it is imported. Idempotent.
 */
export function wireDomains(): void {
  wirePayments();
  wireReminders();
  wireEventData();
  onItemsWritten(projectWrittenPayments);
  onItemsWritten(projectWrittenSubscriptions);
  onItemsWritten(projectWrittenOrganisations);
  warmUpOnOpen('payments', async (db) => (await import('@svc/payments/search')).warmUpPaymentSearch(db));
  warmUpOnOpen('subscriptions', async (db) => (await import('@svc/subscriptions/search')).warmUpSubscriptionSearch(db));
}
