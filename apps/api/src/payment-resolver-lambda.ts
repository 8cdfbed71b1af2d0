// The payment resolver's entry: a payment it settles may start a subscription or pay an invoice;
// both are projected into the search engine as they are written.
import { projectWrittenPayments } from '@svc/payments/read-your-writes';
import { projectWrittenSubscriptions } from '@svc/subscriptions/read-your-writes';
import { onItemsWritten } from '@svc/table';
import { wirePayments } from './wiring-payments';

wirePayments();
onItemsWritten(projectWrittenPayments);
onItemsWritten(projectWrittenSubscriptions);

export { handler } from '@svc/payments/payment-resolver';
