// The payments function's entry: the domain's handler, with the subscriptions domain reached
// through its port, and the payments and subscriptions it writes projected into the search engine
// before it answers.
import { projectWrittenPayments } from '@svc/payments/read-your-writes';
import { projectWrittenSubscriptions } from '@svc/subscriptions/read-your-writes';
import { onItemsWritten } from '@svc/table';
import { wirePayments } from './wiring-payments';

wirePayments();
onItemsWritten(projectWrittenPayments);
onItemsWritten(projectWrittenSubscriptions);

export { handler } from '@svc/payments/lambda';
