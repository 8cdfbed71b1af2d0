// The billing worker's entry: its handler, with each charge's payment and the subscription it
// settles projected into the search engine as they are written, and the portal that builds the
// charge reminders' mails and links.
import { projectWrittenPayments } from '@svc/payments/read-your-writes';
import { projectWrittenSubscriptions } from '@svc/subscriptions/read-your-writes';
import { onItemsWritten } from '@svc/table';
import { wireReminders } from './wiring-reminders';

onItemsWritten(projectWrittenPayments);
onItemsWritten(projectWrittenSubscriptions);
wireReminders();

export { handler } from '@svc/subscriptions/billing-worker';
