// The onboarding function's entry: its handler, with the organisations an execution creates
// projected into the search engine before it answers.
import { projectWrittenOrganisations } from '@svc/organisations/read-your-writes';
import { onItemsWritten } from '@svc/table';

onItemsWritten(projectWrittenOrganisations);

export { handler } from '@svc/onboarding/lambda';
