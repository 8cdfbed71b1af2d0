// The webhooks function's entry: its handler. It writes into organisations' partitions (the
// one-endpoint-per-URL marker), so it projects any organisation it writes, as every function
// allowed to write there does (the infra test "read-your-writes" holds each to it).
import { projectWrittenOrganisations } from '@svc/organisations/read-your-writes';
import { onItemsWritten } from '@svc/table';

onItemsWritten(projectWrittenOrganisations);

export { handler } from '@svc/webhooks/lambda';
