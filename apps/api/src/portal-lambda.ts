// The donor portal's entry: its handler, with the subscriptions a donor changes projected into the
// search engine before it answers (a search right after a change finds it), and payments reaching
// subscriptions through their port (a new payment method is set up as payments sets one up).
import { projectWrittenSubscriptions } from '@svc/subscriptions/read-your-writes';
import { onItemsWritten } from '@svc/table';
import { wirePayments } from './wiring-payments';

wirePayments();
onItemsWritten(projectWrittenSubscriptions);

export { handler } from '@svc/portal/lambda';
