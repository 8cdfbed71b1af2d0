import type { EventData, EventDataBuilders } from '@svc/events';
import { reportResponse, reportShape } from './domain/reports';
import { reportRecordSchema } from './repository/report-repository';

/** The `data` of reconciliation report events: the report as GET returns it. */
export const reconciliationEventData: EventDataBuilders = {
  reconciliation_report: {
    schema: reportResponse,
    build: async (_event, item) => reportShape(reportRecordSchema.parse(item)),
  } satisfies EventData<typeof reportResponse>,
};
