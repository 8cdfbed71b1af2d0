// The billing worker's entry: its handler, with each charge's payment and the subscription it
// settles projected into the search engine as they are written.
import { projectWrittenPayments } from '@svc/payments/read-your-writes';
import { projectWrittenSubscriptions } from '@svc/subscriptions/read-your-writes';
import { onItemsWritten } from '@svc/table';

onItemsWritten(projectWrittenPayments);
onItemsWritten(projectWrittenSubscriptions);

export { handler } from '@svc/subscriptions/billing-worker';
