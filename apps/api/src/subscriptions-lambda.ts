// The subscriptions function's entry: its handler, with the plans and subscriptions it writes,
// the payments a charge taken now makes, and anything it writes into an organisation's partition
// (the default-plan marker) projected into the search engine before it answers.
import { projectWrittenOrganisations } from '@svc/organisations/read-your-writes';
import { projectWrittenPayments } from '@svc/payments/read-your-writes';
import { projectWrittenSubscriptions } from '@svc/subscriptions/read-your-writes';
import { onItemsWritten } from '@svc/table';

onItemsWritten(projectWrittenSubscriptions);
onItemsWritten(projectWrittenPayments);
onItemsWritten(projectWrittenOrganisations);

export { handler } from '@svc/subscriptions/lambda';
